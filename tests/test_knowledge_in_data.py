"""Knowledge lives in data, not in code: the kernel package's two names are spelled once (facts.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from stackcheck.facts import KERNEL_PACKAGES

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "stackcheck"
#: phase 2 of issue 19 moves their literals (the Context.lookup resolver table, typed manifests)
NOT_YET = {"context.py", "verdicts.py"}


def _string_constants() -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in NOT_YET:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append((rel, node.lineno, node.value))
    return out


def test_the_kernel_package_pair_is_spelled_once() -> None:
    assert set(KERNEL_PACKAGES) == {"sgl-kernel", "sglang-kernel"}
    where = [rel for rel, _, text in _string_constants() if text in KERNEL_PACKAGES]
    assert where == ["facts.py", "facts.py"], where
