"""stackcheck gate reads a `python -m sglang.launch_server` command line as SGLang's argparse reads it (iargv): a
single-dash option, a switch given a value, a word no option takes and anything after '--' end the launch with
exit status 2, so the gate refuses them; a unique prefix is the flag it abbreviates. Checked against the real
argparse of every CPython 3.10-3.13 found on this machine, given a parser built from launch.json's own table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.errors import UsageError
from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

SERVER = ["python", "-m", "sglang.launch_server", "--model-path", "m"]

CASES = [
    ["--tp", "8"],
    ["--tensor-parallel", "8"],
    ["-tp", "8"],
    ["--tp", "8", "stray"],
    ["--", "--x"],
    ["--tp", "8", "--"],
    ["--enable-torch-symm-mem", "false"],
    ["--enable-torch-compile=false"],
    ["--enable-torch-symm-mem", "--tp=2"],
    ["--cuda-graph-bs", "1", "2", "4", "--tp", "2"],
    ["--lora-paths", "a", "b", "--tp", "2"],
    ["--lora-paths", "--tp", "2"],
    ["--disable-cuda-graph", "1"],
    ["-t", "8"],
    ["--enable-torch-compile="],
    ["--lora-paths=a", "b"],
    ["--cuda-graph-bs=1", "2"],
    ["--tp", "8", "-"],
    ["--enable-torch-compile", "-5"],
    ["--served-model-name", "a b", "c d"],
    ["--tp 8"],
    ["--tensor-parallel=8", "--enable-torch-compil"],
    ["--cuda-graph-bs"],
]


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def _refused(shipped: dict[str, Any], version: str, args: list[str]) -> list[gate.Problem]:
    d = gate.derive([*SERVER, *args], shipped, {})
    problems, covered = gate.undeclared_problems(d, shipped, version)
    problems += gate.release_choice_problems(d, shipped, version)
    assert covered
    return [p for p in problems if p.status in ("blocked", "unknown")]


def _gate_refuses(shipped: dict[str, Any], version: str, args: list[str]) -> bool:
    """Whether the gate lets the launch through its reading of the command: a usage error of the server command
    (a listed flag's value it cannot read: `--tp -5`) stops it too (exit 2, nothing run)."""
    try:
        return bool(_refused(shipped, version, args))
    except UsageError:
        return True


def test_the_brief_cases_on_a_release_without_plugins(shipped: dict[str, Any]) -> None:
    got = {" ".join(a): _refused(shipped, "0.5.9", a) for a in CASES if a != ["--tp 8"]}  # (one word: its own key)
    assert got["--tp 8"] == [] and got["--tensor-parallel 8"] == []
    assert [(p.subject, p.status, p.effect) for p in got["-tp 8"]] == [("-tp", "blocked", "crash")]
    assert "single-dash" in got["-tp 8"][0].message
    stray = got["--tp 8 stray"][0]
    assert (stray.status, stray.observed) == ("blocked", "stray") and "unrecognized arguments" in stray.message
    assert got["-- --x"][0].observed == "-- --x"
    assert got["--enable-torch-symm-mem false"][0].observed == "false"
    switch = got["--enable-torch-compile=false"][0]
    assert (switch.subject, switch.observed, switch.required) == (
        "--enable-torch-compile",
        "--enable-torch-compile=false",
        "--enable-torch-compile alone",
    )
    assert "ignored explicit argument" in switch.message
    assert any("argparse.py" in str(s.get("title")) for s in switch.source)
    assert got["--cuda-graph-bs 1 2 4 --tp 2"] == [] and got["--lora-paths a b --tp 2"] == []
    missing = got["--cuda-graph-bs"][0]
    assert (missing.subject, missing.observed, missing.required) == ("--cuda-graph-bs", "0", "at least one argument")
    assert "'expected at least one argument'" in missing.message


def test_a_release_that_loads_plugins_makes_a_leftover_unknown(shipped: dict[str, Any]) -> None:
    got = _refused(shipped, "0.5.23", ["--tp", "8", "stray"])
    assert [(p.status, p.observed) for p in got] == [("unknown", "stray")]
    switch = _refused(shipped, "0.5.23", ["--enable-torch-compile=false"])
    assert [p.status for p in switch] == ["blocked"]  # a plugin cannot make a declared switch take a value


def test_a_release_the_table_does_not_list_is_not_judged_here(shipped: dict[str, Any]) -> None:
    d = gate.derive([*SERVER, "-tp", "8"], shipped, {})
    assert gate.argv_problems(d, shipped, "0.4.9") == []


PARSER = """
import argparse, json, sys
spec = json.loads(sys.argv[1])
p = argparse.ArgumentParser(prog="sglang")
for names, nargs in spec["flags"]:
    if nargs == "0":
        p.add_argument(*names, action="store_true")
    elif nargs == "1":
        p.add_argument(*names)
    else:
        p.add_argument(*names, nargs=int(nargs) if nargs.isdigit() else nargs)
for argv in spec["cases"]:
    try:
        p.parse_args(argv)
        print(0)
    except SystemExit as e:
        print(e.code)
"""


def _pythons() -> list[Path]:
    root = Path.home() / ".pyenv" / "versions"
    found = [root / v / "bin" / "python" for v in ("3.10.13", "3.11.7", "3.12.1", "3.13.0")]
    return [p for p in found if p.exists()] or [Path(sys.executable)]


@pytest.mark.parametrize("python", _pythons(), ids=lambda p: p.parent.parent.name)
def test_the_gate_refuses_exactly_what_real_argparse_rejects(shipped: dict[str, Any], python: Path) -> None:
    """A parser of SGLang 0.5.9's flags (names and nargs from launch.json: its own data, never SGLang's code) in
    each CPython: every case it rejects (exit 2) the gate refuses, every case it accepts the gate lets through."""
    table = shipped["release_flags"]
    names = gate._declared_in(shipped, "0.5.9") or set()
    nargs = gate._release_nargs(table, "0.5.9") or {}
    flags = [([n], nargs.get(n, "1")) for n in sorted(names) if n != "--help"]
    spec = json.dumps({"flags": flags, "cases": CASES})
    run = subprocess.run([str(python), "-c", PARSER, spec], capture_output=True, text=True, timeout=60, check=True)
    codes = [int(c) for c in run.stdout.split()]
    assert len(codes) == len(CASES)
    for case, code in zip(CASES, codes, strict=True):
        assert code in (0, 2)
        refused = _gate_refuses(shipped, "0.5.9", case)
        assert refused == (code == 2), (case, code)


def test_a_choice_in_another_case_is_not_offered(shipped: dict[str, Any]) -> None:
    """argparse compares choices exactly: --attention-backend FA3 is an 'invalid choice' where fa3 is offered
    (blocked on 0.5.9; unknown from 0.5.11, where a plugin may add choices); before, it was only the unknown of a
    value the manifests do not know, which --allow-unknown let through."""
    d = gate.derive([*SERVER, "--attention-backend", "FA3"], shipped, {})
    got = [p for p in gate.release_choice_problems(d, shipped, "0.5.9") if p.subject == "--attention-backend"]
    assert [(p.status, p.effect, p.observed) for p in got] == [("blocked", "crash", "FA3")]
    assert "'fa3' is offered" in got[0].message and "fa3" in str(got[0].required).split(", ")
    later = [p for p in gate.release_choice_problems(d, shipped, "0.5.23") if p.subject == "--attention-backend"]
    assert [p.status for p in later] == ["unknown"]
    exact = gate.derive([*SERVER, "--attention-backend", "fa3"], shipped, {})
    assert not [p for p in gate.release_choice_problems(exact, shipped, "0.5.9") if p.subject == "--attention-backend"]


@pytest.mark.parametrize(
    "text",
    [
        "python -m sglang.launch_server --model-path m --tp 2 > log 2>&1",
        "python -m sglang.launch_server --model-path m --tp 2 && echo done",
        "python -m sglang.launch_server --model-path m --tp 2 | tee log",
        "python -m sglang.launch_server --model-path m --tp 2 >log",
        'exec python -m sglang.launch_server --model-path m --tp 2 "$@"',
    ],
)
def test_a_shell_string_ends_the_arguments_at_its_operators(shipped: dict[str, Any], text: str) -> None:
    """In `bash -c "..."` the shell takes its operators and redirections: they are no argument of the server."""
    d = gate.derive(["bash", "-c", text], shipped, {})
    assert d.entrypoint == "launch-server"
    assert gate.argv_problems(d, shipped, "0.5.9") == []
    stray = gate.derive(["bash", "-lc", text.replace("--tp 2", "--tp 2 stray")], shipped, {})
    assert [p.observed for p in gate.argv_problems(stray, shipped, "0.5.9")] == ["stray"]


def test_a_help_cluster_never_starts_the_server(shipped: dict[str, Any]) -> None:
    got = _refused(shipped, "0.5.9", ["-hx"])
    assert [(p.subject, p.status) for p in got] == [("-hx", "blocked")]
    assert "3.13.0 prints the help" in got[0].message
