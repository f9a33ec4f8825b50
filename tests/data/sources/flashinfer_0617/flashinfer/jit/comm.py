"""Synthetic stand-in for a JIT spec module (stackcheck test data)."""


def build_spec(name, sources, supported_major_versions=None, extra=()):
    return (name, sources, supported_major_versions, extra)


def gen_other_module():
    return build_spec("other", ["a.cu"], supported_major_versions=[8])


def gen_trtllm_comm_module():
    flags = ["-O2"]
    return build_spec(
        "trtllm_comm",
        ["comm.cu"],
        supported_major_versions=[9, 10, 12],
        extra=flags,
    )
