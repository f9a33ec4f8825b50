"""gpu-fabric-state fails closed where the probe's read failed, and stays unknown-not-refused where it was not read.

A fabric state absent from the facts (a saved inventory from before the probe read it, an nvidia-ml-py or driver
without nvmlDeviceGetGpuFabricInfo) is rule fabric-not-read's unknown, which the gate does not require: every saved
Hopper inventory would be refused otherwise. A live probe that asked NVML and got an error other than NOT_SUPPORTED
(or a state nvmlGpuFabricState_t does not have) records the failure ({state: null, error}); context.gpu_fabric then
raises Unknown, so rule fabric-completed (required by every launch) is unknown and the gate refuses.

On the parent commit the failed read was recorded as not read (fabric null) and the gate allowed: the tests of the
record, of the refusal (facts file and live probe) fail there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import fake_nvml
import pytest
from fake_nvml import FakeNVML, synthetic_doc

from stackcheck.cli import main
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe

ROOT = Path(__file__).resolve().parent.parent.parent
TESTS = ROOT / "tests"
GOOD = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
LLAMA = str(ROOT / "tests" / "data" / "models" / "llama3-8b")  # a model the gate reads (as the good-box test)
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", LLAMA]
OK = {"state": "completed", "status": "success"}


def _probe(tmp_path: Path, fake: FakeNVML) -> Any:
    ctx = ProbeContext(env={"PATH": ""}, root=tmp_path, path_dirs=[], subprocess_timeout_s=3.0, nvml=fake)
    return NvmlProbe().run(ctx)


def _hgx(count: int = 4) -> FakeNVML:
    doc = synthetic_doc(count, name="NVIDIA H200", cc="9.0")
    for g in doc["facts"]["gpus"]:
        g["fabric"] = dict(OK)
    return FakeNVML(doc)


@pytest.mark.parametrize(
    ("error", "said"),
    [("NoPermission", "no permission to query NVML"), ("Unknown", "NVML unknown error"),
     ("Uninitialized", "NVML not initialised")],
)  # fmt: skip
def test_a_failed_read_is_recorded_as_failed(tmp_path: Path, error: str, said: str) -> None:
    result = _probe(tmp_path, _hgx().fail("nvmlDeviceGetGpuFabricInfo", error, index=2))
    gpus = result.facts["gpus"]
    assert gpus[2]["fabric"]["state"] is None and gpus[2]["fabric"]["status"] is None
    assert said in gpus[2]["fabric"]["error"] and "fabric" in gpus[2]["error"]
    assert [g["fabric"] for g in gpus[:2]] == [OK, OK]


def test_a_state_not_known_here_is_a_failed_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(fake_nvml.FABRIC_STATE_CODES, "newer-state", 7)
    fake = _hgx()
    fake.gpus[1]["fabric"] = {"state": "newer-state", "status": None}
    fabric = _probe(tmp_path, fake).facts["gpus"][1]["fabric"]
    assert fabric == {"state": None, "status": None, "error": "unknown state 7"}


def test_a_driver_without_the_call_is_still_not_read(tmp_path: Path) -> None:
    result = _probe(tmp_path, _hgx().fail("nvmlDeviceGetGpuFabricInfo", "FunctionNotFound"))
    assert [g["fabric"] for g in result.facts["gpus"]] == [None] * 4


def _facts(tmp_path: Path, fabric: Any) -> str:
    doc = json.loads(GOOD.read_text(encoding="utf-8"))
    for g in doc["facts"]["gpus"]:
        g["fabric"] = dict(OK)
    if fabric == "absent":
        del doc["facts"]["gpus"][0]["fabric"]
    else:
        doc["facts"]["gpus"][0]["fabric"] = fabric
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return str(path)


def _gate(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    rc = main(["gate", "--dry-run", "--format", "json", *args])
    return rc, json.loads(capsys.readouterr().out)


def test_the_gate_refuses_a_failed_fabric_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = {"state": None, "status": None, "error": "no permission to query NVML"}
    rc, doc = _gate(["--facts", _facts(tmp_path, failed), "--", *LAUNCH], capsys)
    assert rc == 1 and doc["decision"] == "refuse"
    reasons = [b for b in doc["reasons"] if b["feature"] == "gpu-fabric-state"]
    assert reasons and {b["status"] for b in doc["reasons"]} == {"unknown"}, doc["reasons"]
    assert "no permission to query NVML" in json.dumps(reasons)
    rc, doc = _gate(["--facts", _facts(tmp_path, failed), "--allow-unknown", "--", *LAUNCH], capsys)
    assert rc == 0 and doc["warnings"]  # fail open only when asked, and loudly


@pytest.mark.parametrize("fabric", ["absent", None], ids=["absent", "null"])
def test_the_gate_allows_a_fabric_state_not_read(
    tmp_path: Path, fabric: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, doc = _gate(["--facts", _facts(tmp_path, fabric), "--", *LAUNCH], capsys)
    assert rc == 0 and doc["decision"] == "allow", doc["reasons"]
    report = subprocess.run(  # the audit still says it (rule fabric-not-read: unknown)
        [sys.executable, "-m", "stackcheck", "audit", "--facts", _facts(tmp_path, fabric), "--format", "json"],
        capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    checks = {c["id"]: c["status"] for c in json.loads(report.stdout)["checks"]}
    assert checks["gpu-fabric-state"] == "unknown"


def _live_gate(tmp_path: Path, fault: str) -> dict[str, Any]:
    """`gate --dry-run` probing a fake one-H200 box whose fabric read raises NVMLError_<fault> (a fake pynvml on
    PYTHONPATH, read by the command line's forked NVML reader as the real one would be)."""
    (tmp_path / "pynvml.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from fake_nvml import FakeNVML, load_doc\n"
        f"sys.modules[__name__] = FakeNVML(load_doc('h200-1x.json')).fail('nvmlDeviceGetGpuFabricInfo', {fault!r})\n",
        encoding="utf-8",
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", "gate", "--dry-run", "--format", "json", "--timeout", "120", "--",
         *LAUNCH],
        capture_output=True, text=True, env=env, timeout=240, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_a_live_probe_whose_fabric_read_failed_is_refused(tmp_path: Path) -> None:
    doc = _live_gate(tmp_path, "NoPermission")
    fabric = [b for b in doc["reasons"] if b["feature"] == "gpu-fabric-state"]
    assert doc["decision"] == "refuse" and fabric and {b["status"] for b in fabric} == {"unknown"}, doc["reasons"]


def test_a_live_driver_without_the_call_is_not_refused_for_it(tmp_path: Path) -> None:
    doc = _live_gate(tmp_path, "FunctionNotFound")  # (the box has no SGLang: refused for other reasons)
    assert not [b for b in doc["reasons"] if b["feature"] == "gpu-fabric-state"], doc["reasons"]
