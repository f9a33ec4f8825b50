"""irunner3: a shell string's program word that names a variable (`bash -c '$V/bin/python -m sglang.launch_server ...'`)
or `~` was judged as written: the gate allowed it with V unset (the shell runs `/bin/python`, another interpreter or
none), and the live gate's interpreter check took `$V/bin/python` as a directory named `$V` (an unknown naming a path
that is no one's). Now: unknown naming the word where the variable is not set in the launch's environment the gate sees
(with --facts, a value only the gate's own environment holds does not count: an assignment before the launch does), and
the word expanded where it is set."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

STRING = "{} -m sglang.launch_server --model-path m"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _python(command: list[str], env: dict[str, str], mapping: Any, target_facts: bool = False) -> list[str]:
    d = gate.derive(command, mapping, env, target_facts=target_facts)
    return [p.status for p in d.problems if p.subject.startswith("python")]


@pytest.mark.parametrize(
    ("word", "env"),
    [("$V/bin/python", {}), ("${V}/bin/python3", {"W": "/x"}), ("~/venv/bin/python", {}),
     ("$V$W/bin/python", {"V": "/opt"}), ("${V:-/opt/v}/bin/python", {"V": "/opt/v"}), ("$(pwd)/python", {})],
)  # fmt: skip
def test_a_variable_not_set_is_unknown(word: str, env: dict[str, str], mapping: Any) -> None:
    for shell in ("bash", "sh"):
        assert _python([shell, "-c", STRING.format(word)], env, mapping) == ["unknown"], word  # (fails before: [])


def test_the_gates_own_environment_does_not_count_with_facts(mapping: Any) -> None:
    command = ["bash", "-c", STRING.format("$V/bin/python")]
    assert _python(command, {"V": "/opt/v"}, mapping, target_facts=True) == ["unknown"]
    assert _python(command, {"V": "/opt/v"}, mapping) == []  # (the launch runs here, with the gate's environment)
    assert _python(["env", "V=/opt/v", *command], {}, mapping, target_facts=True) == []
    assert _python(["env", "V=/opt/w", *command], {"V": "/opt/v"}, mapping, target_facts=True) == []
    assert _python(["bash", "-c", STRING.format("~/v/bin/python")], {"HOME": "/h"}, mapping, target_facts=True) == [
        "unknown"
    ]


@pytest.mark.parametrize(
    ("word", "env"),
    [("$V/bin/python", {"V": "/opt/v"}), ("${V}/bin/python", {"V": "/opt/v"}), ("~/venv/bin/python", {"HOME": "/h"}),
     ("/opt/v/bin/python", {})],
)  # fmt: skip
def test_a_variable_set_is_expanded(word: str, env: dict[str, str], mapping: Any) -> None:
    assert _python(["bash", "-c", STRING.format(word)], env, mapping) == [], word


def test_the_interpreter_check_expands_the_word(mapping: Any) -> None:
    venv = sys.prefix
    facts = {"python": {"executable": sys.executable, "chosen_by": "VIRTUAL_ENV"}}
    command = ["bash", "-c", STRING.format("$V/bin/python")]
    got = gate.interpreter_mismatch_problems(command, mapping, {"V": venv, "PATH": "/usr/bin"}, "/tmp", facts)
    assert got == []  # (fails before: unknown, '$V/bin/python' read as /tmp/$V/bin/python)
    got = gate.interpreter_mismatch_problems(command, mapping, {"PATH": "/usr/bin"}, "/tmp", facts)
    assert got == []  # (V unset: derive's unknown says it; no path is made up here)
