"""imend9 (iallow1's leftover): find_launch follows each `env` before the launch by calling itself, so about 1,000
`nohup env -u X` levels (4,000 words, under the command line's 4,096) raised RecursionError: a traceback (exit 4),
after quadratic time. imend9 bounded the levels (unknown past 64); irobust8, merged beside it, made find_launch step
into each `env` in a loop (no recursion, no 2**n rescans), which the merge kept: every level is read now, in linear
time, with no traceback and the launch found behind them."""

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
def test_deep_env_nesting_is_read_in_linear_time(levels: int, mapping: Any) -> None:
    start = time.monotonic()
    d = gate.derive(["nohup", "env", "-u", "X"] * levels + LAUNCH, mapping, {})
    assert time.monotonic() - start < 15
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
    assert [p.subject for p in d.problems if p.status != "note"] == [], d.problems[:3]


def test_a_few_levels_read_as_before(mapping: Any) -> None:
    d = gate.derive(["nohup", "env", "-u", "X"] * 10 + ["env", "SGLANG_ENABLE_JIT_DEEPGEMM=0", *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
    assert d.env.get("SGLANG_ENABLE_JIT_DEEPGEMM") is False
    assert [p.subject for p in d.problems if p.status != "note"] == []


def test_the_gate_answers_without_a_traceback() -> None:
    words = ["nohup", "env", "-u", "X"] * 1_000
    proc = run_stackcheck("gate", "--facts", str(FACTS), "--dry-run", "--", *words, *LAUNCH, timeout=300)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-500:]
    assert "decision:" in proc.stdout and "env [command]" not in proc.stdout
