"""imend9 (iallow1's leftover): find_launch follows each `env` before the launch by calling itself, so about 1,000
`nohup env -u X` levels (4,000 words, under the command line's 4,096) raised RecursionError: a traceback (exit 4),
after quadratic time. Past MAX_NESTED_ENV levels the walk stops now and the launch is refused as unknown (fail
closed), in linear time; fewer levels read as before."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_stackcheck

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]
FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize("levels", [1_000, 2_500])
def test_deep_env_nesting_is_unknown_in_linear_time(levels: int, mapping: Any) -> None:
    start = time.monotonic()
    d = gate.derive(["nohup", "env", "-u", "X"] * levels + LAUNCH, mapping, {})
    assert time.monotonic() - start < 15
    assert ("env", "unknown") in [(p.subject, p.status) for p in d.problems], d.problems[:3]


def test_a_few_levels_read_as_before(mapping: Any) -> None:
    d = gate.derive(["nohup", "env", "-u", "X"] * 10 + ["env", "SGLANG_ENABLE_JIT_DEEPGEMM=0", *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
    assert d.env.get("SGLANG_ENABLE_JIT_DEEPGEMM") is False
    assert [p.subject for p in d.problems if p.status != "note"] == []


def test_the_gate_refuses_without_a_traceback() -> None:
    words = ["nohup", "env", "-u", "X"] * 1_000
    proc = run_stackcheck("gate", "--facts", str(FACTS), "--", *words, *LAUNCH, timeout=300)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert "env [command]: unknown" in proc.stdout
