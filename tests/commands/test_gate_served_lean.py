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
