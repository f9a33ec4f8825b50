"""HiCache on a GB10 (the fifty-third fact-check sample, row g6): the GB10's GPU memory is the host's own memory, and
SGLang (0.5.1-0.5.23) sizes HiCache's host KV pool at --hicache-ratio (2.0 by default) times the device KV pool, which
it sizes from most of that memory, then checks the host pool against the host's available memory and raises
ValueError 'Not enough host memory available'. The gate allowed `--enable-hierarchical-cache` there with only the note
that the flag is not read for features; it now refuses it unless a flag bounds either pool."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-unified-memory-host-pool"


def _box(tmp_path: Path, release: str, name: str, cc: str, machine: str, count: int) -> Path:
    """tests/cases/h200-newest with SGLang RELEASE and COUNT GPUs called NAME at compute capability CC on MACHINE."""
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    facts["gpus"] = facts["gpus"][:count]
    for gpu in facts["gpus"]:
        gpu.update(name=name, compute_capability=cc)
    topo = facts.get("topology")
    if isinstance(topo, dict):
        topo["gpu_count"] = count
        topo["pairs"] = [p for p in topo.get("pairs") or [] if p.get("a", 0) < count and p.get("b", 0) < count]
    facts["system"]["machine"] = machine
    path = tmp_path / f"facts-{release}-{cc}.json"
    path.write_text(json.dumps(doc))
    return path


def _gb10(tmp_path: Path, release: str) -> Path:
    return _box(tmp_path, release, "NVIDIA GB10", "12.1", "aarch64", 1)


def _gate(facts: Path, model: Path, *flags: str) -> dict[str, Any]:
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize("release", ["0.5.1", "0.5.11", "0.5.18", "0.5.23"])
def test_hicache_on_a_gb10_is_refused(tmp_path: Path, release: str) -> None:
    doc = _gate(_gb10(tmp_path, release), model_dir(tmp_path, "llama3", LLAMA3), "--enable-hierarchical-cache")
    assert doc["decision"] == "refuse"
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "blocked" and reason["effect"] == "crash"


@pytest.mark.parametrize(
    "bound",
    [
        ["--hicache-size", "8"],
        ["--hicache-ratio", "0.5"],
        ["--mem-fraction-static", "0.3"],
        ["--max-total-tokens", "65536"],
    ],
)
def test_a_flag_that_bounds_a_pool_makes_the_rule_unknown(tmp_path: Path, bound: list[str]) -> None:
    # ifc54: a bound given does not show the host pool fits a GB10's memory (was: out of the rule, allowed)
    doc = _gate(_gb10(tmp_path, "0.5.18"), model_dir(tmp_path, "llama3", LLAMA3), "--enable-hierarchical-cache", *bound)
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "unknown"
    assert doc["decision"] != "allow"


def test_gb10_without_hicache_is_allowed(tmp_path: Path) -> None:
    doc = _gate(_gb10(tmp_path, "0.5.18"), model_dir(tmp_path, "llama3", LLAMA3))
    assert _refusal(doc) is None
    assert doc["decision"] == "allow"


@pytest.mark.parametrize(
    ("name", "cc"), [("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"), ("NVIDIA H200", "9.0")]
)
def test_gpus_with_their_own_memory_keep_hicache(tmp_path: Path, name: str, cc: str) -> None:
    facts = _box(tmp_path, "0.5.18", name, cc, "x86_64", 1)
    doc = _gate(facts, model_dir(tmp_path, "llama3", LLAMA3), "--enable-hierarchical-cache")
    assert _refusal(doc) is None
    assert doc["decision"] == "allow"


def test_the_0_5_23_alias_counts(tmp_path: Path) -> None:
    doc = _gate(_gb10(tmp_path, "0.5.23"), model_dir(tmp_path, "llama3", LLAMA3), "--enable-hicache")
    assert doc["decision"] == "refuse"
    assert _refusal(doc) is not None
