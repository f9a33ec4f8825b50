"""A torch step to another CUDA major and the NCCL wheels (igap52). torch's CUDA build requires the NCCL wheel of its
own major at one release (its METADATA: torch 2.14.1+cu130 'Requires-Dist: nvidia-nccl-cu13==2.30.7'; components.json,
the variant's `nccl`), so `pip install torch==2.14.1 --index-url .../cu130` on a box with nvidia-nccl-cu12 installs
nvidia-nccl-cu13 and leaves nvidia-nccl-cu12: both write nvidia/nccl/lib/libnccl.so.2 (check nccl, rule one-nccl-wheel).
Before, the plan's facts kept nvidia-nccl-cu12 alone beside the CUDA 13 torch (no rule judges that pair) and no step
removed it. Now the torch step uninstalls the other major's wheel first (uninstalling it after would delete the new
wheel's copy of the shared file), and reinstalls torch's own wheel where pip would keep it at the pin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan.hypothetical import torch_nccl_step
from stackcheck.plan.planner import plan_and_facts
from stackcheck.plan.solver import Choice
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all, evaluate_check

ROOT = Path(__file__).resolve().parent.parent.parent
BEFORE = ROOT / "tests" / "plan_cases" / "writeup-before-default" / "facts.json"  # torch 2.9.1+cu128, nccl-cu12 2.27.5
AFTER = ROOT / "tests" / "plan_cases" / "writeup-after-default" / "facts.json"  # torch 2.9.1+cu130, nccl-cu13 2.27.7
MANIFESTS = load_manifests([], env={})
NCCL = next(c for c in MANIFESTS.checks if c["id"] == "nccl")


def _torch(version: str, variant: str, cuda: str) -> Choice:
    release = next(r for r in MANIFESTS.releases("torch") if r["version"] == version)
    return Choice("torch", "torch", version, variant, cuda, release=release)


def _plan(
    path: Path, tmp_path: Path, packages: dict[str, Any] | None = None, **kw: Any
) -> tuple[dict[str, Any], dict[str, Any]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["facts"]["packages"].update(packages or {})
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(doc), encoding="utf-8")
    ctx = Context(facts=load_facts_file(str(facts)), manifests=MANIFESTS)
    features, _ = evaluate_all(ctx)
    plan, after = plan_and_facts(ctx, features, **kw)
    assert after is not None
    return dict(plan.to_json()), cast("dict[str, Any]", after)


def _torch_step(plan: dict[str, Any]) -> dict[str, Any]:
    return cast("dict[str, Any]", next(s for s in plan["steps"] if s["component"] == "torch"))


def _rules(after: dict[str, Any]) -> dict[str, str]:
    verdict = evaluate_check(NCCL, Context(facts=cast("Any", after), manifests=MANIFESTS))
    return {str(r.get("rule")): str(r.get("result")) for r in verdict["reasons"]}


def test_the_step_function() -> None:
    cu130 = _torch("2.14.1", "cu130", "13.0")
    cu12 = {"installed": True, "version": "2.27.5"}
    step = torch_nccl_step(cu130, {"nvidia-nccl-cu12": cu12, "nvidia-nccl-cu13": {"installed": False}})
    assert step is not None and (step.wheel, step.pin, step.remove, step.reinstall) == (
        "nvidia-nccl-cu13",
        "2.30.7",
        "nvidia-nccl-cu12",
        False,
    )
    assert step.entry is not None and step.entry["version"] == "2.30.7" and step.read
    # torch's wheel not named by the facts: it may be at the pin already, which pip keeps with its file deleted by the
    # removal: reinstalled after torch
    step = torch_nccl_step(cu130, {"nvidia-nccl-cu12": cu12})
    assert step is not None and step.remove == "nvidia-nccl-cu12" and step.reinstall
    # both installed before the step: the duplicate is the box's, left to the check's fix (as before igap52)
    step = torch_nccl_step(
        cu130, {"nvidia-nccl-cu12": cu12, "nvidia-nccl-cu13": {"installed": True, "version": "2.28.9"}}
    )
    assert step is not None and step.remove is None and step.entry is not None and step.entry["version"] == "2.30.7"
    both = {"nvidia-nccl-cu12": cu12, "nvidia-nccl-cu13": {"installed": True, "version": "2.30.7"}}
    assert torch_nccl_step(cu130, both) is None
    # nothing to do: its own wheel at the pin, no other wheel
    assert torch_nccl_step(cu130, {"nvidia-nccl-cu13": {"installed": True, "version": "2.30.7"}}) is None
    # the reverse move: a CUDA 12 build removes the cu13 wheel
    cu128 = _torch("2.9.1", "cu128", "12.8")
    step = torch_nccl_step(
        cu128, {"nvidia-nccl-cu13": {"installed": True, "version": "2.27.7"}, "nvidia-nccl-cu12": {"installed": False}}
    )
    assert step is not None and (step.wheel, step.pin, step.remove) == (
        "nvidia-nccl-cu12",
        "2.27.5",
        "nvidia-nccl-cu13",
    )
    # a build whose pin the manifests do not record: no change (as before)
    cu126 = _torch("2.14.1", "cu126", "12.6")
    assert torch_nccl_step(cu126, {"nvidia-nccl-cu13": {"installed": True, "version": "2.30.7"}}) is None


def test_the_cu130_torch_step_uninstalls_nvidia_nccl_cu12_first(tmp_path: Path) -> None:
    plan, after = _plan(
        BEFORE, tmp_path, {"nvidia-nccl-cu13": {"installed": False}}
    )  # (as the packages probe lists it)
    step = _torch_step(plan)
    assert step["to"] == "2.14.1+cu130"
    assert step["commands"][0] == "pip uninstall -y nvidia-nccl-cu12"
    assert step["commands"][1].startswith("pip install torch==2.14.1 ")
    assert len(step["commands"]) == 2  # torch's wheel installed fresh after the removal: no reinstall
    warning = next(w for w in step["warnings"] if "nvidia-nccl-cu12" in w)
    assert "torch 2.14.1+cu130 requires nvidia-nccl-cu13==2.30.7 (the Requires-Dist of its wheel's METADATA" in warning
    assert "nvidia-nccl-cu12 2.27.5" in warning and "one-nccl-wheel" in warning
    assert after["packages"]["nvidia-nccl-cu12"] == {"installed": False}
    assert after["packages"]["nvidia-nccl-cu13"]["version"] == "2.30.7"
    rules = _rules(after)
    assert rules["one-nccl-wheel"] == "pass" and rules["torch-nccl-wheel-pin-cu13"] == "pass", rules


def test_the_facts_after_the_plan_held_the_cu12_wheel_alone_before(tmp_path: Path) -> None:
    """What the old model left: a CUDA 13 torch beside nvidia-nccl-cu12 alone, which no rule of the check judges (so
    the plan said nothing), while the box would hold both wheels; the model now says what pip does."""
    _, after = _plan(BEFORE, tmp_path)
    stale = {**after, "packages": {**after["packages"], "nvidia-nccl-cu12": {"installed": True, "version": "2.27.5"}}}
    stale["packages"]["nvidia-nccl-cu13"] = {"installed": False}
    judged = {k: v for k, v in _rules(stale).items() if k.startswith(("one-nccl", "torch-nccl"))}
    assert set(judged.values()) <= {"pass", "skip", "not-applicable"}, judged  # nothing fails: the gap


def test_both_wheels_before_the_step_stay_the_checks_fix(tmp_path: Path) -> None:
    """Both wheels on the box before the plan: the duplicate is not the step's doing; the step removes nothing and the
    nccl check stays failing after the plan with its fix (tests/plan/test_plan_still_failing_checks.py, iadv)."""
    pkgs = {"nvidia-nccl-cu13": {"installed": True, "version": "2.30.7"}}
    plan, after = _plan(BEFORE, tmp_path, pkgs)
    assert not [c for c in _torch_step(plan)["commands"] if "nvidia-nccl" in c]
    assert after["packages"]["nvidia-nccl-cu12"]["installed"] is True
    assert "nccl" in {c["check"] for c in plan.get("still_failing_checks") or []}


def test_torchs_wheel_not_named_is_reinstalled_after_the_removal(tmp_path: Path) -> None:
    """The plan case's box names nvidia-nccl-cu12 only: nvidia-nccl-cu13 may be there at the pin."""
    assert "nvidia-nccl-cu13" not in json.loads(BEFORE.read_text(encoding="utf-8"))["facts"]["packages"]
    plan, after = _plan(BEFORE, tmp_path)
    step = _torch_step(plan)
    assert step["commands"][0] == "pip uninstall -y nvidia-nccl-cu12"
    assert step["commands"][-1] == "pip install --force-reinstall --no-deps nvidia-nccl-cu13==2.30.7"
    assert after["packages"]["nvidia-nccl-cu13"]["version"] == "2.30.7"


def test_a_cu128_torch_step_on_a_cuda13_box_uninstalls_the_cu13_wheel(tmp_path: Path) -> None:
    plan, after = _plan(AFTER, tmp_path, pins={"torch": "2.9.1+cu128", "sglang": "0.5.9"}, hold=["driver"])
    step = _torch_step(plan)
    assert step["to"] == "2.9.1+cu128"
    assert step["commands"][0] == "pip uninstall -y nvidia-nccl-cu13"
    assert after["packages"]["nvidia-nccl-cu13"] == {"installed": False}
    assert after["packages"]["nvidia-nccl-cu12"]["version"] == "2.27.5"
    assert _rules(after)["one-nccl-wheel"] == "pass"


@pytest.mark.parametrize("case", ["writeup-after-default", "no-driver-default", "h200-newest-current"])
def test_no_removal_where_the_box_has_no_wheel_of_the_other_major(case: str, tmp_path: Path) -> None:
    plan, _ = _plan(ROOT / "tests" / "plan_cases" / case / "facts.json", tmp_path)
    for step in plan["steps"]:
        assert not any("nvidia-nccl" in c for c in step["commands"]), step
