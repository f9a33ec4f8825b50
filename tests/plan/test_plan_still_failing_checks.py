"""The plan judges every stack check on the facts after it (plan.still_failing_checks): a check that still fails
(a crash) is named with its failing rule, observed and required values, source and fix, so that a plan that leaves
the box unable to launch does not read as a clean one (iadv: nvidia-nccl-cu12 and -cu13 both installed on
b200-deepgemm-nvcc128 crash every tp > 1 launch whatever the upgrade). A check the plan's own steps fix is not named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import make_plan
from stackcheck.render.text import plan_commands
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

ROOT = Path(__file__).resolve().parent.parent.parent
NCCL_BOTH = ROOT / "tests" / "cases" / "b200-deepgemm-nvcc128" / "facts.json"
_MANIFESTS = load_manifests([], env={})


def _without_cu12(tmp_path: Path) -> Path:
    """The same box with the stray CUDA 12 NCCL wheel uninstalled (torch is a cu130 build)."""
    doc = json.loads(NCCL_BOTH.read_text(encoding="utf-8"))
    doc["facts"]["packages"]["nvidia-nccl-cu12"] = {"installed": False}
    out = tmp_path / "facts.json"
    out.write_text(json.dumps(doc), encoding="utf-8")
    return out


def _plan(path: Path) -> dict[str, Any]:
    ctx = Context(facts=load_facts_file(str(path)), manifests=_MANIFESTS)
    features, checks = evaluate_all(ctx)
    plan = dict(make_plan(ctx, features).to_json())
    plan["_box_checks"] = {str(c.get("id")): c.get("status") for c in checks}
    return plan


def test_a_check_that_still_fails_after_the_plan_is_named_with_its_rule_values_source_and_fix() -> None:
    plan = _plan(NCCL_BOTH)
    assert plan["steps"], "the box is planned an upgrade"
    failing = {c["check"]: c for c in plan.get("still_failing_checks") or []}
    assert "nccl" in failing
    nccl = failing["nccl"]
    assert nccl["effect"] == "crash"
    rule = next(r for r in nccl["failures"] if r["rule"] == "one-nccl-wheel")
    assert rule["observed"] is True
    assert rule["required"] == "not True"
    assert "ncclCommResume" in rule["message"]
    assert any("pytorch/pytorch/issues/186591" in str(s.get("url")) for s in rule["source"])
    assert "pip uninstall nvidia-nccl-cu12" in nccl["fix"]["text"]
    assert "--force-reinstall --no-deps nvidia-nccl-cu13" in nccl["fix"]["text"]  # the shared libnccl.so.2 back


def test_a_check_the_plan_fixes_is_not_named() -> None:
    """jit-toolchain fails on the box (CUDA 12.8 toolkit, DeepGEMM asserts 12.9); the plan's toolkit step fixes it:
    judged on the facts after the plan, not on the box's."""
    plan = _plan(NCCL_BOTH)
    assert plan["_box_checks"]["jit-toolchain"] == "failed"
    assert any(s["component"] == "cuda-toolkit" for s in plan["steps"])
    assert "jit-toolchain" not in {c["check"] for c in plan.get("still_failing_checks") or []}


def test_no_check_failing_after_the_plan_leaves_the_key_out(tmp_path: Path) -> None:
    plan = _plan(_without_cu12(tmp_path))
    assert plan["_box_checks"]["nccl"] != "failed"
    assert "still_failing_checks" not in plan


def test_the_plan_with_failing_checks_matches_the_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from stackcheck.knowledge.validate import _registry

    registry, _ = _registry()
    schema = json.loads((ROOT / "schemas" / "report.schema.json").read_text(encoding="utf-8"))
    sub = {**schema["$defs"]["plan"], "$defs": schema["$defs"], "$id": schema["$id"]}
    plan = _plan(NCCL_BOTH)
    plan.pop("_box_checks")
    jsonschema.Draft202012Validator(sub, registry=registry).validate(plan)
    item = sub["properties"]["still_failing_checks"]["items"]
    with pytest.raises(jsonschema.ValidationError):  # the schema does hold the entries to their shape
        jsonschema.Draft202012Validator(item, registry=registry).validate({"check": "nccl"})


def test_plan_text_names_the_failing_check_and_its_fix_and_exits_0(tmp_path: Path, capsys: Any) -> None:
    """Exit 0, as for a plan that leaves a feature blocked (docs/design.md: 1 only when no plan satisfies the
    request); the text says the plan alone does not make the box launch, and no line of it reads as a plan
    command."""
    out = tmp_path / "plan.txt"
    rc = main(["plan", "--facts", str(NCCL_BOTH), "--output", str(out)])
    assert rc == 0
    text = out.read_text(encoding="utf-8")
    assert "still failing after the plan" in text
    assert "nccl (crash)" in text
    assert "fix: keep only the NCCL wheel" in text
    commands = plan_commands(text.splitlines())
    assert commands, "the steps' commands are read"
    assert not any("nccl" in c.lower() for c in commands)


def test_plan_json_carries_the_failing_checks(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    assert main(["plan", "--facts", str(NCCL_BOTH), "--format", "json", "--output", str(out)]) == 0
    plan = json.loads(out.read_text(encoding="utf-8"))["plan"]
    assert [c["check"] for c in plan["still_failing_checks"]] == ["nccl"]
    out2 = tmp_path / "plan2.json"
    assert main(["plan", "--facts", str(_without_cu12(tmp_path)), "--format", "json", "--output", str(out2)]) == 0
    assert "still_failing_checks" not in json.loads(out2.read_text(encoding="utf-8"))["plan"]


WRITEUP_BEFORE = ROOT / "tests" / "cases" / "writeup-before" / "facts.json"


def test_a_torch_step_brings_triton_to_torchs_pin_so_its_ptxas_check_is_judged_on_the_new_one() -> None:
    """writeup-before (SM 12.0, Triton 3.5.1: sm12x-tma-gather fails on the box); the plan installs torch 2.14.1,
    whose Requires-Dist pins triton ~=3.8.0: pip brings Triton there, so the facts after the plan hold a 3.8 Triton
    and the check is not named (before, the box's Triton stayed in every hypothetical stack: a false 'still
    failing')."""
    from stackcheck.facts.versions import version_in
    from stackcheck.plan import plan_and_facts

    ctx = Context(facts=load_facts_file(str(WRITEUP_BEFORE)), manifests=_MANIFESTS)
    features, checks = evaluate_all(ctx)
    assert {str(c.get("id")): c.get("status") for c in checks}["triton-ptxas"] == "failed"
    plan, after = plan_and_facts(ctx, features)
    assert after is not None
    torch = plan.target["torch"].split("+")[0]
    release = next(r for r in _MANIFESTS.releases("torch") if r.get("version") == torch)
    pin = str((release.get("requires") or {})["triton"])
    assert version_in(str(after["packages"]["triton"]["version"]), pin)
    assert "triton-ptxas" not in {c.id for c in plan.still_failing_checks}


def test_torch_triton_keeps_a_triton_that_meets_the_pin_and_says_unknown_where_none_is_known() -> None:
    from stackcheck.plan.hypothetical import torch_triton

    ctx = Context(facts=load_facts_file(str(WRITEUP_BEFORE)), manifests=_MANIFESTS)
    have = {"installed": True, "version": "3.8.0", "dist_version": "3.8.0"}
    assert torch_triton({"requires": {"triton": "~=3.8.0"}}, have, ctx) is None
    assert torch_triton({"requires": {}}, have, ctx) is None
    assert torch_triton({"requires": {"triton": "==3.9.0"}}, {"installed": False}, ctx) is None
    assert torch_triton({"requires": {"triton": "==99.0.0"}}, have, ctx) == {"installed": True, "version": None}
    got = torch_triton({"requires": {"triton": "==3.7.1"}}, have, ctx)
    assert got is not None and got["version"] == "3.7.1"


def test_torch_triton_follows_the_pins_environment_marker() -> None:
    """torch 2.9.x's Requires-Dist pins triton only where `platform_machine == "x86_64"`: on an aarch64 box pip
    leaves the box's Triton, so the facts after a torch step keep it; a pin for any Linux machine moves it; a marker
    the reader does not follow, or a box fact it needs not read, makes Triton's version unknown (never the old one)."""
    from stackcheck.plan.hypothetical import _marker_holds

    arm = {"os": "Ubuntu 22.04.5 LTS", "machine": "aarch64", "python": "3.12.3"}
    x86 = {**arm, "machine": "x86_64"}
    only_x86 = 'platform_system == "Linux" and platform_machine == "x86_64"'
    assert _marker_holds(only_x86, arm) is False
    assert _marker_holds(only_x86, x86) is True
    assert _marker_holds('platform_system == "Linux" and python_version < "3.15"', arm) is True
    assert _marker_holds('python_version < "3.12"', arm) is False
    assert _marker_holds('python_version < "3.13"', {"os": "Ubuntu"}) is None  # no Python read
    assert _marker_holds('sys_platform == "linux"', arm) is None  # not followed
    assert _marker_holds('platform_machine == "x86_64" or platform_machine == "aarch64"', arm) is None
