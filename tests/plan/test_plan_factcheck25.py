"""The twenty-fifth fact-check sample's findings in `plan` / `recommend` (tests/realworld/FACTCHECK-25.md; the rows in
bench/factcheck25_drawn.json):

- p7 (drawn): `plan --to sglang==0.5.9` on an H100 box with SGLang 0.5.19 said its sgl-kernel step unblocks
  attention-minicpm-sparse (judged on SGLang 0.5.19 with sgl-kernel 0.3.21, a stack between two steps), while the
  same plan's still_blocked list says SGLang 0.5.9 has no minicpm backend: a step now unblocks only what is ok
  after the whole plan, on the step after which it stays ok.
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


def _box(tmp_path: Path, release: str, cc: str, driver: tuple[str, str], **system: str | None) -> Path:
    """tests/cases/h200-newest with SGLang `release` and its pins (torch's PyPI build), every GPU at `cc`, the
    driver (version, CUDA) given and system fields replaced (None removes one)."""
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
    facts["driver"].update(version=driver[0], cuda=driver[1], nvml_version=f"{driver[1].split('.')[0]}.{driver[0]}")
    for key, value in system.items():
        if value is None:
            facts["system"].pop(key, None)
        else:
            facts["system"][key] = value
    path = tmp_path / f"box-{release}-{cc}-{driver[0]}-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    return path


def _plan(box: Path, *options: str) -> dict[str, Any]:
    plan: dict[str, Any] = cli_json(["plan", "--facts", str(box), *options, "--format", "json"])[1]["plan"]
    return plan


def _unblocked(plan: dict[str, Any]) -> list[str]:
    return [f for s in plan.get("steps") or [] for f in s.get("unblocks") or []]


def _still(plan: dict[str, Any]) -> set[str]:
    return {str(b["feature"]) for b in plan.get("still_blocked") or []}


# ---- p7: a step's unblocks ------------------------------------------------------------------------------------


def test_p7_no_step_unblocks_minicpm_that_the_plan_leaves_blocked(tmp_path: Path) -> None:
    """The drawn row: 9.0, driver 560 (CUDA 12.6), SGLang 0.5.19 installed, --to sglang==0.5.9."""
    plan = _plan(_box(tmp_path, "0.5.19", "9.0", ("560.35.05", "12.6")), "--to", "sglang==0.5.9")
    assert plan["target"]["sglang"] == "0.5.9"
    assert "attention-minicpm-sparse" in _still(plan)
    assert "attention-minicpm-sparse" not in _unblocked(plan)


@pytest.mark.parametrize(
    ("installed", "cc", "target"),
    [("0.5.19", "9.0", "0.5.9"), ("0.5.19", "9.0", "0.5.5"), ("0.5.23", "12.0", "0.5.9"), ("0.5.9", "10.0", "0.5.23")],
)
def test_unblocks_and_still_blocked_never_overlap(tmp_path: Path, installed: str, cc: str, target: str) -> None:
    plan = _plan(_box(tmp_path, installed, cc, ("580.95.05", "13.0")), "--to", f"sglang=={target}")
    assert plan["target"]["sglang"] == target
    unblocked = _unblocked(plan)
    assert len(unblocked) == len(set(unblocked)), unblocked
    assert not set(unblocked) & _still(plan)


def test_a_feature_unblocked_at_the_end_stays_on_the_sglang_step() -> None:
    """Guard: the write-up box's plan to 0.5.23 names its unblocked features on the SGLang step, as before."""
    plan = cli_json(["plan", "--facts", str(ROOT / "tests/cases/writeup-before/facts.json"), "--format", "json"])[1]
    steps = {s["component"]: s["unblocks"] for s in plan["plan"]["steps"]}
    assert steps["sglang"] == ["attention-fa4", "attention-trtllm-mha", "fp8-block-gemm", "mxfp4-moe"]
    assert all(not v for c, v in steps.items() if c != "sglang")
