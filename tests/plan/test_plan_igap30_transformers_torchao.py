"""igap30: the plan's SGLang step moves transformers and torchao where the target release pins them (components.json
`requires`, read from each sglang wheel's METADATA: transformers==X in 0.5.1-0.5.23, torchao==0.9.0 in 0.5.1-0.5.10 and
0.17.0 in 0.5.11-0.5.17), as `pip install sglang==R` does: the step says so, and the facts after the plan, on which
the stack checks are judged again, hold the pinned versions.

On the parent neither was in the data: a box with torchao 0.12.0 beside transformers 4.57.1 (which imports torchao on
every launch) planned to SGLang 0.5.10 kept torchao 0.12.0 and transformers 4.57.1 in the facts after the plan, so
the plan left torchao-import failing (torchao-private-import-012: `import torchao` 0.12.0 fails under torch 2.9+) and
named no step for it, though pip replaces both. Boxes from tests/plan_cases/writeup-before-default."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import Plan
from stackcheck.plan.planner import plan_and_facts
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all, evaluate_check

BOX = Path(__file__).parent.parent / "plan_cases" / "writeup-before-default" / "facts.json"
_MANIFESTS = load_manifests([], env={})


def _facts(transformers: str | None, torchao: str | None) -> dict[str, Any]:
    facts: dict[str, Any] = copy.deepcopy(json.loads(BOX.read_text())["facts"])
    pkgs = facts["packages"]
    for name, version in (("transformers", transformers), ("torchao", torchao)):
        if version is not None:
            pkgs[name] = {"installed": True, "version": version, "dist_version": version,
                          "location": pkgs["sglang"]["location"], "editable": False, "copies": 1}  # fmt: skip
    return facts


def _plan(facts: dict[str, Any], to: str | None) -> tuple[Plan, Any]:
    ctx = Context(facts=facts, manifests=_MANIFESTS)  # type: ignore[arg-type]  # a facts document, read as JSON
    features, _ = evaluate_all(ctx)
    return plan_and_facts(ctx, features, pins={"sglang": to} if to else None, upstream=False)


def _check(facts: dict[str, Any], check_id: str) -> str:
    check = next(c for c in _MANIFESTS.checks if c["id"] == check_id)
    return str(evaluate_check(check, Context(facts=facts, manifests=_MANIFESTS)).get("status"))  # type: ignore[arg-type]


def test_a_torchao_that_fails_under_the_box_is_moved_by_the_sglang_step() -> None:
    facts = _facts("4.57.1", "0.12.0")
    assert _check(facts, "torchao-import") == "failed"  # torch 2.9.1: `import torchao` 0.12.0 fails, every launch
    plan, after = _plan(facts, "0.5.10")
    assert after is not None
    assert after["packages"]["torchao"]["version"] == "0.9.0", after["packages"]["torchao"]
    assert after["packages"]["transformers"]["version"] == "5.3.0", after["packages"]["transformers"]
    step = next(s for s in plan.steps if s.component == "sglang")
    assert any("torchao 0.12.0 with 0.9.0 (sglang 0.5.10 pins torchao==0.9.0)" in w for w in step.warnings)
    assert any("transformers 4.57.1 with 5.3.0 (sglang 0.5.10 pins transformers==5.3.0)" in w for w in step.warnings)
    assert "torchao-import" not in [c.id for c in plan.still_failing_checks], plan.still_failing_checks
    assert _check(after, "torchao-import") != "failed"


@pytest.mark.parametrize(
    ("to", "transformers", "torchao"),
    [("0.5.14", "5.8.1", "0.17.0"), ("0.5.23", "5.19.0", "0.12.0"), (None, "5.19.0", "0.12.0")],
)
def test_the_target_pins_decide(to: str | None, transformers: str, torchao: str) -> None:
    # 0.5.18-0.5.23 pin no torchao: pip leaves 0.12.0, which transformers 5.x no longer imports (only torchao >= 0.15)
    plan, after = _plan(_facts("4.57.1", "0.12.0"), to)
    assert after is not None and plan.error is None
    assert after["packages"]["transformers"]["version"] == transformers
    assert after["packages"]["torchao"]["version"] == torchao
    assert not [c.id for c in plan.still_failing_checks if c.id in ("torchao-import", "sglang-start-imports")]


def test_a_transformers_at_the_pin_is_not_named() -> None:
    plan, _ = _plan(_facts("5.19.0", None), "0.5.23")
    step = next(s for s in plan.steps if s.component == "sglang")
    assert not any("transformers" in w for w in step.warnings), step.warnings
