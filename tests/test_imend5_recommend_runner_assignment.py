"""imend5: recommend proposed a line the gate refuses. A NAME=VALUE word that a runner before the launch execs as its
program (`nice -n 5 A=1 python -m sglang.launch_server ...`, `nohup A=1 ...`, `timeout 600 A=1 ...`, or the command's
first word) is refused by the gate (irobust5, ifc49: no program of that name, exit 127), and recommend keeps the words
before the launch as given: its line was refused the same way. Now no line is written: the changes are listed to make
by hand, with the gate's refusal, exit 1 (as for `nohup env -i`, irobust4)."""

from __future__ import annotations

import pytest
from launch.test_recommend import SEED_AFTER
from recommend_cli import clean_recommend_env, recommend_json  # noqa: F401 (the autouse fixture)

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "8"]


@pytest.mark.parametrize(
    "prefix",
    [
        ["nice", "-n", "5", "A=1"],
        ["nohup", "A=1"],
        ["timeout", "600", "A=1"],
        ["A=1"],
        ["nice", "-n", "5", "nohup", "SGLANG_ENABLE_JIT_DEEPGEMM=0"],
    ],
)
def test_no_line_is_proposed_where_the_gate_refuses_the_words_before_the_launch(prefix: list[str]) -> None:
    # fails before imend5: the line `nice -n 5 A=1 python ...` with the changes was proposed
    rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *prefix, *LAUNCH)
    assert rc == 1 and not doc["command"] and not doc["env"], (doc["command"], doc["env"])
    assert any(n.startswith("no launch written") and "before the launch" in n for n in doc["notes"]), doc["notes"]
    assert doc["diff"], doc  # (the changes to make by hand)
    name = next(w for w in prefix if "=" in w).split("=", 1)[0]
    assert any(r["subject"] == f"{name}=" for r in doc["refused"]), doc["refused"]


@pytest.mark.parametrize("prefix", [["nice", "-n", "5"], ["nohup", "env", "A=1"], ["timeout", "600"]])
def test_a_runner_without_an_assignment_keeps_its_line(prefix: list[str]) -> None:
    _rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *prefix, *LAUNCH)
    assert doc["command"][: len(prefix)] == prefix or doc["command"][0] == "env", doc["command"]
    assert not doc.get("refused"), doc.get("refused")


@pytest.mark.parametrize(
    "prefix", [["env", "SGL_ENABLE_JIT_DEEPGEMM=1"], ["nohup", "env", "SGL_ENABLE_JIT_DEEPGEMM=true"]]
)
def test_no_line_is_written_where_an_sgl_twin_undoes_a_change(prefix: list[str]) -> None:
    # fails before imend5: `env SGL_ENABLE_JIT_DEEPGEMM=1 SGLANG_ENABLE_JIT_DEEPGEMM=0 python ...` proposed, which
    # SGLang 0.5.3+ starts with SGLANG_ENABLE_JIT_DEEPGEMM=1 (the SGL_ value copied over it): the change lost
    rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", *prefix, *LAUNCH)
    assert rc == 1 and not doc["command"], doc["command"]
    assert any(n.startswith("no launch written") and "SGL_ENABLE_JIT_DEEPGEMM" in n for n in doc["notes"])
    assert any(c["kind"] == "env" and c["name"] == "SGLANG_ENABLE_JIT_DEEPGEMM" for c in doc["diff"]), doc["diff"]


def test_an_sgl_twin_with_the_changes_value_keeps_the_line() -> None:
    _rc, doc = recommend_json("--facts", str(SEED_AFTER), "--", "env", "SGL_ENABLE_JIT_DEEPGEMM=0", *LAUNCH)
    assert doc["command"], doc["notes"]
