"""D6: the gate's `env` prefix reader (gate.split_env_prefix) and the target's (assembly/target.py _unwrap, which
reads the prefix the interpreter is found behind) on the edge cases where they differed (pinned at 422d13dc in the
commit before): `--`, an unknown option, an option cluster, an `-S` string with `$`, an assignment whose name is no
shell name, an option after an assignment. Both now read the prefix with assembly/env_prefix.read_env, as GNU env
does (coreutils src/env.c, aa0c0de35): `--` ends the options and is dropped; an unknown option makes env fail (exit
125), so the gate refuses (derive's problem) and the target leaves the interpreter unknown; `-iu NAME` is two
options; `${NAME}` in an -S string is the variable's value in the environment env starts with; any word holding `=`
after the options is an assignment; a word after the assignments is the command, an option-looking one too."""

from __future__ import annotations

from stackcheck.assembly.target import _unwrap
from stackcheck.launch.gate import split_env_prefix

LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


def _gate(*prefix: str) -> tuple[list[str], dict[str, str], list[tuple[str, bool]]]:
    stops: list[tuple[str, bool]] = []
    argv, env = split_env_prefix(["env", *prefix, *LAUNCH], {"HOME": "/root"}, stops=stops)
    return argv, env, stops


def _target(*prefix: str) -> tuple[list[str] | None, dict[str, str], list[str]]:
    env: dict[str, str] = {"HOME": "/root"}
    notes: list[str] = []
    return _unwrap(["env", *prefix, *LAUNCH], env, notes), env, notes


def test_double_dash() -> None:
    """Was: the gate took `--` as the command; the target took `A=1` after it as the command."""
    assert _gate("--", "A=1") == (LAUNCH, {"HOME": "/root", "A": "1"}, [])
    assert _target("--", "A=1") == (LAUNCH, {"HOME": "/root", "A": "1"}, [])


def test_an_unknown_option() -> None:
    """Was: the gate judged `--frobnicate A=1 python ...` as the command (a wrapper around python); env exits 125."""
    stop = "option --frobnicate is unrecognized (env fails, exit 125)"
    assert _gate("--frobnicate", "A=1") == (["--frobnicate", "A=1", *LAUNCH], {"HOME": "/root"}, [(stop, True)])
    got, _env, notes = _target("--frobnicate", "A=1")
    assert got is None and notes == [f"env: {stop}; the command's interpreter is not known"]


def test_an_option_cluster() -> None:
    """Was: both took `-iu` as one unknown word (the gate as the command, the target stopped)."""
    assert _gate("-iu", "HOME", "A=1") == (LAUNCH, {"A": "1"}, [])
    assert _target("-iu", "HOME", "A=1") == (LAUNCH, {"A": "1"}, [])
    assert _gate("-vu", "HOME") == (LAUNCH, {}, [])


def test_a_split_string_with_a_dollar() -> None:
    """Was: the gate took `-S` as the command; the target stopped (a string not split)."""
    assert _gate("-S", "A=${HOME} B=2") == (LAUNCH, {"HOME": "/root", "A": "/root", "B": "2"}, [])
    assert _target("-S", "A=${HOME} B=2") == (LAUNCH, {"HOME": "/root", "A": "/root", "B": "2"}, [])
    stop = "-S: ${NOPE} is not in the environment given, so its value is not known"
    assert _gate("-S", "A=${NOPE}") == (["-S", "A=${NOPE}", *LAUNCH], {"HOME": "/root"}, [(stop, False)])
    assert _target("-S", "A=${NOPE}")[0] is None


def test_a_plain_split_string_is_read_by_both() -> None:
    assert _gate("-S", "A=1 B=2") == (LAUNCH, {"HOME": "/root", "A": "1", "B": "2"}, [])
    assert _target("-S", "A=1 B=2") == (LAUNCH, {"HOME": "/root", "A": "1", "B": "2"}, [])


def test_an_assignment_that_is_no_shell_name() -> None:
    """Was: the gate took `1A=x` as the command; env putenv()s every word holding `=` after its options."""
    assert _gate("1A=x") == (LAUNCH, {"HOME": "/root", "1A": "x"}, [])
    assert _target("1A=x") == (LAUNCH, {"HOME": "/root", "1A": "x"}, [])


def test_an_option_after_an_assignment() -> None:
    """Was: both read `-u HOME` after `A=1` as an option; env's options end at its first other word, so `-u` is the
    command env runs (and fails to find: exit 127), not python."""
    assert _gate("A=1", "-u", "HOME") == (["-u", "HOME", *LAUNCH], {"HOME": "/root", "A": "1"}, [])
    assert _target("A=1", "-u", "HOME") == (["-u", "HOME", *LAUNCH], {"HOME": "/root", "A": "1"}, [])
