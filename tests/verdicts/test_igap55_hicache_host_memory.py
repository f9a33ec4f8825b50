"""igap55: HiCache's host pool against the box's memory on GPUs other than the GB10 (refusal hicache-host-pool-memory).
Each rank pins --hicache-size GB (or --hicache-ratio x its device KV pool) and SGLang checks it against the host's
available memory less 10 GiB, split among the node's ranks from 0.5.19 (pool_host/base.py ranks_per_host), raising
'Not enough host memory available'. The gate allowed every such launch on a box that is no GB10."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

RULE = "refusal hicache-host-pool-memory"
TB = 10**12


def _box(tmp_path: Path, release: str, total: int | None, limit: int | None = None, cc: str | None = None) -> Path:
    doc = json.loads(H200_NEWEST.read_text())  # (8 H200s of 150.75 GB)
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    if total is not None:
        # (imend8: all of it available when probed, the case these tests judge; less: test_imend8_hicache_available)
        facts["system"].update(memory_total_bytes=total, memory_limit_bytes=limit, memory_available_bytes=total)
    if cc is not None:
        for gpu in facts["gpus"]:
            gpu["compute_capability"] = cc
    path = tmp_path / f"facts-{release}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(facts: Path, tmp_path: Path, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-hierarchical-cache", *flags]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("release", "total", "limit", "flags"),
    [
        ("0.5.23", 2 * TB, None, ["--tp-size", "8", "--hicache-size", "300"]),  # 2400 GB on the node
        ("0.5.19", 2 * TB, None, ["--tp-size", "8", "--hicache-size", "300"]),  # (the split from 0.5.19)
        ("0.5.18", 2 * TB, None, ["--tp-size", "8", "--hicache-size", "2100"]),  # one rank's pool alone
        ("0.5.23", 4 * TB, 1 * TB, ["--tp-size", "8", "--hicache-size", "200"]),  # the cgroup's limit
        ("0.5.23", 2 * TB, None, ["--tp-size", "4", "--pp-size", "2", "--enable-hicache", "--hicache-size", "300"]),
    ],
)
def test_a_host_pool_beyond_the_memory_is_refused(
    tmp_path: Path, release: str, total: int, limit: int | None, flags: list[str]
) -> None:
    # fails on the parent: allowed (only a GB10 was judged)
    doc = _gate(_box(tmp_path, release, total, limit), tmp_path, *flags)
    reason = _refusal(doc)
    assert doc["decision"] == "refuse" and reason is not None and reason["status"] == "blocked", json.dumps(reason)
    assert "GB" in json.dumps(reason)


@pytest.mark.parametrize(
    ("release", "total", "flags"),
    [
        ("0.5.18", 2 * TB, ["--tp-size", "8", "--hicache-size", "300"]),  # (oversubscribed, no split before 0.5.19)
        ("0.5.23", 2 * TB, ["--tp-size", "8", "--hicache-ratio", "2"]),  # (2 x 150.75 GB x 8 may not fit)
        ("0.5.18", 1 * TB, ["--tp-size", "8"]),  # (the default ratio 2.0, no auto-sizing before 0.5.21)
    ],
)
def test_a_pool_that_depends_on_what_the_facts_lack_is_unknown(
    tmp_path: Path, release: str, total: int, flags: list[str]
) -> None:
    doc = _gate(_box(tmp_path, release, total), tmp_path, *flags)
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "unknown" and doc["decision"] != "allow", json.dumps(reason)


@pytest.mark.parametrize(
    ("release", "total", "flags", "cc"),
    [
        ("0.5.23", 2 * TB, ["--tp-size", "8", "--hicache-size", "200"], None),  # 1600 GB fits
        ("0.5.23", 4 * TB, ["--tp-size", "8", "--hicache-ratio", "2"], None),  # even a pool of the whole GPU fits
        ("0.5.23", 1 * TB, ["--tp-size", "8"], None),  # (0.5.21+: --hicache-host-memory-fraction sizes it to fit)
        ("0.5.23", None, ["--tp-size", "8", "--hicache-size", "900"], None),  # (the box's memory not in the facts)
        ("0.5.23", 2 * TB, ["--hicache-size", "5000"], "12.1"),  # (a GB10: hicache-unified-memory-host-pool)
    ],
)
def test_a_pool_that_fits_or_is_not_judged_here_is_not_refused(
    tmp_path: Path, release: str, total: int | None, flags: list[str], cc: str | None
) -> None:
    assert _refusal(_gate(_box(tmp_path, release, total, cc=cc), tmp_path, *flags)) is None


def test_the_system_probe_reads_the_memory_and_the_cgroup_limit(tmp_path: Path) -> None:
    from stackcheck.probes.system import cgroup_memory_limit, host_memory

    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       16384 kB\nMemFree:         1024 kB\n")
    assert host_memory(str(meminfo)) == 16384 * 1024
    assert host_memory(str(tmp_path / "none")) is None
    v2, v1 = tmp_path / "memory.max", tmp_path / "limit_in_bytes"
    v2.write_text("max\n")
    assert cgroup_memory_limit((str(v2),)) == (None, True)
    v1.write_text("9223372036854771712\n")
    assert cgroup_memory_limit((str(tmp_path / "no"), str(v1))) == (None, True)
    v1.write_text("8589934592\n")
    assert cgroup_memory_limit((str(v1),)) == (8589934592, True)
    assert cgroup_memory_limit((str(tmp_path / "no"),)) == (None, False)
