"""`stackcheck audit`'s arguments read without the parser (cli._audit_args) against the parser's own: on every
command line it reads, the namespace is the parser's, attribute for attribute; anything else it leaves to the parser
(None), so that the parser's errors, warnings and spellings (abbreviations, old format names, `--`, values that
start with `-`) stay as they were. The audit then builds no parser, and prints what it printed with one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.cli import _audit_args, build_parser

ROOT = Path(__file__).resolve().parent.parent
FACTS = "tests/cases/writeup-after/facts.json"


def _parsed(argv: list[str]) -> dict[str, object] | None:
    try:
        return vars(build_parser("audit").parse_args(argv))
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
]


@pytest.mark.parametrize("argv", READ, ids=[" ".join(a[1:]) or "(none)" for a in READ])
def test_a_command_line_it_reads_gives_the_parsers_namespace(argv: list[str]) -> None:
    got = _audit_args(argv)
    assert got is not None
    assert vars(got) == _parsed(argv)


@pytest.mark.parametrize("argv", LEFT, ids=[" ".join(a) or "(empty)" for a in LEFT])
def test_anything_else_is_left_to_the_parser(argv: list[str]) -> None:
    assert _audit_args(argv) is None


WORDS = st.sampled_from(
    ["--facts", "--format", "--deep", "--sources", "--strict", "--facts=f.json", "--format=json", "--deep=",
     "--sources=1", "--format=", "--", "-", "-x", "--fact", "--output", "--python", "f.json", "json", "text",
     "markdown", "table", "nfd", "", "a=b", "-1", "--timeout", "3"]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=8))
def test_generated_command_lines_read_as_the_parser_reads_them(words: list[str]) -> None:
    argv = ["audit", *words]
    got = _audit_args(argv)
    if got is not None:
        assert vars(got) == _parsed(argv), argv


@pytest.mark.parametrize("fmt", ["json", "text", "markdown"])
def test_an_audit_read_without_the_parser_prints_what_the_parsers_prints(tmp_path: Path, fmt: str) -> None:
    """The whole command: the same output and exit status with and without the fast reading (the parser forced by
    an argument only it reads, --timeout at its default), and the fast one builds no parser."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_CACHE_DIR": str(tmp_path), "COLUMNS": "100"}
    code = (
        "import sys, io\n"
        "from stackcheck import cli\n"
        "sys.stdout = io.StringIO()\n"
        "code = cli.main(sys.argv[1:])\n"
        "out = sys.stdout.getvalue()\n"
        "sys.stdout = sys.__stdout__\n"
        "print(code, 'stackcheck.commands.parser' in sys.modules)\n"
        "print(out, end='')\n"
    )
    runs = []
    for extra in ([], ["--timeout", "8"]):
        argv = ["audit", "--facts", FACTS, "--format", fmt, *extra]
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        runs.append((done.stdout, done.stderr))
    fast, parsed = runs
    assert fast[0].split("\n", 1)[0].split()[1] == "False"  # no parser built
    assert parsed[0].split("\n", 1)[0].split()[1] == "True"
    assert fast[0].split("\n", 1)[0].split()[0] == parsed[0].split("\n", 1)[0].split()[0]  # the exit status
    assert fast[0].split("\n", 1)[1] == parsed[0].split("\n", 1)[1] and fast[1] == parsed[1]
