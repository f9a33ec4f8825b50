"""igap53 (a review of ifc53 / irev72's GB10 HiCache rule): --mem-fraction-static was taken as a bound on the host
pool whatever its value. On a GB10 the device pool takes F x the memory less the weights, and SGLang's host pool check
(0.5.23 mem_cache/pool_host/base.py:248-257) then finds about (1 - F) x the memory available, less its 10 GiB reserve
(:28, :104-107): at F = 0.95 below zero, so the pool (2.0 x the device pool by default) does not fit. Only a fraction
that leaves room for the pool at its largest takes the launch out; others are unknown (the weights and the page cache
decide); a --hicache-size above the whole memory is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-unified-memory-host-pool"


def _gb10(tmp_path: Path, release: str) -> Path:
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    facts["gpus"] = facts["gpus"][:1]
    facts["gpus"][0].update(name="NVIDIA GB10", compute_capability="12.1")
    topo = facts.get("topology")
    if isinstance(topo, dict):
        topo["gpu_count"] = 1
        topo["pairs"] = []
    facts["system"]["machine"] = "aarch64"
    path = tmp_path / f"facts-{release}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-hierarchical-cache", *flags]
    facts = _gb10(tmp_path, "0.5.23")
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    "flags",
    [
        ["--mem-fraction-static", "0.95"],
        ["--mem-fraction-static", "0.6"],
        ["--mem-fraction-static", "0.5", "--hicache-ratio", "1.5"],
        ["--mem-fraction-static", "0.88", "--hicache-size", "8"],
        ["--mem-fraction-static", "1.0"],
    ],
)
def test_a_fraction_that_may_leave_no_room_is_not_allowed(tmp_path: Path, flags: list[str]) -> None:
    # fails on the parent: any --mem-fraction-static took the launch out of the rule (allowed)
    doc = _gate(tmp_path, *flags)
    reason = _refusal(doc)
    assert doc["decision"] != "allow", flags
    assert reason is not None and reason["status"] in ("unknown", "blocked"), reason


@pytest.mark.parametrize(
    "flags",
    [
        ["--mem-fraction-static", "0.3"],  # 2 x 0.3 x 128 GB = 76.8 <= 0.7 x 128 GB less 10 GiB = 78.9
        ["--mem-fraction-static", "0.6", "--hicache-ratio", "0.25"],
        ["--mem-fraction-static", "0.7", "--hicache-size", "8"],
        ["--mem-fraction-static", "0.95", "--max-total-tokens", "65536"],  # (--max-total-tokens: as before)
    ],
)
def test_a_fraction_that_leaves_room_takes_the_launch_out(tmp_path: Path, flags: list[str]) -> None:
    # merged beside ifc54: the best case (no weights, no host use, no memory beyond the static pools) fits, which is
    # no allow on one shared memory: unknown, the figures in the message (the lead's merge, 2026-12-06)
    doc = _gate(tmp_path, *flags)
    reason = _refusal(doc)
    assert doc["decision"] != "allow", flags
    assert reason is not None and reason["status"] == "unknown", reason
    assert "not computed" in json.dumps(reason), reason


def test_a_host_pool_above_the_whole_memory_is_refused(tmp_path: Path) -> None:
    # fails on the parent: any --hicache-size above 0 was a bound
    doc = _gate(tmp_path, "--hicache-size", "200")
    reason = _refusal(doc)
    assert doc["decision"] == "refuse" and reason is not None and reason["status"] == "blocked", reason
