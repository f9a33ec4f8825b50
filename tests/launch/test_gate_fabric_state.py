"""The gate and the GPU fabric state (check gpu-fabric-state, required by every launch): an HGX H200 box whose
Fabric Manager has not registered a GPU is refused (CUDA error 802 at the first CUDA call), one whose GPUs are all
registered is not refused for it, and one whose state was not read is refused as unknown (fail closed)."""

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
        (None, ("unknown", None)),
    ],
)
def test_gate_reads_the_fabric_state(tmp_path: Path, fabric: Any, expected: Any) -> None:
    doc = gate_json(box(tmp_path, fabric), "--model-path", "x", "--attention-backend", "fa3", dry_run=True)
    reasons = reason_status(doc)
    assert reasons.get("gpu-fabric-state") == expected, reasons
    if expected is not None:
        assert doc["decision"] == "refuse"
