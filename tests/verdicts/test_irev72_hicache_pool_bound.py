"""irev72 (a review of ifc53's GB10 HiCache rule): `--hicache-size 0` is SGLang's default (0.5.1-0.5.23: the host
pool is sized from --hicache-ratio where host_size is not above 0; 0.5.18 mem_cache/pool_host/base.py:119-124, 0.5.1
memory_pool_host.py:74-77, 0.5.23 pool_host/base.py:221-226) and a ratio of 2.0 or more asks for at least the default
pool, so neither bounds the host pool. The gate counted any of the four flags as given and allowed these launches on
a GB10; they ask for what the rule refuses."""

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
    facts = _gb10(tmp_path, "0.5.18")
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    "flags",
    [
        ["--hicache-size", "0"],  # SGLang's default: sized from the ratio
        ["--hicache-size=-4"],
        ["--hicache-ratio", "2"],  # the default ratio, given
        ["--hicache-ratio", "3.5"],
        ["--hicache-size", "0", "--hicache-ratio", "2.0"],
        ["--hicache-size", "8", "--hicache-size", "0"],  # argparse keeps the last
    ],
)
def test_flags_that_do_not_bound_the_host_pool_are_refused(tmp_path: Path, flags: list[str]) -> None:
    doc = _gate(tmp_path, *flags)
    reason = _refusal(doc)
    assert doc["decision"] == "refuse", flags
    assert reason is not None and reason["status"] == "blocked"


@pytest.mark.parametrize(
    "flags",
    [
        ["--hicache-size", "8"],
        ["--hicache-size", "8", "--hicache-ratio", "4"],  # the size overrides the ratio
        ["--hicache-ratio", "1.5"],
        ["--hicache-size", "0", "--mem-fraction-static", "0.3"],
        ["--hicache-ratio", "2", "--max-total-tokens", "65536"],
    ],
)
def test_flags_that_bound_a_pool_make_the_rule_unknown(tmp_path: Path, flags: list[str]) -> None:
    # ifc54: a bound given does not show the host pool fits a GB10's memory (was: out of the rule, allowed)
    doc = _gate(tmp_path, *flags)
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "unknown", flags
    assert doc["decision"] != "allow"


def test_a_size_that_is_no_number_is_not_passed(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "--hicache-size", "lots")
    assert doc["decision"] != "allow"
