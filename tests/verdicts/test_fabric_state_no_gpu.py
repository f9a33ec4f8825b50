"""gpu-fabric-state on a box where NVML and nvidia-smi saw no GPU (issue 16, igap18): skipped, as the other per-GPU
checks are there (mixed-gpus, deepgemm-arch's per-GPU rule: a gpu.count > 0 guard), not unknown in every audit of
a CPU build host; a box with GPUs whose fabric state was not read stays unknown, one read as completed ok."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

ID = "gpu-fabric-state"


def status(manifests: Manifests, gpus: list[dict[str, Any]]) -> str:
    spec = next(c for c in manifests.checks if c["id"] == ID)
    facts: dict[str, Any] = {"gpus": gpus, "driver": {"version": None, "error": "NVML library not found"}}
    return str(evaluate_check(spec, Context(facts=facts, manifests=manifests, launch={}))["status"])  # type: ignore[arg-type]


H200 = {"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}


def test_no_gpu_is_skipped(manifests: Manifests) -> None:
    assert status(manifests, []) == "skipped"


@pytest.mark.parametrize(("fabric", "want"), [(None, "unknown"), ("completed", "ok"), ("in-progress", "failed")])
def test_a_box_with_gpus_is_judged_as_before(manifests: Manifests, fabric: str | None, want: str) -> None:
    gpu = dict(H200, **({"fabric": {"state": fabric, "status": "success"}} if fabric else {}))
    assert status(manifests, [gpu]) == want
