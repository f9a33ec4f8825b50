"""irunner3: the gate judges taskset / chrt / ionice on the CPUs, capabilities and RLIMIT_RTPRIO its own process
holds (the launch's where it runs here: runners.process_limits), so a decision kept under other ones is not this one's:
the gate cache's key holds them (a gate run under `taskset -c 1` or another user's capabilities was served the decision
kept for the whole box)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackcheck.assembly import gate_cache
from stackcheck.launch import runners

LAUNCH = ["taskset", "-c", "3", "python", "-m", "sglang.launch_server", "--model-path", "/m"]


def test_the_key_holds_the_process_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.cli import build_parser

    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    args = build_parser("gate").parse_args(["gate", "--dry-run", "--", *LAUNCH])
    keys = []
    for limits in ({"cpus": frozenset({0, 1, 2, 3}), "cap_eff": 0, "rtprio": 0},
                   {"cpus": frozenset({0, 1}), "cap_eff": 0, "rtprio": 0},
                   {"cpus": frozenset({0, 1}), "cap_eff": 1 << 23, "rtprio": 0},
                   {"cpus": frozenset({0, 1}), "cap_eff": 1 << 23, "rtprio": 99}):  # fmt: skip
        monkeypatch.setattr(runners, "process_limits", lambda limits=limits: dict(limits))
        slot = gate_cache.slot_for(args)
        assert slot is not None
        keys.append(slot.key)
    assert len(set(keys)) == 4  # (fails before: one key for all)
