"""The fiftieth fact-check sample's finding in `plan --want` (tests/realworld/FACTCHECK.md, "Fiftieth sample"; the
rows in bench/factcheck50_drawn.json):

- w2 (drawn): `plan --want torch-symm-mem` on an 8x B300 (10.3) box with SGLang 0.5.1 answered with the stack of the
  fewest changes that makes the feature ok, SGLang 0.5.5 with sgl-kernel 0.3.16.post5 and torch 2.8.0+cu128 kept:
  sgl-kernel 0.3.16.post5 has SASS for sm_100a, not for 10.3 (an arch-specific cubin runs on its own capability
  only), and Triton 3.4.0's ptxas (CUDA 12.8) does not know sm_103, so the same plan's still_failing_checks said
  kernel-arch and triton-ptxas crash: the box it promised the feature on does not start, while SGLang 0.5.23's stack
  makes the feature ok and starts. The planner now takes, among the first stacks that make the wanted features ok,
  the first after whose plan no stack check crashes.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json

from stackcheck.commands.explain import release_facts
from stackcheck.facts.versions import cuda_from_tag
from stackcheck.knowledge.loader import load, pypi_variant

ROOT = Path(__file__).resolve().parent.parent.parent
H200_NEWEST = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
_M = load([], env={})
_GPUS = {
    "9.0": "NVIDIA H100 80GB HBM3",
    "10.0": "NVIDIA B200",
    "10.3": "NVIDIA B300 SXM6 AC",
    "12.0": "NVIDIA RTX PRO 6000 Blackwell Server Edition",
}


def _box(tmp_path: Path, release: str, cc: str) -> Path:
    """tests/cases/h200-newest (8 GPUs on NVSwitch, driver 580 / CUDA 13.0) with SGLang `release` and its pins
    (torch's PyPI build), every GPU renamed and set to `cc`."""
    doc = json.loads(H200_NEWEST.read_text())
    facts = copy.deepcopy(doc.get("facts", doc))
    pins = release_facts({}, _M, release, None, None)["packages"]
    pkgs = facts["packages"]
    for name in ("sgl-kernel", "sglang-kernel", "triton"):
        pkgs[name] = {"installed": False}
    for name, p in pins.items():
        pkgs[name] = {"installed": True, "version": p["version"], "dist_version": p["version"]}
    trel = next(r for r in _M.releases("torch") if r.get("version") == pins["torch"]["version"])
    variant = pypi_variant(trel) or "cu128"
    pkgs["torch"].update(version=f"{pins['torch']['version']}+{variant}", variant=variant, cuda=cuda_from_tag(variant))
    if not variant.startswith("cu13"):
        pkgs.pop("nvidia-nccl-cu13", None)
    for gpu in facts["gpus"]:
        gpu["compute_capability"] = cc
        gpu["name"] = _GPUS[cc]
    path = tmp_path / f"box-{release}-{cc}.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    return path


def _plan(box: Path, *options: str) -> dict[str, Any]:
    plan: dict[str, Any] = cli_json(["plan", "--facts", str(box), *options, "--format", "json"])[1]["plan"]
    return plan


def _crashing(plan: dict[str, Any]) -> set[str]:
    return {str(c["check"]) for c in plan.get("still_failing_checks") or [] if c.get("effect") == "crash"}


def _still(plan: dict[str, Any]) -> set[str]:
    return {str(b["feature"]) for b in plan.get("still_blocked") or []}


def test_w2_want_on_b300_gives_a_stack_that_starts(tmp_path: Path) -> None:
    """The drawn row: torch-symm-mem ok after the plan, and no stack check left crashing (sgl-kernel 0.3.16.post5
    has no code for 10.3; the target moves to a release whose kernel package covers it)."""
    plan = _plan(_box(tmp_path, "0.5.1", "10.3"), "--want", "torch-symm-mem")
    assert "error" not in plan
    assert "torch-symm-mem" not in _still(plan)
    assert _crashing(plan) == set(), plan.get("still_failing_checks")
    assert plan["target"]["sglang"] != "0.5.5"


def test_want_keeps_the_fewest_changes_where_the_box_starts(tmp_path: Path) -> None:
    """Guard: on an H100 box the same request keeps its smallest plan (SGLang 0.5.5, torch kept), which starts."""
    plan = _plan(_box(tmp_path, "0.5.1", "9.0"), "--want", "torch-symm-mem")
    assert plan["target"]["sglang"] == "0.5.5"
    assert not [s for s in plan["steps"] if s["component"] == "torch"]
    assert _crashing(plan) == set()


def test_an_impossible_want_is_answered_as_before(tmp_path: Path) -> None:
    """Guard: where no release makes the wanted feature ok (torch-symm-mem on major 12, SGLang 0.5.1 kept), the
    plan still says so and offers only the patch step; no other stack is searched for."""
    plan = _plan(_box(tmp_path, "0.5.1", "12.0"), "--want", "torch-symm-mem")
    assert "no release in the manifests makes it ok" in plan["error"]
    assert [s["component"] for s in plan["steps"]] == ["patch:torch-symm-mem"]


@pytest.mark.parametrize("cc", ["10.0", "10.3"])
def test_no_want_plan_crashes_where_the_default_plan_does_not(tmp_path: Path, cc: str) -> None:
    """Property over every feature blocked on a Blackwell box with SGLang 0.5.1: a `--want` plan without an error
    leaves no stack check crashing that the default plan (which starts) leaves; on 10.3 the old planner failed
    this for torch-symm-mem and deepgemm (SGLang 0.5.5 with sgl-kernel 0.3.16.post5)."""
    box = _box(tmp_path, "0.5.1", cc)
    default = _crashing(_plan(box))
    audit = cli_json(["audit", "--facts", str(box), "--format", "json"])[1]
    blocked = sorted(str(f["id"]) for f in audit["features"] if f.get("status") == "blocked")
    assert blocked
    bad = {}
    for feature in blocked:
        plan = _plan(box, "--want", feature)
        if plan.get("error"):
            continue
        extra = _crashing(plan) - default
        if extra:
            bad[feature] = (plan["target"].get("sglang"), sorted(extra))
    assert bad == {}
