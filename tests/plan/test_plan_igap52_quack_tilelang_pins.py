"""SGLang's requirements of quack-kernels, tilelang and nvidia-mathdx (components.json `requires`, read in every
release's METADATA: tests/knowledge/test_igap52_sglang_quack_tilelang_pins.py) reach the planner: `pip install
sglang==R` installs them, so a plan that installs SGLang on a box whose packages list names quack-kernels or tilelang
as not installed no longer leaves attention-fa4 "still blocked" by rule quack-kernels-installed (a false alarm before:
the plan's facts kept them absent). An exact pin is installed at its version (solver.pinned_additions), a ranged one
(sglang 0.5.17's quack-kernels>=0.6.1) as installed with its version not known (solver.ranged_additions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan.planner import plan_and_facts
from stackcheck.plan.solver import pinned_additions, ranged_additions
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all, evaluate_feature

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23, torch 2.14.1+cu130 on cc 9.0
MANIFESTS = load_manifests([], env={})


def _release(version: str) -> dict[str, Any]:
    return cast("dict[str, Any]", next(r for r in MANIFESTS.releases("sglang") if r["version"] == version))


def _plan(tmp_path: Path, pins: dict[str, str] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The plan (and the facts after it) of the H200 box with SGLang, quack-kernels and tilelang read by the
    packages probe as not installed."""
    doc = json.loads(H200.read_text(encoding="utf-8"))
    packages = doc["facts"]["packages"]
    packages["sglang"] = {"installed": False}
    packages["quack-kernels"] = {"installed": False}
    packages["tilelang"] = {"installed": False}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    ctx = Context(facts=load_facts_file(str(path)), manifests=MANIFESTS)
    features, _ = evaluate_all(ctx)
    plan, after = plan_and_facts(ctx, features, pins=pins)
    assert after is not None
    return dict(plan.to_json()), cast("dict[str, Any]", after)


def _sglang_step(plan: dict[str, Any]) -> dict[str, Any]:
    return cast("dict[str, Any]", next(s for s in plan["steps"] if s["component"] == "sglang"))


def test_the_manifest_holds_the_requirements_as_read() -> None:
    assert _release("0.5.7")["requires"].keys().isdisjoint({"quack-kernels", "tilelang", "nvidia-mathdx"})
    assert _release("0.5.9")["requires"]["quack-kernels"] == "==0.2.4"
    assert _release("0.5.17")["requires"]["quack-kernels"] == ">=0.6.1"
    r23 = _release("0.5.23")["requires"]
    assert (r23["quack-kernels"], r23["tilelang"], r23["nvidia-mathdx"]) == ("==0.6.5", "==0.1.12", "==25.6.0")


def test_exact_and_ranged_requirements_of_packages_listed_absent() -> None:
    absent = {"installed": False}
    packages = {"quack-kernels": absent, "tilelang": absent, "nvidia-mathdx": absent}
    assert pinned_additions(_release("0.5.23"), packages) == {
        "quack-kernels": "0.6.5",
        "tilelang": "0.1.12",
        "nvidia-mathdx": "25.6.0",
    }
    assert ranged_additions(_release("0.5.23"), packages) == {}
    assert pinned_additions(_release("0.5.17"), packages) == {"tilelang": "0.1.11", "nvidia-mathdx": "25.6.0"}
    assert ranged_additions(_release("0.5.17"), packages) == {"quack-kernels": ">=0.6.1"}
    # installed, or not named by the facts: neither (an installed one is pinned_companions' or kept)
    assert ranged_additions(_release("0.5.17"), {"quack-kernels": {"installed": True, "version": "0.6.1"}}) == {}
    assert ranged_additions(_release("0.5.17"), {}) == {}


def test_a_plan_to_0_5_23_installs_quack_and_tilelang_and_fa4_is_not_still_blocked(tmp_path: Path) -> None:
    plan, after = _plan(tmp_path)
    step = _sglang_step(plan)
    assert step["to"] == "0.5.23"
    warnings = " | ".join(step.get("warnings") or [])
    assert "pip also installs quack-kernels 0.6.5 (sglang 0.5.23 pins quack-kernels==0.6.5)" in warnings
    assert "pip also installs tilelang 0.1.12 (sglang 0.5.23 pins tilelang==0.1.12)" in warnings
    assert "attention-fa4" not in {b["feature"] for b in plan["still_blocked"]}, plan["still_blocked"]
    assert after["packages"]["quack-kernels"]["version"] == "0.6.5"
    assert after["packages"]["tilelang"]["version"] == "0.1.12"


def test_tilelang_installed_passes_on_the_planned_stack_with_the_fused_topk(tmp_path: Path) -> None:
    """Rule tilelang-installed reads the launch (SGLANG_MINICPM_FUSE_TOPK on): judged on the facts after the plan."""
    _, after = _plan(tmp_path)
    feature = next(f for f in MANIFESTS.features if f["id"] == "attention-minicpm-sparse")
    ctx = Context(facts=cast("Any", after), manifests=MANIFESTS, launch={"minicpm_fuse_topk": True})
    reasons = {r.get("rule"): r for r in evaluate_feature(feature, ctx)["reasons"]}
    assert reasons["tilelang-installed"]["result"] == "pass", reasons["tilelang-installed"]


def test_a_plan_to_0_5_17_installs_quack_of_its_range_with_its_version_unknown(tmp_path: Path) -> None:
    plan, after = _plan(tmp_path, pins={"sglang": "0.5.17"})
    step = _sglang_step(plan)
    assert step["to"] == "0.5.17"
    warnings = " | ".join(step.get("warnings") or [])
    assert "pip also installs quack-kernels (sglang 0.5.17 requires quack-kernels>=0.6.1;" in warnings, warnings
    assert "pip also installs tilelang 0.1.11" in warnings
    quack = after["packages"]["quack-kernels"]
    assert quack["installed"] is True and quack["version"] is None
    assert "quack-kernels>=0.6.1" in quack["error"]
    assert "attention-fa4" not in {b["feature"] for b in plan["still_blocked"]}, plan["still_blocked"]


@pytest.mark.parametrize("version", ["0.5.17", "0.5.23"])
def test_the_sglang_pins_check_is_not_failed_by_them_after_the_plan(tmp_path: Path, version: str) -> None:
    """Their pins no longer fail SGLang's pin check after the step (a ranged one is unknown, never failed)."""
    plan, _ = _plan(tmp_path, pins={"sglang": version})
    failing = {c["check"] for c in plan.get("still_failing_checks") or []}
    assert "sglang-pins" not in failing
