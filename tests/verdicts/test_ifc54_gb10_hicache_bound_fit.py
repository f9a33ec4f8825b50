"""ifc54 (the fifty-fourth fact-check sample, rows h1 and h2: a GB10, `--enable-hierarchical-cache --hicache-size 40`
at 0.5.18 and `--hicache-size 8` at 0.5.23, both allowed). A bound given does not make HiCache's host pool fit a GB10's
one memory. SGLang's default --mem-fraction-static leaves only its reserve outside the static pools (0.5.18
server_args.py:4950-4983, 0.5.23 arg_groups/memory_hook.py:300-327: reserved_mem at least 10 GiB above 60 GiB of GPU
memory, the fraction (total - reserved) / total), and the host pool's check wants the pool's bytes below psutil's
available memory less HICACHE_HOST_MEMORY_RESERVE_BYTES, 10 GiB (0.5.18 mem_cache/pool_host/base.py:25, :141-150;
0.5.23 pool_host/base.py:28, :84-108, :248-257): on a GB10 what the device pools leave is about that reserve, so a
--hicache-size of some GB raises ValueError at start (inferred, not run on a GB10). --hicache-ratio below 2.0 still
asks for that ratio of the device pool (most of the memory); a smaller --mem-fraction-static or a --max-total-tokens
bounds the device pool but the fit depends on the weights and the size asked. So on sm_121 a bound makes the rule
unknown (whether the pool fits is not computed), never an allow; with no bound it is still refused; other GPUs keep
their allow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-unified-memory-host-pool"


def _facts(tmp_path: Path, release: str, gb10: bool) -> Path:
    doc = json.loads(H200_NEWEST.read_text())
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    if gb10:
        facts["gpus"] = facts["gpus"][:1]
        facts["gpus"][0].update(name="NVIDIA GB10", compute_capability="12.1")
        topo = facts.get("topology")
        if isinstance(topo, dict):
            topo["gpu_count"] = 1
            topo["pairs"] = []
        facts["system"]["machine"] = "aarch64"
    path = tmp_path / f"facts-{release}-{'gb10' if gb10 else 'h200'}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, release: str, *flags: str, gb10: bool = True) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), *flags]
    facts = _facts(tmp_path, release, gb10)
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _reason(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.18", ["--enable-hierarchical-cache", "--hicache-size", "40"]),  # row h1
        ("0.5.23", ["--enable-hierarchical-cache", "--hicache-size", "8"]),  # row h2
        ("0.5.23", ["--enable-hicache", "--hicache-size", "8"]),
        ("0.5.11", ["--enable-hierarchical-cache", "--hicache-ratio", "1.2"]),
        ("0.5.18", ["--enable-hierarchical-cache", "--mem-fraction-static", "0.8"]),
        ("0.5.23", ["--enable-hierarchical-cache", "--max-total-tokens", "65536"]),
    ],
)
def test_a_bound_on_a_gb10_is_not_an_allow(tmp_path: Path, release: str, flags: list[str]) -> None:
    # before: allow (a bound took the launch out of the rule, not judged)
    doc = _gate(tmp_path, release, *flags)
    assert doc["decision"] != "allow", flags
    reason = _reason(doc)
    assert reason is not None and reason["status"] != "blocked", reason
    assert "not computed" in json.dumps(reason)


def test_no_bound_on_a_gb10_is_still_refused(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.18", "--enable-hierarchical-cache")
    reason = _reason(doc)
    assert doc["decision"] == "refuse"
    assert reason is not None and reason["status"] == "blocked"


@pytest.mark.parametrize("flags", [["--hicache-size", "8"], ["--hicache-ratio", "1.2"], []])
def test_other_gpus_keep_their_allow(tmp_path: Path, flags: list[str]) -> None:
    doc = _gate(tmp_path, "0.5.18", "--enable-hierarchical-cache", *flags, gb10=False)
    assert _reason(doc) is None
    assert doc["decision"] == "allow", doc.get("reasons")
