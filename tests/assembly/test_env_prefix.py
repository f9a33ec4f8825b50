"""assembly/env_prefix.py: GNU env's command line as coreutils' src/env.c (aa0c0de35) reads it: getopt_long's
options (clusters, unique prefixes of long ones, `--`), `-S` strings split by build_argv's rules (quotes, escapes,
`\\_`, `\\c`, `#` comments, `${NAME}`), `-`, the assignments, the command; a stop with its reason where env fails or
does what is not read here."""

from __future__ import annotations

import pytest

from stackcheck.assembly.env_prefix import _Stop, read_env, split_string

ENV = {"HOME": "/root", "SPACED": "a b", "EMPTY": ""}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("A=1  B=2\tpy", ["A=1", "B=2", "py"]),
        ("A='x y' \"p q\"", ["A=x y", "p q"]),
        ("''", [""]),  # an empty quoted word is a word
        ("a\\_b", ["a", "b"]),  # \_ outside double quotes separates
        ('"a\\_b"', ["a b"]),  # inside them it is a space
        ("py \\c rest 'unclosed", ["py"]),  # \c ends the string (an open quote after it is never read)
        ("py #a comment", ["py"]),
        ("py a#b", ["py", "a#b"]),  # # is a comment only at a word's start
        ('"#x" \\#y', ["#x", "#y"]),
        ("\\\\ \\\" \\' \\$", ["\\", '"', "'", "$"]),
        ("a\\tb", ["a\tb"]),
        ("'a\\\\b' 'c\\d' '\\''", ["a\\b", "c\\d", "'"]),  # in single quotes only \\ and \' are escapes
        ("'${HOME}' \"${HOME}\" ${HOME}x", ["${HOME}", "/root", "/rootx"]),
        ("A=${SPACED} ${EMPTY} b", ["A=a b", "", "b"]),  # a value is not split; an empty one is a word
    ],
)
def test_split_string(text: str, words: list[str]) -> None:
    assert split_string(text, ENV) == words


@pytest.mark.parametrize(
    ("text", "fails"),
    [
        ("a 'b", True),  # no terminating quote
        ('"a\\c"', True),  # \c inside double quotes
        ("a\\", True),  # a backslash at the end
        ("a\\q", True),  # an invalid sequence
        ("$HOME", True),  # only ${VARNAME}
        ("${1X}", True),
        ("${NOPE}", False),  # not in the environment given: not known
    ],
)
def test_split_string_stops(text: str, fails: bool) -> None:
    with pytest.raises(_Stop) as got:
        split_string(text, ENV)
    assert got.value.fails is fails


def test_options_clusters_prefixes_and_the_end_of_options() -> None:
    got = read_env(["-vu", "HOME", "--unse=SPACED", "--chdir=/a", "-C/b", "--", "-", "X=1", "py", "A=2"], ENV)
    assert (got.command, got.env, got.dirs, got.stop) == (["py", "A=2"], {"X": "1"}, ["/b"], None)
    got = read_env(["--debug", "--block-signal=PIPE", "--ignore-signal", "-S", "-u HOME Y=2 py", "-x"], ENV)
    assert (got.command, got.env, got.assignments) == (
        ["py", "-x"],
        {"SPACED": "a b", "EMPTY": "", "Y": "2"},
        [("Y", "2")],
    )
    assert read_env(["-iS", "A=1 py"], ENV).env == {"A": "1"}  # -i applies whatever the order
    assert read_env(["A=1"], ENV).command == []  # no command: env prints the environment
    assert read_env(["=x", "py"], ENV).env[""] == "x"  # (putenv's, whatever the name)


@pytest.mark.parametrize(
    ("args", "fails", "words"),
    [
        (["--frob", "py"], True, "--frob is unrecognized"),
        (["--i", "py"], True, "--i is ambiguous"),  # ignore-environment or ignore-signal
        (["--debug=1", "py"], True, "takes no argument"),
        (["-X", "py"], True, "-X is invalid"),
        (["-i python3"], True, "a space"),
        (["-u"], True, "-u needs an argument"),
        (["--chdir"], True, "--chdir needs an argument"),
        (["-0", "py"], True, "runs no command"),
        (["--version", "py"], True, "runs no command"),
        (["-a", "x", "py"], False, "the name the command is given"),
        (["--env0-from=f", "py"], False, "from a file"),
        (["-S", "${NOPE} py"], False, "${NOPE} is not in the environment given"),
    ],
)
def test_where_the_reading_stops(args: list[str], fails: bool, words: str) -> None:
    got = read_env(args, ENV)
    assert got.stop is not None and words in got.stop and got.fails is fails, got
    assert got.env == ENV and got.assignments == [] and got.command[-1] == args[-1]  # (the words from the stop on)


def test_a_stop_names_no_value() -> None:
    """An option's value (`--hf-token=...`) and an -S string's words are never in the reason."""
    got = read_env(["--hf-token=hf_SECRETVALUE123", "py"], ENV)
    assert got.stop is not None and "hf-token" in got.stop and "SECRET" not in got.stop
    got = read_env(["-S", "HF_TOKEN=hf_SECRETVALUE123 py 'open"], ENV)
    assert got.stop is not None and "SECRET" not in got.stop and "quote" in got.stop


@pytest.mark.parametrize(
    "args",
    [
        ["-u", "A=B", "py"],  # (env 9.1: "cannot unset 'A=B': Invalid argument", exit 125)
        ["-u", "", "py"],
        ["--u", "--chdir=/tmp", "py"],  # --u takes the next word whole, `=` and all
        ["-uHOME", "-u=", "X=1", "py"],
    ],
)
def test_an_unset_name_env_rejects_stops(args: list[str]) -> None:
    """unset_envvars (env.c :222-231): unsetenv fails on an empty name or one holding `=`, and env exits 125 with
    nothing run; the reading must not reach the command (the gate would pass a launch that never starts)."""
    got = read_env(args, ENV)
    assert got.stop is not None and "unsetenv rejects" in got.stop, got
    assert got.fails is True and got.command[-1] == "py"


def test_an_unset_name_env_rejects_is_not_read_under_i() -> None:
    """With -i (or `-`) env unsets nothing (:1149), so the same name is no error there."""
    got = read_env(["-i", "-u", "A=B", "X=1", "py"], ENV)
    assert (got.stop, got.command, got.env) == (None, ["py"], {"X": "1"})
