"""A gate served from its kept decision starts the GPU usage reading from stackcheck.launch.usage, without importing
stackcheck.launch.gate_preflight (~90 KB of bytecode, the preflight's wiring, which a hit never runs); the gate's
usual path still finds the reading where it did (gate_preflight.start_usage, EarlyUsage)."""

from __future__ import annotations

from pathlib import Path

from cli_process import modules_at_exit

GATE = ("gate", "--dry-run", "--", "python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1")


def test_a_served_gate_imports_no_gate_preflight(tmp_path: Path) -> None:
    first = modules_at_exit(tmp_path, *GATE)  # (decides, and keeps the decision)
    assert "stackcheck.launch.gate_preflight" in first
    served = modules_at_exit(tmp_path, *GATE)
    assert "stackcheck.assembly.gate_cache" in served and "stackcheck.launch.refusals" not in served  # (a hit)
    assert "stackcheck.launch.gate_preflight" not in served
    assert "stackcheck.launch.usage" in served  # (its usage read replayed)


def test_the_usual_path_finds_the_reading_where_it_did() -> None:
    from stackcheck.launch import gate_preflight, usage

    assert gate_preflight.start_usage is usage.start_usage and gate_preflight.EarlyUsage is usage.EarlyUsage


def test_a_served_gate_imports_neither_the_preflight_package_nor_packaging(tmp_path: Path) -> None:
    """The replay of a kept decision's host reads (/dev/shm, ulimit -l, the port) imports the readers' own module,
    stackcheck.launch.host_readers, not the preflight package (its __init__, host checks, results: ~5 M instructions);
    the caches' code stamp reads packaging by its files (plan_cache._library_stamp), not by importing it (iperf23)."""
    first = modules_at_exit(tmp_path, *GATE)
    assert "stackcheck.launch.preflight" in first  # (the decision itself runs the preflight)
    served = modules_at_exit(tmp_path, *GATE)
    assert "stackcheck.assembly.gate_cache" in served and "stackcheck.launch.refusals" not in served  # (a hit)
    assert "stackcheck.launch.host_readers" in served  # (its host reads replayed)
    assert not {m for m in served if m == "stackcheck.launch.preflight" or m.startswith("stackcheck.launch.preflight.")}
    assert "packaging" not in served


def test_the_preflight_reads_the_host_through_the_same_readers() -> None:
    """One place to patch a reading for the decision and for its replay alike (tests/assembly/test_gate_cache.py)."""
    from stackcheck.launch import host_readers
    from stackcheck.launch.preflight import host

    for name in ("read_shm", "read_memlock", "port_free", "ShmReading", "SHM_PATH", "loopback_for", "localhost_is_v6"):
        assert getattr(host, name) is getattr(host_readers, name), name
