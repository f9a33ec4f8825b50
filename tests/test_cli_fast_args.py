"""`stackcheck audit`'s and `stackcheck gate`'s arguments read without the parser (cli._fast_args) against the
parser's own: on every command line it reads, the namespace is the parser's, attribute for attribute; anything else
it leaves to the parser (None), so that the parser's errors, warnings and spellings (abbreviations, old format names,
a gate without `--`, values that start with `-`) stay as they were. The audit and the gate then build no parser, and
print what they printed with one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.cli import _fast_args, build_parser

ROOT = Path(__file__).resolve().parent.parent
FACTS = "tests/cases/writeup-after/facts.json"


def _parsed(argv: list[str]) -> dict[str, object] | None:
    try:
        return vars(build_parser(argv[0]).parse_args(argv))
    except SystemExit:
        return None


READ = [
    ["audit"],
    ["audit", "--format", "json"],
    ["audit", "--format=json"],
    ["audit", "--deep", "--format", "json"],
    ["audit", "--facts", FACTS],
    ["audit", "--facts=" + FACTS, "--format", "markdown", "--sources"],
    ["audit", "--strict", "--format", "prometheus", "--deep"],
    ["audit", "--format", "nfd"],
    ["audit", "--format", "text", "--facts", "a b=c.json"],
]
LEFT = [
    [],
    ["plan", "--facts", FACTS],
    ["audit", "--form", "json"],  # an abbreviation
    ["audit", "--format", "table"],  # an old name: the parser warns
    ["audit", "--format", "nope"],
    ["audit", "--format"],
    ["audit", "--format="],
    ["audit", "--format", "json", "--format", "text"],  # argparse keeps the last: left to it
    ["audit", "--facts", "-"],
    ["audit", "--facts", ""],
    ["audit", "--facts", "--deep"],
    ["audit", "--deep=1"],
    ["audit", "--deep", "--deep"],
    ["audit", "--", "x"],
    ["audit", "-h"],
    ["audit", "--output", "o.json"],
    ["audit", "--python", "/usr/bin/python3"],
    ["audit", "x"],
    ["gate", "--dry-run", "--"],
    ["gate", "--dry-run", "python3", "-m", "sglang.launch_server"],  # no `--`: the parser's usage error
    ["gate", "--dry-run", "x", "--", "python3"],
    ["gate", "--format", "markdown", "--", "python3"],
    ["gate", "--require", "cuda-graph", "--", "python3"],
    ["gate", "--watch", "--", "python3"],
    ["gate", "-q", "--", "python3"],
    ["gate", "--dry-run", "--dry-run", "--", "python3"],
]
LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
READ += [
    ["gate", "--dry-run", "--", *LAUNCH],
    ["gate", "--dry-run", "--format", "json", "--", *LAUNCH],
    ["gate", "--facts", FACTS, "--format=json", "--dry-run", "--", *LAUNCH, "--", "x"],
    ["gate", "--", "python", "-m", "sglang.launch_server", "--format", "json"],
    [
        "gate",
        "--deep",
        "--strict",
        "--allow-unknown",
        "--strict-features",
        "--quiet",
        "--verbose",
        "--advise",
        "--",
        "x",
    ],
]


@pytest.mark.parametrize("argv", READ, ids=[" ".join(a) for a in READ])
def test_a_command_line_it_reads_gives_the_parsers_namespace(argv: list[str]) -> None:
    got = _fast_args(argv)
    assert got is not None
    assert vars(got) == _parsed(argv)


@pytest.mark.parametrize("argv", LEFT, ids=[" ".join(a) or "(empty)" for a in LEFT])
def test_anything_else_is_left_to_the_parser(argv: list[str]) -> None:
    assert _fast_args(argv) is None


WORDS = st.sampled_from(
    ["--facts", "--format", "--deep", "--sources", "--strict", "--facts=f.json", "--format=json", "--deep=",
     "--sources=1", "--format=", "--", "-", "-x", "--fact", "--output", "--python", "f.json", "json", "text",
     "markdown", "table", "nfd", "", "a=b", "-1", "--timeout", "3"]
)  # fmt: skip


GATE_WORDS = st.sampled_from(
    ["--facts", "--format", "--dry-run", "--deep", "--quiet", "--advise", "--allow-unknown", "--format=json",
     "--dry-run=", "--", "--", "-", "-q", "--dry", "--require", "--watch", "f.json", "json", "text", "markdown",
     "python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1", "", "a=b", "-1"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=8))
def test_generated_command_lines_read_as_the_parser_reads_them(words: list[str]) -> None:
    argv = ["audit", *words]
    got = _fast_args(argv)
    if got is not None:
        assert vars(got) == _parsed(argv), argv


@settings(max_examples=400, deadline=None)
@given(st.lists(GATE_WORDS, max_size=10))
def test_generated_gate_command_lines_read_as_the_parser_reads_them(words: list[str]) -> None:
    argv = ["gate", *words]
    got = _fast_args(argv)
    if got is not None:
        assert vars(got) == _parsed(argv), argv


H200 = "tests/cases/h200-newest/facts.json"
WHOLE = {
    "audit json": (["audit", "--facts", FACTS, "--format", "json"], []),
    "audit text": (["audit", "--facts", FACTS, "--format", "text"], []),
    "audit markdown": (["audit", "--facts", FACTS, "--format", "markdown", "--sources"], []),
    "gate json": (["gate", "--dry-run", "--facts", H200, "--format", "json"], ["--", *LAUNCH]),
    "gate text": (["gate", "--dry-run", "--facts", H200], ["--", "python", "-m", "sglang.launch_server", "--tp", "2"]),
}


@pytest.mark.parametrize("case", sorted(WHOLE))
def test_a_command_read_without_the_parser_prints_what_the_parsers_prints(tmp_path: Path, case: str) -> None:
    """The whole command: the same output, stderr and exit status with and without the fast reading (the parser
    forced by an argument only it reads, --timeout at its default), and the fast one builds no parser and imports
    gettext where the parser's path does not either."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_CACHE_DIR": str(tmp_path), "COLUMNS": "100"}
    code = (
        "import sys, io\n"
        "from stackcheck import cli\n"
        "sys.stdout = io.StringIO()\n"
        "code = cli.main(sys.argv[1:])\n"
        "out = sys.stdout.getvalue()\n"
        "sys.stdout = sys.__stdout__\n"
        "print(code, 'stackcheck.commands.parser' in sys.modules, 'gettext' in sys.modules)\n"
        "print(out, end='')\n"
    )
    options, command = WHOLE[case]
    runs = []
    for extra in ([], ["--timeout", "8"]):
        argv = [*options, *extra, *command]
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        first, out = done.stdout.split("\n", 1)
        runs.append((first.split(), out, done.stderr))
    (fast_status, fast_parser, fast_gettext), fast_out, fast_err = runs[0]
    (status, parser, gettext), out, err = runs[1]
    assert (fast_parser, parser) == ("False", "True")  # no parser built, then the parser's path
    assert fast_gettext == gettext  # argparse imported without gettext either way (commands.lean_gettext)
    assert (fast_status, fast_out, fast_err) == (status, out, err)
    assert status in ("0", "1") and out
