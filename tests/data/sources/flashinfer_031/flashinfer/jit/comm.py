"""Synthetic JIT module without the comm generator."""


def gen_other_module():
    return None
