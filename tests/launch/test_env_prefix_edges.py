"""D6: the gate's `env` prefix reader (gate.split_env_prefix) and the target's (assembly/target.py _unwrap, which
reads the prefix the interpreter is found behind) on the edge cases where they differ: `--`, an unknown option, an
`-S` string not split, an assignment whose name is no shell name, options after an assignment. Pinned as they
were at 422d13dc, before one reader served both (imend)."""

from __future__ import annotations

from stackcheck.assembly.target import _unwrap
from stackcheck.launch.gate import split_env_prefix

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


def _gate(*prefix: str) -> tuple[list[str], dict[str, str]]:
    return split_env_prefix(["env", *prefix, *LAUNCH], {"HOME": "/root"})


def _target(*prefix: str) -> tuple[list[str] | None, dict[str, str], list[str]]:
    env: dict[str, str] = {"HOME": "/root"}
    notes: list[str] = []
    return _unwrap(["env", *prefix, *LAUNCH], env, notes), env, notes


def test_double_dash() -> None:
    assert _gate("--", "A=1") == (["--", "A=1", *LAUNCH], {"HOME": "/root"})
    got, env, notes = _target("--", "A=1")
    assert got == ["A=1", *LAUNCH] and env == {"HOME": "/root"} and not notes


def test_an_unknown_option() -> None:
    assert _gate("--frobnicate", "A=1") == (["--frobnicate", "A=1", *LAUNCH], {"HOME": "/root"})
    got, _env, notes = _target("--frobnicate", "A=1")
    assert got is None and notes == ["env --frobnicate: option not followed; the command's interpreter is not known"]


def test_an_option_cluster() -> None:
    assert _gate("-iu", "HOME")[0] == ["-iu", "HOME", *LAUNCH]
    got, _env, notes = _target("-iu", "HOME")
    assert got is None and notes == ["env -iu: option not followed; the command's interpreter is not known"]


def test_a_split_string_with_a_dollar() -> None:
    assert _gate("-S", "A=${HOME} B=2") == (["-S", "A=${HOME} B=2", *LAUNCH], {"HOME": "/root"})
    got, _env, notes = _target("-S", "A=${HOME} B=2")
    assert got is None and notes == ["env -S: a string not split here; the command's interpreter is not known"]


def test_a_plain_split_string_is_read_by_both() -> None:
    assert _gate("-S", "A=1 B=2") == (LAUNCH, {"HOME": "/root", "A": "1", "B": "2"})
    got, env, _notes = _target("-S", "A=1 B=2")
    assert got == LAUNCH and env == {"HOME": "/root", "A": "1", "B": "2"}


def test_an_assignment_that_is_no_shell_name() -> None:
    assert _gate("1A=x") == (["1A=x", *LAUNCH], {"HOME": "/root"})
    got, env, _notes = _target("1A=x")
    assert got == LAUNCH and env == {"HOME": "/root", "1A": "x"}


def test_an_option_after_an_assignment() -> None:
    assert _gate("A=1", "-u", "HOME") == (LAUNCH, {"A": "1"})
    got, env, _notes = _target("A=1", "-u", "HOME")
    assert got == LAUNCH and env == {"A": "1"}
