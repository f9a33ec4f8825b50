"""The twenty-fifth fact-check sample's findings in `plan` / `recommend` (tests/realworld/FACTCHECK.md,
"Twenty-fifth sample"; the rows in
bench/factcheck25_drawn.json):

- p7 (drawn): `plan --to sglang==0.5.9` on an H100 box with SGLang 0.5.19 said its sgl-kernel step unblocks
  attention-minicpm-sparse (judged on SGLang 0.5.19 with sgl-kernel 0.3.21, a stack between two steps), while the
  same plan's still_blocked list says SGLang 0.5.9 has no minicpm backend: a step now unblocks only what is ok
  after the whole plan, on the step after which it stays ok.
- Beside the draw: the plan targeted an SGLang release pip cannot install on the box. 0.5.22 and 0.5.23 declare
  Requires-Python >=3.11 (a Python 3.10 box got 'pip install sglang==0.5.23': no matching distribution), and every
  file of 0.5.11-0.5.23 is a manylinux_2_34 wheel (no sdist; a glibc 2.31 box, Ubuntu 20.04 / Debian 11, finds
  none). The solver now skips such a release unless it is the installed one.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json
from registry_wheels import fetch_wheel, run_all

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
    # (icute2's linear-attn-cutedsl: its --linear-attn-backend is from 0.5.10, and the box has the CuTe DSL)
    assert steps["sglang"] == [
        "attention-fa4", "attention-trtllm-mha", "fp8-block-gemm", "linear-attn-cutedsl", "mxfp4-moe"
    ]  # fmt: skip
    assert all(not v for c, v in steps.items() if c != "sglang")


# ---- beside the draw: a target pip cannot install ---------------------------------------------------------------


def test_python_310_box_is_not_planned_onto_a_311_release(tmp_path: Path) -> None:
    box = _box(tmp_path, "0.5.9", "9.0", ("580.95.05", "13.0"), python="3.10.12")
    plan = _plan(box)
    assert plan["target"]["sglang"] == "0.5.21"  # the newest release whose Requires-Python admits 3.10
    rec = cli_json(["recommend", "--facts", str(box), "--format", "json"])[1]
    assert rec["stack"]["sglang"] == "0.5.21"
    refused = _plan(box, "--to", "sglang==0.5.23")
    assert not refused.get("target")
    assert "sglang 0.5.23 declares Requires-Python >=3.11" in refused["error"]
    assert "Python 3.10.12" in refused["error"]


def test_glibc_231_box_is_not_planned_onto_a_manylinux_2_34_release(tmp_path: Path) -> None:
    box = _box(tmp_path, "0.5.9", "9.0", ("580.95.05", "13.0"), glibc="2.31", os="Ubuntu 20.04.6 LTS")
    assert _plan(box)["target"]["sglang"] == "0.5.10"  # py3-none-any, the last release without the floor
    refused = _plan(box, "--to", "sglang==0.5.16")
    assert not refused.get("target")
    assert "manylinux_2_34 wheels only: pip finds none for glibc 2.31" in refused["error"]


@pytest.mark.parametrize(
    "system", [{"python": "3.11.9", "glibc": "2.35"}, {"python": None, "glibc": None}, {"python": "3.12.3"}]
)
def test_guard_a_box_that_meets_or_does_not_say_keeps_the_newest(tmp_path: Path, system: dict[str, Any]) -> None:
    """Python 3.11 on glibc 2.35 (Ubuntu 22.04 with a newer Python) installs 0.5.23; a box whose facts do not say
    its Python or glibc is not refused on them."""
    box = _box(tmp_path, "0.5.9", "9.0", ("580.95.05", "13.0"), **system)
    assert _plan(box)["target"]["sglang"] == "0.5.23"


def test_guard_an_installed_release_is_never_refused_as_uninstallable(tmp_path: Path) -> None:
    """A release already installed (forced in on Python 3.10) stays a candidate: the plan installs nothing of it;
    the audit's sglang-requires-python check says what is wrong."""
    box = _box(tmp_path, "0.5.23", "9.0", ("580.95.05", "13.0"), python="3.10.12")
    plan = _plan(box, "--to", "sglang==0.5.23")
    assert plan["target"]["sglang"] == "0.5.23"
    assert all(s["component"] != "sglang" for s in plan["steps"])


def test_every_release_from_0_5_11_carries_its_glibc_floor_with_a_source() -> None:
    for rel in _M.releases("sglang"):
        v = tuple(int(x) for x in str(rel["version"]).split(".")[:3])
        floor = rel.get("wheel_glibc")
        if v >= (0, 5, 11):
            assert floor is not None and floor["min"] == "2.34" and floor["source"], rel["version"]
        else:
            assert floor is None, rel["version"]


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.10", "0.5.11", "0.5.16", "0.5.23"] if run_all() else ["0.5.11", "0.5.23"])
def test_registry_glibc_floor_is_the_wheel_tag(version: str) -> None:
    """The PyPI wheel's platform tag says the floor components.json records (0.5.10: a pure wheel, none)."""
    wheel = fetch_wheel("sglang", version)
    tags = re.findall(r"manylinux_(\d+)_(\d+)_x86_64", wheel.name)
    rel = next(r for r in _M.releases("sglang") if r["version"] == version)
    if not tags:
        assert wheel.name.endswith("-py3-none-any.whl") and "wheel_glibc" not in rel
        return
    lowest = min((int(a), int(b)) for a, b in tags)
    assert rel["wheel_glibc"]["min"] == f"{lowest[0]}.{lowest[1]}", wheel.name
