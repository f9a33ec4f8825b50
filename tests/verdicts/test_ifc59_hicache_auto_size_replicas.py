"""ifc59 (beside the fifty-ninth sample's row h2): SGLang 0.5.21-0.5.23 size HiCache's host pools themselves where
neither --hicache-ratio nor --hicache-size is given (--hicache-host-memory-fraction 0.8), and the gate allowed every
such launch. But each DP replica (--dp-size without --enable-dp-attention) sizes its own ranks' pools to 0.8 of the
memory available when it starts, split among its own WORLD group (tp x pp) alone, and the replicas start together:
8 replicas of `--tp 1` on a 1 TB host may each take 0.8 of it. Unknown now where the default ratio 2.0 x a device
pool of the whole GPU for every replica's ranks exceeds the memory less the reserve; allowed where it fits (no
replica cuts its ratio), and a single server (or DP attention) as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-host-pool-memory"
TB = 10**12


def _gate(tmp_path: Path, release: str, total: int, *flags: str) -> tuple[str, dict[str, Any] | None]:
    doc = json.loads(H200_NEWEST.read_text())  # (8 H200s of 150.75 GB)
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    # (irev76: this branch reads the memory available too: all of it available when probed, as irev74's tests give)
    facts["system"].update(memory_total_bytes=total, memory_limit_bytes=None, memory_available_bytes=total)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-hierarchical-cache", *flags]
    out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    return out["decision"], next((r for r in out.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize("release", ["0.5.21", "0.5.23"])
@pytest.mark.parametrize(
    ("total", "flags"),
    [
        (1 * TB, ["--tp", "1", "--dp-size", "8"]),  # up to 8 x 301.5 GB
        (1 * TB, ["--tp", "2", "--dp-size", "2"]),  # up to 1206 GB
        (2 * TB, ["--tp", "2", "--data-parallel-size", "4"]),  # up to 2412 GB
    ],
)
def test_replicas_sizing_alone_past_the_memory_are_unknown(
    tmp_path: Path, release: str, total: int, flags: list[str]
) -> None:
    # fails before: no reason (allowed: 'SGLang sizes the pools to fit the memory')
    decision, reason = _gate(tmp_path, release, total, *flags)
    assert reason is not None and reason["status"] == "unknown" and decision != "allow", json.dumps(reason)
    assert "as if it were alone" in json.dumps(reason)


@pytest.mark.parametrize(
    ("total", "flags"),
    [
        (2 * TB, ["--tp", "2", "--dp-size", "2"]),  # up to 1206 GB: fits
        (1 * TB, ["--tp", "8"]),
        (1 * TB, ["--tp", "8", "--dp-size", "8", "--enable-dp-attention"]),
    ],
)
def test_replicas_that_fit_and_one_server_are_allowed(tmp_path: Path, total: int, flags: list[str]) -> None:
    assert _gate(tmp_path, "0.5.23", total, *flags)[1] is None
