"""imend8: HiCache's host-pool rule (refusal hicache-host-pool-memory) compared the pools with MemTotal (or the cgroup's
limit), but every SGLang release 0.5.10-0.5.23 checks them against the memory available when each rank builds its pool
(psutil.virtual_memory().available less 10 GiB; 0.5.21+ also the cgroup's headroom: limit less usage less page
cache): a box of 2 TB with 500 GB available was allowed 800 GB of pools, and SGLang raises 'Not enough host memory'.
The system probe now gives memory_available_bytes (MemAvailable, or the cgroup headroom where lower); the rule allows
only what fits that less the reserve and 4 GiB a rank, unknown else or where the facts lack it; beyond MemTotal less
the reserve still refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import H200_NEWEST, LLAMA3, cli_json, model_dir

from stackcheck.probes.system import available_memory, own_cgroup_headroom

RULE = "refusal hicache-host-pool-memory"
TB, GB, GIB = 10**12, 10**9, 2**30


def _reason(tmp_path: Path, available: int | None, *flags: str, release: str = "0.5.23") -> dict[str, Any] | None:
    doc = json.loads(H200_NEWEST.read_text())  # (8 H200s of 150.75 GB)
    facts = doc["facts"]
    facts["packages"]["sglang"].update(version=release, dist_version=release)
    facts["system"].update(memory_total_bytes=2 * TB, memory_limit_bytes=None)
    if available is not None:
        facts["system"]["memory_available_bytes"] = available
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--enable-hierarchical-cache", *flags]
    out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    return next((r for r in out.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("available", "flags", "release"),
    [
        (500 * GB, ["--tp-size", "8", "--hicache-size", "100"], "0.5.23"),  # 800 GB against 500 GB available
        (500 * GB, ["--tp-size", "8", "--hicache-size", "100"], "0.5.10"),
        (None, ["--tp-size", "8", "--hicache-size", "100"], "0.5.23"),  # (not in the facts)
        # (within the margin: 800 GB of pools, 800 GB + 10 GiB + 8 x 4 GiB - 1 available)
        (800 * GB + 10 * GIB + 32 * GIB - 1, ["--tp-size", "8", "--hicache-size", "100"], "0.5.23"),
        (1 * TB, ["--tp-size", "4", "--hicache-ratio", "2"], "0.5.18"),  # (up to 1206 GB)
    ],
)
def test_a_pool_the_available_memory_may_not_hold_is_unknown(
    tmp_path: Path, available: int | None, flags: list[str], release: str
) -> None:
    # fails before: no reason (allowed against MemTotal)
    reason = _reason(tmp_path, available, *flags, release=release)
    assert reason is not None and reason["status"] == "unknown", json.dumps(reason)


def test_a_pool_that_fits_what_is_available_is_allowed(tmp_path: Path) -> None:
    assert _reason(tmp_path, 800 * GB + 10 * GIB + 32 * GIB, "--tp-size", "8", "--hicache-size", "100") is None
    assert _reason(tmp_path, int(1.9 * TB), "--tp-size", "4", "--hicache-ratio", "2", release="0.5.18") is None


def test_beyond_the_whole_memory_is_still_refused(tmp_path: Path) -> None:
    reason = _reason(tmp_path, 2 * TB, "--tp-size", "8", "--hicache-size", "300")
    assert reason is not None and reason["status"] == "blocked"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_probe_reads_mem_available_and_the_cgroup_headroom(tmp_path: Path) -> None:
    meminfo, cgroup, mount = tmp_path / "meminfo", tmp_path / "cgroup", tmp_path / "cg"
    _write(meminfo, "MemTotal:       2000000 kB\nMemFree:   100 kB\nMemAvailable:    1000000 kB\n")
    _write(cgroup, "0::/job\n")
    assert available_memory(str(meminfo), str(cgroup), str(mount)) == 1000000 * 1024  # (no limit)
    _write(mount / "job" / "memory.max", f"{800 * 1024 * 1024}\n")
    assert own_cgroup_headroom(str(cgroup), str(mount)) == (None, False)  # (a limit, its usage not read)
    assert available_memory(str(meminfo), str(cgroup), str(mount)) is None
    _write(mount / "job" / "memory.current", f"{500 * 1024 * 1024}\n")
    _write(
        mount / "job" / "memory.stat", f"anon 1\nactive_file {100 * 1024 * 1024}\ninactive_file {100 * 1024 * 1024}\n"
    )
    # (800 MiB less 500 MiB used plus 200 MiB of page cache: 500 MiB)
    assert own_cgroup_headroom(str(cgroup), str(mount)) == (500 * 1024 * 1024, True)
    assert available_memory(str(meminfo), str(cgroup), str(mount)) == 500 * 1024 * 1024
    _write(mount / "memory" / "memory.limit_in_bytes", f"{300 * 1024 * 1024}\n")
    _write(cgroup, "0::/job\n4:memory:/\n")
    _write(mount / "memory" / "memory.usage_in_bytes", f"{100 * 1024 * 1024}\n")
    _write(mount / "memory" / "memory.stat", "total_active_file 0\ntotal_inactive_file 0\n")
    assert own_cgroup_headroom(str(cgroup), str(mount)) == (200 * 1024 * 1024, True)
    assert available_memory(str(tmp_path / "absent"), str(cgroup), str(mount)) is None


def test_the_measurement_is_left_out_of_the_cache_digest_and_its_reader_is_marked() -> None:
    # (MemAvailable changes on every run: in the facts' digest no gate decision would be kept; left out, a decision
    # that read it is not kept: BoxMemory.read_available, commands/gate.py)
    from stackcheck.assembly.plan_cache import _described
    from stackcheck.launch.refusals import BoxMemory, _hicache_available

    facts = {"system": {"os": "x", "memory_available_bytes": 5}}
    assert _described(facts) == {"system": {"os": "x"}}
    memory = BoxMemory(2 * TB, None, TB)
    assert not memory.read_available
    _hicache_available(GB, 1, memory, "w", "r")
    assert memory.read_available


def test_a_gate_decision_that_read_the_available_memory_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # (the facts' digest leaves memory_available_bytes out: a decision kept would be served after it changed)
    from stackcheck.cli import main
    from stackcheck.commands import gate as gate_command

    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    served: list[int] = []
    serve = gate_command.Kept.serve

    def spy(kept: Any, command: Any) -> int:
        served.append(1)
        return serve(kept, command)

    monkeypatch.setattr(gate_command.Kept, "serve", spy)
    doc = json.loads(H200_NEWEST.read_text())
    doc["facts"]["system"].update(memory_total_bytes=2 * TB, memory_limit_bytes=None, memory_available_bytes=2 * TB)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp-size", "8"]
    for flags in ([], ["--enable-hierarchical-cache", "--hicache-size", "100"]):
        for _ in range(2):
            main(["gate", "--dry-run", "--facts", str(path), "--", *line, *flags])
            capsys.readouterr()
    assert len(served) == 1  # (the launch without HiCache served the second time, the one with it not)
