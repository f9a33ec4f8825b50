"""irev82: imend5 made recommend refuse a given command whose words before the launch the gate refuses (a NAME=VALUE
word a runner execs), but only those: the runner refusals of this session's second wave (imend14's print-and-exit
options, irobust12's values their programs refuse and irev82's ionice class, imend12's timeout DURATION) were written
back unchanged with the gate's refusal as a note and exit 0, a line the gate refuses. Now no line is written and
recommend exits 1; a runner the gate reads runs the line as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from recommend_cli import clean_recommend_env, recommend_json

__all__ = ["clean_recommend_env"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.mark.parametrize(
    "before",
    [["nice", "--help"], ["stdbuf", "--version"], ["nice", "-n", "abc"], ["ionice", "-c", "4"], ["timeout", "abc"],
     ["taskset", "-h"]],
    ids=lambda w: " ".join(w),
)  # fmt: skip
def test_a_runner_the_gate_refuses_gets_no_line(before: list[str]) -> None:
    rc, doc = recommend_json("--facts", str(FACTS), "--no-plan", "--", *before, *LAUNCH)
    assert rc == 1 and doc["command"] == [], doc["command"]  # (fails before: exit 0, the command written back)
    assert any(f"({before[0]} unknown" in n for n in doc["notes"]), doc["notes"]


@pytest.mark.parametrize("before", [["nice", "-n", "5"], ["ionice", "-c", "2", "-n", "0"], ["timeout", "600"]])
def test_a_runner_the_gate_reads_keeps_its_line(before: list[str]) -> None:
    _, doc = recommend_json("--facts", str(FACTS), "--no-plan", "--", *before, *LAUNCH)
    assert doc["command"][: len(before)] == before, doc["notes"]
