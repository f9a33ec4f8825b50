"""irobust7: the refusal hicache-host-pool-memory (igap55) wrote sizes in GB with `n / 1e9`, which raises OverflowError
for an int past 1e308: a facts file whose system.memory_total_bytes or gpus[].memory_bytes is 10**400 (the report
schema takes any integer), or `--hicache-size` of 400 digits, stopped the gate with an internal error, exit 4. Now a
memory size of 2**62 bytes or more (cgroup v1's "no limit") is not read, as a size that is no positive int was, and
a pool that large is written by its digit count; the refusal still holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-host-pool-memory"
HUGE = 10**400


def _box(tmp_path: Path, total: int | None, gpu: int | None = None, limit: int | None = None) -> Path:
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version="0.5.23", dist_version="0.5.23")
    facts["system"].update(memory_total_bytes=total, memory_limit_bytes=limit)
    if gpu is not None:
        for g in facts["gpus"]:
            g["memory_bytes"] = gpu
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(facts: Path, tmp_path: Path, *flags: str) -> tuple[int, dict[str, Any]]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-hierarchical-cache", *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("total", "gpu", "limit", "flags", "status"),
    [
        (HUGE, None, None, ["--hicache-size", "10"], None),  # (not read: not judged, as without the field)
        (2 * 10**12, None, HUGE, ["--tp-size", "8", "--hicache-size", "300"], "blocked"),  # (the limit: none)
        (2 * 10**12, HUGE, None, ["--hicache-ratio", "2"], "unknown"),  # (the GPUs' memory not read)
        (2 * 10**12, None, None, ["--hicache-size", "9" * 400], "blocked"),
    ],
    ids=["total", "limit", "gpu", "size"],
)
def test_a_huge_size_is_no_crash(
    tmp_path: Path, total: int, gpu: int | None, limit: int | None, flags: list[str], status: str | None
) -> None:
    # fails before: exit 4 (OverflowError: int too large to convert to float)
    rc, doc = _gate(_box(tmp_path, total, gpu, limit), tmp_path, *flags)
    assert rc in (0, 1)
    reason = _refusal(doc)
    assert (reason or {}).get("status") == status, json.dumps(reason)
    assert len(json.dumps(reason)) < 4000
