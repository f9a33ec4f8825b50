"""igap47: a PyPI-style CUDA torch whose own NCCL wheel is not installed (only the other CUDA major's, or none).

torch's loader (torch/__init__.py of 2.13.0 and 2.14.1, read in the wheels: _load_global_deps loads
libtorch_global_deps.so, which NEEDs libcudart alone, then _preload_cuda_deps preloads each CUDA library it finds under
sys.path as nvidia/<folder>/lib, nvidia/cu<major>/lib or <folder>/lib, 'nccl' among them; a missing one stops the
preload, swallowed, in 2.13.0 and is skipped in 2.14.1); then `from torch._C import *` loads libtorch_cuda.so, which
NEEDs libnccl.so.2 (RPATH $ORIGIN/../../nvidia/nccl/lib). nvidia-nccl-cu12 and nvidia-nccl-cu13 both install
nvidia/nccl/lib/libnccl.so.2 (the cu13 2.30.7 wheel's file list read). So a CUDA 12 torch with only the cu13 wheel
loads a CUDA 13 NCCL (its static runtime needs a CUDA 13 driver; whether it serves torch otherwise was not read),
and with no NCCL wheel libnccl.so.2 comes from the loader's path or `import torch` fails. Before: no rule of the
check nccl applied (the pin rules need torch's own wheel installed), so the check was ok."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
CASES = Path(__file__).resolve().parents[1] / "cases"
NCCL = next(c for c in MANIFESTS.checks if c["id"] == "nccl")
OTHER = "torch-nccl-wheel-other-major"
NONE = "torch-nccl-wheel-none"

WHEEL = {"installed": True, "location": "/opt/venv/lib/python3.12/site-packages", "editable": False, "copies": 1}


def _box(torch: str, wheels: dict[str, str], driver_cuda: str = "12.8", machine: str = "x86_64") -> dict[str, Any]:
    """tests/cases/writeup-before (torch 2.9.1+cu128 with nvidia-nccl-cu12 2.27.5, one H200) with torch, the
    NCCL wheels, the driver's CUDA and the machine replaced."""
    doc = json.loads((CASES / "writeup-before" / "facts.json").read_text())
    facts: dict[str, Any] = copy.deepcopy(doc.get("facts", doc))
    pkgs = facts["packages"]
    for name in ("nvidia-nccl-cu11", "nvidia-nccl-cu12", "nvidia-nccl-cu13"):
        pkgs[name] = {"installed": False}
    for name, version in wheels.items():
        pkgs[name] = {**WHEEL, "version": version, "dist_version": version}
    cuda = torch.rpartition("+cu")[2]
    release = torch.partition("+")[0]
    pkgs["torch"].update({"version": torch, "dist_version": release, "cuda": f"{cuda[:-1]}.{cuda[-1]}"})
    pkgs["torch"]["variant"] = f"cu{cuda}"
    facts["driver"]["cuda"] = driver_cuda
    facts["system"]["machine"] = machine
    return facts


def _rules(facts: dict[str, Any]) -> dict[str, str]:
    got = evaluate_check(NCCL, Context(facts=facts, manifests=MANIFESTS))  # type: ignore[arg-type]
    return {str(r.get("rule")): str(r.get("result")) for r in got["reasons"] if r.get("rule") in (OTHER, NONE)}


@pytest.mark.parametrize(
    ("torch", "wheels", "driver", "expected"),
    [
        # CUDA 12 torch, the cu13 wheel's libnccl.so.2 in nvidia/nccl/lib: a CUDA 13 NCCL under a CUDA 12.8 driver
        ("2.9.1+cu128", {"nvidia-nccl-cu13": "2.27.7"}, "12.8", {OTHER: "fail"}),
        # ... under a CUDA 13 driver: not read whether it serves a CUDA 12 torch
        ("2.9.1+cu128", {"nvidia-nccl-cu13": "2.28.9"}, "13.0", {OTHER: "unknown"}),
        # no NCCL wheel at all: the loader's libnccl.so.2 or none (import torch fails)
        ("2.9.1+cu128", {}, "12.8", {NONE: "unknown"}),
        ("2.14.1+cu130", {}, "13.0", {NONE: "unknown"}),
    ],
)
def test_torch_without_its_nccl_wheel_is_judged(
    torch: str, wheels: dict[str, str], driver: str, expected: dict[str, str]
) -> None:
    assert _rules(_box(torch, wheels, driver)) == expected


@pytest.mark.parametrize(
    ("torch", "wheels"),
    [
        ("2.9.1+cu128", {"nvidia-nccl-cu12": "2.27.5"}),  # torch's own wheel: the pin rules judge it
        ("2.9.1+cu128", {"nvidia-nccl-cu12": "2.27.5", "nvidia-nccl-cu13": "2.28.9"}),  # one-nccl-wheel's
        ("2.11.0+cu130", {"nvidia-nccl-cu13": "2.28.9"}),
        ("2.9.1+cu128", {"nvidia-nccl-cu11": "2.14.3"}),  # nccl-cu11-wheel-alone's
        # (left open: a CUDA 13 torch with only the cu12 wheel, the state the planner's cu12-to-cu13 step predicts)
        ("2.11.0+cu130", {"nvidia-nccl-cu12": "2.27.5"}),
    ],
)
def test_not_applied_where_other_rules_judge(torch: str, wheels: dict[str, str]) -> None:
    assert _rules(_box(torch, wheels)) == {}


def test_not_applied_to_a_cpu_or_container_torch_or_arm() -> None:
    cpu = _box("2.9.1+cu128", {})
    cpu["packages"]["torch"].update({"version": "2.9.1+cpu", "variant": "cpu", "cuda": None})
    assert _rules(cpu) == {}
    ngc = _box("2.9.1+cu128", {})
    ngc["packages"]["torch"].update({"version": "2.7.0a0+ecf3bae40a.nv25.02", "variant": None})
    assert _rules(ngc) == {}
    # aarch64: torch 2.8-2.10's METADATA requires nvidia-nccl-cu12 on x86_64 only (not read further)
    assert _rules(_box("2.9.1+cu128", {}, machine="aarch64")) == {}


def test_the_check_fails_for_every_launch_with_the_cuda13_nccl_under_an_old_driver() -> None:
    facts = _box("2.9.1+cu128", {"nvidia-nccl-cu13": "2.27.7"}, "12.8")
    got = evaluate_check(NCCL, Context(facts=facts, manifests=MANIFESTS))  # type: ignore[arg-type]
    assert got["status"] == "failed", got
    rule = next(r for r in NCCL["rules"] if r["id"] == OTHER)
    assert rule["required_by"]["launches"] == "every"
