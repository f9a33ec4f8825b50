"""irev74 (review of igap55's refusal hicache-host-pool-memory): --dp-size without --enable-dp-attention starts that
many replicas of tp x pp ranks on the node (0.5.23 managers/data_parallel_controller.py:421-449), each rank pinning
its own HiCache host pool; the reading counted tp x pp / nnodes ranks alone, so 2 replicas x 4 ranks x 300 GB on a
2 TB box were allowed. Such a launch is unknown now (each replica checks against the memory available when it
starts: which one fails is not read); with DP attention the replicas are inside the TP group, judged as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-host-pool-memory"
TB = 10**12


def _gate(tmp_path: Path, total: int, *flags: str) -> tuple[str, dict[str, Any] | None]:
    doc = json.loads(H200_NEWEST.read_text())  # (8 H200s of 150.75 GB)
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version="0.5.23", dist_version="0.5.23")
    # (imend8: all of it available when probed, the case these tests judge; less: test_imend8_hicache_available)
    facts["system"].update(memory_total_bytes=total, memory_limit_bytes=None, memory_available_bytes=total)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-hierarchical-cache", *flags]
    out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    return out["decision"], next((r for r in out.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("total", "flags"),
    [
        (2 * TB, ["--tp-size", "4", "--dp-size", "2", "--hicache-size", "300"]),  # 2400 GB on the node
        (2 * TB, ["--tp-size", "4", "--data-parallel-size", "2", "--hicache-size", "300"]),
        (2 * TB, ["--tp-size", "4", "--dp", "2", "--hicache-ratio", "2"]),  # up to 2412 GB: 4 ranks fit, not 8
    ],
)
def test_dp_replicas_together_past_the_memory_are_unknown(tmp_path: Path, total: int, flags: list[str]) -> None:
    # fails before: no reason (allowed: 4 ranks counted)
    decision, reason = _gate(tmp_path, total, *flags)
    assert reason is not None and reason["status"] == "unknown" and decision != "allow", json.dumps(reason)


@pytest.mark.parametrize(
    ("total", "flags"),
    [
        (2 * TB, ["--tp-size", "4", "--dp-size", "2", "--hicache-size", "200"]),  # 1600 GB fits
        (2 * TB, ["--tp-size", "4", "--dp-size", "2", "--enable-dp-attention", "--hicache-size", "300"]),
        (2 * TB, ["--tp-size", "4", "--hicache-size", "300"]),
    ],
)
def test_replicas_that_fit_or_dp_attention_are_judged_as_before(tmp_path: Path, total: int, flags: list[str]) -> None:
    assert _gate(tmp_path, total, *flags)[1] is None
