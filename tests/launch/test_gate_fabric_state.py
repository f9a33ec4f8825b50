"""The gate and the GPU fabric state (check gpu-fabric-state, its rule fabric-completed required by every launch): an
HGX H200 box whose Fabric Manager has not registered a GPU is refused (CUDA error 802 at the first CUDA call), one whose
GPUs are all registered is not refused for it, and one whose state was not read is not refused for it either: the
audit says unknown (rule fabric-not-read), while the gate would otherwise refuse every saved inventory of a Hopper box
recorded before the probe read the state (the fresh-clone CI of the first version: the recommend cases, the gate's
fail-closed, mixed-majors and model-override tests all refused)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json, reason_status

ROOT = Path(__file__).resolve().parents[2]


def box(tmp_path: Path, fabric: Any) -> Path:
    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text(encoding="utf-8"))
    for g in doc["facts"]["gpus"]:
        g["fabric"] = {"state": "completed", "status": "success"}
    doc["facts"]["gpus"][3]["fabric"] = fabric  # None: GPU 3's state not read
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("fabric", "expected"),
    [
        ({"state": "in-progress", "status": None}, ("blocked", "crash")),
        ({"state": "completed", "status": "success"}, None),
        (None, None),
    ],
)
def test_gate_reads_the_fabric_state(tmp_path: Path, fabric: Any, expected: Any) -> None:
    doc = gate_json(box(tmp_path, fabric), "--model-path", "x", "--attention-backend", "fa3", dry_run=True)
    reasons = reason_status(doc)
    assert reasons.get("gpu-fabric-state") == expected, reasons
    if expected is not None:
        assert doc["decision"] == "refuse"


def test_an_unread_fabric_state_is_unknown_in_the_audit(tmp_path: Path) -> None:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report

    report, _ = build_report(Options(facts_file=str(box(tmp_path, None))))
    check = next(c for c in report["checks"] if c["id"] == "gpu-fabric-state")
    assert check["status"] == "unknown"
    assert [r["rule"] for r in check["reasons"] if r.get("result") == "unknown"] == ["fabric-not-read"]
