"""Which architectures one SGLang release's ModelConfig makes MLA, read from the source of its
sglang/srt/configs/model_config.py (tests/launch/test_mla_architectures_registry.py checks manifests/preflight.json
model.mla_architectures with it).

ModelConfig decides the attention kind in one if/elif chain: each branch tests `"Arch" in
self.hf_config.architectures` (any entry of config.json's list), alone or with a condition on the text config, and
the branches that assign `self.attention_arch = AttentionArch.MLA` make the model MLA. The first branch of the chain
that names an architecture decides it (an earlier non-MLA branch would keep it MHA). A branch shape this reader does
not know fails loudly, so that a release that changes the shape is read by a person, not skipped."""

from __future__ import annotations

import ast
import re
from typing import Any

ARCHS = "self.hf_config.architectures"
# the conditions of the text config that the MLA branches put beside an architecture, as preflight.json spells them
CONDITIONS = (
    (re.compile(r"getattr\(self\.hf_text_config, '(\w+)', True\)"), "unless_text_config_false"),
    (re.compile(r"getattr\(self\.hf_text_config, '(\w+)', None\) is not None"), "needs_text_config"),
)


class UnknownShape(Exception):
    pass


def _sets_mla(body: list[ast.stmt]) -> bool:
    for stmt in body:
        if not isinstance(stmt, ast.Assign) or not isinstance(stmt.value, ast.Attribute):
            continue
        if stmt.value.attr == "MLA" and any(
            isinstance(t, ast.Attribute) and t.attr == "attention_arch" for t in stmt.targets
        ):
            return True
    return False


def _arch(node: ast.expr) -> str | None:
    if (
        isinstance(node, ast.Compare)
        and len(node.ops) == 1
        and isinstance(node.ops[0], ast.In)
        and isinstance(node.left, ast.Constant)
        and isinstance(node.left.value, str)
        and ast.unparse(node.comparators[0]) == ARCHS
    ):
        return node.left.value
    return None


def _condition(node: ast.expr) -> dict[str, str]:
    text = ast.unparse(node)
    for pattern, key in CONDITIONS:
        m = pattern.fullmatch(text)
        if m:
            return {key: m.group(1)}
    raise UnknownShape(f"condition {text}")


def _terms(test: ast.expr) -> list[tuple[str, dict[str, str]]]:
    """(architecture, condition) for each `or` term of a branch's test."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    out: list[tuple[str, dict[str, str]]] = []
    for term in terms:
        name = _arch(term)
        if name is not None:
            out.append((name, {}))
            continue
        if isinstance(term, ast.BoolOp) and isinstance(term.op, ast.And) and len(term.values) == 2:
            name = _arch(term.values[0])
            if name is not None:
                out.append((name, _condition(term.values[1])))
                continue
        raise UnknownShape(f"term {ast.unparse(term)}")
    return out


def mla_architectures(source: str) -> dict[str, dict[str, str]]:
    """{architecture: condition ({} when none)} for every architecture the release's ModelConfig makes MLA."""
    tree = ast.parse(source)
    seen: set[int] = set()
    out: dict[str, dict[str, str]] = {}
    chains = 0
    total = sum(
        1
        for n in ast.walk(tree)
        if isinstance(n, ast.Assign)
        and isinstance(n.value, ast.Attribute)
        and n.value.attr == "MLA"
        and any(isinstance(t, ast.Attribute) and t.attr == "attention_arch" for t in n.targets)
    )
    found = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.If) or id(node) in seen:
            continue
        chain: list[ast.If] = []
        branch = node
        while True:
            seen.add(id(branch))
            chain.append(branch)
            if len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If):
                branch = branch.orelse[0]
            else:
                break
        if not any(_sets_mla(b.body) for b in chain):
            continue
        chains += 1
        decided: dict[str, Any] = {}
        for b in chain:
            mla = _sets_mla(b.body)
            found += mla
            try:
                terms = _terms(b.test)
            except UnknownShape:
                if mla:
                    raise
                continue  # a non-MLA branch that names no architecture the plain way
            for name, cond in terms:
                if name in decided:
                    if decided[name] is not None and decided[name][1]:
                        raise UnknownShape(f"{name}: named again after a conditional MLA branch")
                    continue
                decided[name] = (mla, cond)
        out.update({name: cond for name, (mla, cond) in decided.items() if mla})
    if chains != 1 or found != total:
        raise UnknownShape(f"{chains} MLA chains, {found} of {total} MLA assignments in them")
    return out
