"""The NVML probe's per-GPU NVSwitch fabric state (nvmlDeviceGetGpuFabricInfo) against the fake NVML, and the
stack check gpu-fabric-state it feeds (issue 16, round twelve's hf-hub-4134: CUDA error 802)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNVML, load_doc, synthetic_doc

from stackcheck.knowledge.loader import Manifests
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict


def run(tmp_path: Path, fake: FakeNVML) -> Any:
    ctx = ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=[], subprocess_timeout_s=3.0, nvml=fake)
    return NvmlProbe().run(ctx)


def hgx(state: str, status: str | None = None, count: int = 4) -> FakeNVML:
    doc = synthetic_doc(count, name="NVIDIA H200", cc="9.0")
    for g in doc["facts"]["gpus"]:
        g["fabric"] = {"state": "completed", "status": "success"}
    doc["facts"]["gpus"][1]["fabric"] = {"state": state, "status": status}
    return FakeNVML(doc)


@pytest.mark.parametrize(
    ("state", "status"),
    [("not-started", None), ("in-progress", None), ("completed", "success"), ("completed", "not-supported")],
)
def test_each_state_is_recorded_per_gpu(tmp_path: Path, state: str, status: str | None) -> None:
    fake = hgx(state, status)
    result = run(tmp_path, fake)
    assert result.status == "ok", result.reason
    gpus = result.facts["gpus"]
    assert gpus[1]["fabric"] == {"state": state, "status": status}
    assert gpus[0]["fabric"] == {"state": "completed", "status": "success"}
    assert fake.calls["nvmlDeviceGetGpuFabricInfo"] == 4  # one call per GPU


def test_status_is_not_read_before_completed(tmp_path: Path) -> None:
    fake = hgx("in-progress", "not-supported")  # NVML's status counts only once the state is complete
    assert run(tmp_path, fake).facts["gpus"][1]["fabric"] == {"state": "in-progress", "status": None}


def test_pcie_gpu_answers_not_supported(tmp_path: Path) -> None:
    fake = FakeNVML(load_doc("sm120-8x-pcie.json"))
    for g in fake.gpus:
        g.pop("fabric", None)  # the fake answers NOT_SUPPORTED, as NVML does on a PCIe GPU
    result = run(tmp_path, fake)
    assert result.status == "ok"
    assert {str(g["fabric"]) for g in result.facts["gpus"]} == {str({"state": "not-supported", "status": None})}


def test_gpus_older_than_hopper_are_not_asked(tmp_path: Path) -> None:
    fake = FakeNVML(synthetic_doc(2, nvswitch=False, name="NVIDIA A100-SXM4-80GB", cc="8.0"))
    result = run(tmp_path, fake)
    assert fake.calls["nvmlDeviceGetGpuFabricInfo"] == 0
    assert all("fabric" not in g for g in result.facts["gpus"])


def test_driver_without_the_call_is_not_read_quietly(tmp_path: Path) -> None:
    fake = hgx("completed", "success").fail("nvmlDeviceGetGpuFabricInfo", "FunctionNotFound")
    result = run(tmp_path, fake)
    assert result.status == "ok"
    assert [g["fabric"] for g in result.facts["gpus"]] == [None] * 4


def test_other_errors_are_noted(tmp_path: Path) -> None:
    fake = hgx("completed", "success").fail("nvmlDeviceGetGpuFabricInfo", "NoPermission", index=2)
    result = run(tmp_path, fake)
    assert result.status == "partial"
    assert result.facts["gpus"][2]["fabric"] == {"state": None, "status": None, "error": "no permission to query NVML"}
    assert "fabric" in result.facts["gpus"][2]["error"]


def test_lost_gpu_is_data(tmp_path: Path) -> None:
    fake = hgx("completed", "success").fail("nvmlDeviceGetGpuFabricInfo", "GpuIsLost", index=3)
    result = run(tmp_path, fake)
    assert result.status == "partial"
    assert "lost" in result.facts["gpus"][3]["error"]


# ---- the check -------------------------------------------------------------------------------------------


def verdict(manifests: Manifests, fabrics: list[Any], cc: str = "9.0") -> CheckVerdict:
    gpus: list[dict[str, Any]] = []
    for i, fabric in enumerate(fabrics):
        g: dict[str, Any] = {"index": i, "name": "NVIDIA H200", "compute_capability": cc}
        if fabric != "absent":
            g["fabric"] = fabric
        gpus.append(g)
    facts = {"gpus": gpus, "topology": {"gpu_count": len(gpus)}, "system": {"env": {}}}
    spec = next(c for c in manifests.checks if c["id"] == "gpu-fabric-state")
    return evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=manifests, launch={}))  # type: ignore[arg-type]


OK = {"state": "completed", "status": "success"}
NS = {"state": "not-supported", "status": None}


@pytest.mark.parametrize(
    ("fabrics", "status", "observed"),
    [
        ([OK, {"state": "in-progress", "status": None}], "failed", "in-progress (GPU 1)"),
        ([{"state": "not-started", "status": None}], "failed", "not-started (GPU 0)"),
        ([OK, {"state": "completed", "status": "nvml-error-26"}], "failed", "completed, status nvml-error-26 (GPU 1)"),
        ([{"state": "not-completed"}], "failed", "not-completed (GPU 0)"),
        ([OK, OK], "ok", "completed"),
        ([NS, NS], "skipped", None),
        ([OK, None], "unknown", None),
        (["absent"], "unknown", None),
        ([{"state": "completed"}], "unknown", None),
        ([OK, {"state": None, "status": None, "error": "no permission to query NVML"}], "unknown", None),
    ],
)
def test_check(manifests: Manifests, fabrics: list[Any], status: str, observed: str | None) -> None:
    v = verdict(manifests, fabrics)
    assert v["status"] == status, v
    if observed is not None:
        assert v["reasons"][0]["observed"] == observed
    if status == "failed":
        assert "802" in str(v["reasons"][0]["message"])
        assert "Fabric Manager" in str(v.get("fix", {}).get("text"))


def test_check_before_hopper_is_not_applicable(manifests: Manifests) -> None:
    assert verdict(manifests, ["absent", "absent"], cc="8.9")["status"] == "skipped"


def test_check_unknown_gpus_never_ok(manifests: Manifests) -> None:
    spec = next(c for c in manifests.checks if c["id"] == "gpu-fabric-state")
    v = evaluate_check(spec, Context(facts={"system": {"env": {}}}, manifests=manifests, launch={}))
    assert v["status"] == "unknown"


def test_check_fix_is_the_fabric_manager_not_a_driver_install(manifests: Manifests) -> None:
    spec = next(c for c in manifests.checks if c["id"] == "gpu-fabric-state")
    assert spec["fix"]["component"] == "system"  # "driver" made triage's plan propose a driver install
    sig = next(s for s in manifests.signatures if s["id"] == "cuda-system-not-ready-fabric")
    assert sig.get("check") == "gpu-fabric-state"


def test_check_assumed_gpus_are_not_concerned(manifests: Manifests) -> None:
    spec = next(c for c in manifests.checks if c["id"] == "gpu-fabric-state")
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
        "assumed": ["gpus=9.0x1 (NVIDIA H200)"],
        "system": {"env": {}},
    }
    v = evaluate_check(spec, Context(facts=facts, manifests=manifests, launch={}))  # type: ignore[arg-type]
    assert v["status"] == "skipped"  # --assume-gpu: the fabric is the serving host's state, read there
