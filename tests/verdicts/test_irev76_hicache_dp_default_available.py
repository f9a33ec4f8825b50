"""irev76 (review of where imend8's HiCache rule on the memory available met ifc59's DP-replica default sizing):
on SGLang 0.5.21+ without --hicache-ratio / --hicache-size, --dp-size replicas without --enable-dp-attention each
size their ranks' pools as if alone, and the replicas start together; ifc59's branch allowed them where the default
ratio 2.0 x a device pool of the whole GPU for every rank of every replica fits MemTotal less the reserve, the
comparison imend8 replaced elsewhere with the memory available when probed. A 2 TB box with 600 GB available was
allowed 2 replicas x 2 ranks of up to 1206 GB of pools. Now that branch goes through the available-memory reading
(_hicache_available): unknown where it may not hold them, allowed where it does, and such a decision is not kept."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-host-pool-memory"
TB, GB = 10**12, 10**9
FLAGS = ["--tp-size", "2", "--dp-size", "2"]  # (2 replicas x 2 ranks x 2.0 x 150.75 GB = 1206 GB at most)


def _gate(tmp_path: Path, available: int) -> tuple[str, dict[str, Any] | None]:
    doc = json.loads(H200_NEWEST.read_text())  # (8 H200s of 150.75 GB)
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version="0.5.23", dist_version="0.5.23")
    facts["system"].update(memory_total_bytes=2 * TB, memory_limit_bytes=None, memory_available_bytes=available)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-hierarchical-cache", *FLAGS]
    out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    return out["decision"], next((r for r in out.get("reasons") or [] if r.get("feature") == RULE), None)


def test_default_sized_dp_replicas_past_the_memory_available_are_unknown(tmp_path: Path) -> None:
    # fails before: no reason (allowed: 1206 GB compared with 2 TB less the reserve, not with the 600 GB available)
    decision, reason = _gate(tmp_path, 600 * GB)
    assert reason is not None and reason["status"] == "unknown" and decision != "allow", json.dumps(reason)
    assert "available" in json.dumps(reason)


def test_default_sized_dp_replicas_within_the_memory_available_are_allowed(tmp_path: Path) -> None:
    assert _gate(tmp_path, 2 * TB)[1] is None


def test_the_reading_marks_the_decision_not_to_be_kept() -> None:
    # (the branch now reads the memory available: BoxMemory.read_available, which commands/gate.py keeps no decision of)
    from stackcheck.launch import refusals

    memory = refusals.BoxMemory(2 * TB, int(150.75 * GB), 2 * TB)

    from types import SimpleNamespace

    derived = SimpleNamespace(
        options={"--dp-size": 2}, sglang_args=["--tp-size", "2", "--dp-size", "2"], other_cgroup=None
    )

    values = {"hierarchical_cache": True, "tp_size": 2, "pp_size": 1, "nnodes": 1}
    got = refusals._hicache_host_over_memory(derived, None, values, memory, "0.5.23")  # type: ignore[arg-type]
    assert getattr(got, "holds", got) is False
    assert memory.read_available
