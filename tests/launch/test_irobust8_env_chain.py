"""irobust8: find_launch stepped into each `env` of the command by a recursive call, so 2,500 `nohup env -u X` words
before the launch ended in RecursionError (exit 4), and where the words after an `env` held no launch each outer
command scanned on through them, calling every later `env` again (2**n calls: 18 `nohup env` words took 17 s)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def test_thousands_of_env_words_before_the_launch(mapping: Any) -> None:
    # fails before: RecursionError
    line = ["nohup", "env", "-u", "X"] * 2500 + LAUNCH
    start = time.monotonic()
    d = gate.derive(line, mapping, {"X": "1"})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2
    assert time.monotonic() - start < 30


def test_env_chain_without_a_launch_is_linear(mapping: Any) -> None:
    # fails before: 2**40 nested calls (hours)
    line = ["nohup", "env", "-u", "X"] * 40 + ["python3", "x.py"]
    start = time.monotonic()
    entry, args, env = gate.find_launch(line, mapping, {"X": "1", "Y": "2"})
    assert entry is None and args == line[1:] and env == {"X": "1", "Y": "2"}
    assert time.monotonic() - start < 10


@pytest.mark.parametrize(
    ("line", "subject"),
    [(["sudo", "env", "-u", "X", "nohup", "env", "-u", "Y", *LAUNCH], "env"),
     (["nohup", "env", "-u", "X", "xyz", "env", "-u", "Y", *LAUNCH], "xyz"),
     (["nohup", "env", "-u", "X", "nohup", "env", "-u", "Y", "xyz", *LAUNCH], "xyz")],
)  # fmt: skip
def test_the_notes_of_each_level_are_kept(line: list[str], subject: str, mapping: Any) -> None:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server"
    assert (subject, "unknown") in [(p.subject, p.status) for p in d.problems], d.problems


def test_the_environment_of_the_innermost_env(mapping: Any) -> None:
    line = ["nohup", "env", "A=1", "nohup", "env", "-u", "B", "C=3", "nice", "env", "D=4", *LAUNCH]
    entry, args, env = gate.find_launch(line, mapping, {"B": "2", "E": "5"})
    assert entry == "launch-server" and args[-2:] == ["--tp", "2"]
    assert env == {"A": "1", "C": "3", "D": "4", "E": "5"}
