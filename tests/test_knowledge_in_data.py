"""Knowledge lives in data, not in code: the kernel package's two names are spelled once (facts.py), no GPU
family is named in the package's code, and which GPUs need the open kernel modules is architectures.json's
`kernel_modules` (the driver step's warning follows the data)."""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import KERNEL_PACKAGES, load_facts_file
from stackcheck.knowledge.loader import Manifests
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import make_plan
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "stackcheck"
_MANIFESTS = load_manifests([], env={})


def _string_constants() -> list[tuple[str, int, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                out.append((rel, node.lineno, node.value))
    return out


def test_the_kernel_package_pair_is_spelled_once() -> None:
    assert set(KERNEL_PACKAGES) == {"sgl-kernel", "sglang-kernel"}
    where = [rel for rel, _, text in _string_constants() if text in KERNEL_PACKAGES]
    assert where == ["facts/model.py", "facts/model.py"], where


def test_no_gpu_family_is_named_in_code() -> None:
    schema = json.loads((ROOT / "schemas" / "architectures.schema.json").read_text(encoding="utf-8"))
    families = {str(g).lower() for g in schema["$defs"]["architecture"]["properties"]["generation"]["enum"]}
    named = [(rel, line, text) for rel, line, text in _string_constants() if text.lower() in families]
    assert named == []


def _driver_warnings(case: str, manifests: Manifests, pins: dict[str, str] | None = None) -> list[str]:
    ctx = Context(facts=load_facts_file(str(ROOT / "tests" / "cases" / case / "facts.json")), manifests=manifests)
    features, _ = evaluate_all(ctx)
    step = next(s for s in make_plan(ctx, features, pins=pins).steps if s.component == "driver")
    return [w for w in step.warnings if "open kernel modules" in w]


def _with_kernel_modules(change: Any) -> Manifests:
    docs = copy.deepcopy(_MANIFESTS.docs)
    for arch in docs["architectures.json"]["architectures"]:
        change(arch)
    return Manifests(docs=docs, origins=_MANIFESTS.origins)


@pytest.mark.parametrize("case", ["writeup-before", "a800-driver535-sglang049"])
def test_the_open_modules_warning_follows_architectures_json(case: str) -> None:
    """The shipped data: Blackwell needs the open modules, Ampere does not. Moved in the data (the key on
    every architecture, or on none), the warning moves with it."""
    shipped = _driver_warnings(case, _MANIFESTS)
    if case == "writeup-before":  # RTX PRO 6000, sm120
        assert shipped == ["open kernel modules are required for Blackwell (the -open driver packages)"]
    else:  # A800, sm80
        assert shipped == []
    everywhere = _with_kernel_modules(lambda a: a.update(kernel_modules={"required": "open", "source": "LFS-R580"}))
    family = "Blackwell" if case == "writeup-before" else "Ampere"
    assert _driver_warnings(case, everywhere) == [
        f"open kernel modules are required for {family} (the -open driver packages)"
    ]
    nowhere = _with_kernel_modules(lambda a: a.pop("kernel_modules", None))
    assert _driver_warnings(case, nowhere) == []


def test_every_blackwell_box_is_told_about_the_open_modules() -> None:
    """A B200 moved to a driver branch whose note does not mention the open modules (590) is told too: the
    warning no longer depends on which prose note happens to say it."""
    assert _driver_warnings("b200", _MANIFESTS, {"driver": "590"}) == [
        "open kernel modules are required for Blackwell (the -open driver packages)"
    ]
