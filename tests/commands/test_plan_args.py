"""`stackcheck plan`'s arguments read without the parser (commands.plan.args_of) against the parser's own: on
every command line it reads, the namespace is the parser's, attribute for attribute; anything else it leaves to
the parser (None), so that the parser's errors and spellings (abbreviations, `--`, values that start with `-`)
stay as they were. The plan path then imports no argparse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.cli import build_parser
from stackcheck.commands.plan import args_of

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = "tests/cases/writeup-before/facts.json"


def _parsed(argv: list[str]) -> dict[str, object] | None:
    try:
        return vars(build_parser("plan").parse_args(argv))
    except SystemExit:
        return None


READ = [
    ["plan", "--facts", FACTS],
    ["plan", "--facts=" + FACTS],
    ["plan", "--facts", FACTS, "--want", "torch-symm-mem"],
    ["plan", "--want", "attention_fa4", "deepgemm", "--facts", FACTS, "--hold", "driver", "--to", "sglang==0.5.9"],
    ["plan", "--facts", FACTS, "--format", "json", "--sources"],
    ["plan", "--facts", FACTS, "--format=markdown", "--hold=torch", "--hold", "driver", "--to=torch==2.9.1+cu130"],
    ["plan", "--facts", FACTS, "--format", "table"],
    ["plan", "--want=fa3", "--facts", FACTS],
    ["plan", "--facts", "a b.json", "--want", "x=y"],
]
LEFT = [
    [],
    ["audit", "--facts", FACTS],
    ["plan", "--fact", FACTS],  # an abbreviation
    ["plan", "--facts", FACTS, "--manifests", "d"],
    ["plan", "--facts", FACTS, "--format", "nope"],
    ["plan", "--facts", FACTS, "--want"],
    ["plan", "--facts", FACTS, "--want", "a", "--want", "b"],  # argparse keeps the last: left to it
    ["plan", "--facts", FACTS, "--facts", FACTS],
    ["plan", "--facts", FACTS, "--sources=1"],
    ["plan", "--facts", FACTS, "--hold", "driver", "torch"],
    ["plan", "--facts", FACTS, "--", "x"],
    ["plan", "--facts", "-"],
    ["plan", "--facts", ""],
    ["plan", "--facts", FACTS, "--to=-1"],
    ["plan", "--facts", FACTS, "-h"],
    ["plan", "--facts", FACTS, "--output", "o.txt"],
    ["plan", "x"],
]


@pytest.mark.parametrize("argv", READ, ids=[" ".join(a[1:]) for a in READ])
def test_a_command_line_it_reads_gives_the_parsers_namespace(argv: list[str]) -> None:
    got = args_of(argv)
    assert got is not None
    assert vars(got) == _parsed(argv)


@pytest.mark.parametrize("argv", LEFT, ids=[" ".join(a) or "(empty)" for a in LEFT])
def test_anything_else_is_left_to_the_parser(argv: list[str]) -> None:
    assert args_of(argv) is None


WORDS = st.sampled_from(
    ["--facts", "--want", "--hold", "--to", "--format", "--sources", "--facts=f.json", "--want=fa3", "--format=json",
     "--hold=driver", "--to=torch==2.9.1", "--sources=", "--", "-", "-x", "--fact", "--output", "f.json", "json",
     "markdown", "table", "driver", "torch-symm-mem", "attention_fa4", "sglang==0.5.9", "", "a=b", "-1", "--want="]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(WORDS, max_size=9))
def test_generated_command_lines_read_as_the_parser_reads_them(words: list[str]) -> None:
    argv = ["plan", *words]
    got = args_of(argv)
    if got is not None:
        assert vars(got) == _parsed(argv), argv


def test_a_plan_of_saved_facts_imports_no_argparse(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_CACHE_DIR": str(tmp_path)}
    code = (
        "import sys, io\n"
        "from stackcheck import cli\n"
        "sys.stdout = io.StringIO()\n"
        f"code = cli.main(['plan', '--facts', {FACTS!r}, '--want', 'torch-symm-mem'])\n"
        "sys.stdout = sys.__stdout__\n"
        "print(code, 'argparse' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "False"], out.stderr
