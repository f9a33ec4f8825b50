"""Start-up stays lean (issue 21): the parser is built for the verb being run only, with every --help as the
full parser writes it; a report from saved facts imports none of the heavy modules; the pathlib and shutil
stand-ins give what pathlib and shutil give."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from stackcheck import cli
from stackcheck.commands import parser as cli_parser
from stackcheck.paths import home_dir, path_text

ROOT = Path(__file__).resolve().parent.parent
FACTS = str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")


def _sub(parser: object, verb: str) -> object:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return action.choices[verb]


@pytest.mark.parametrize("columns", ["80", "200", "45"])
def test_every_verb_help_is_the_full_parsers(monkeypatch: pytest.MonkeyPatch, columns: str) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    full = cli.build_parser(full=True)
    assert cli.build_parser().format_help() == full.format_help()  # the top level lists every verb
    for verb in cli.COMMANDS:
        alone = cli.build_parser(verb)
        assert _sub(alone, verb).format_help() == _sub(full, verb).format_help(), verb  # type: ignore[attr-defined]
        assert _sub(alone, verb).format_usage() == _sub(full, verb).format_usage(), verb  # type: ignore[attr-defined]


def test_parser_of_one_verb_has_no_other_verb() -> None:
    import argparse

    parser = cli.build_parser("audit")
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(action.choices) == ["audit"]


def _modules_after(*argv: str, env: dict[str, str] | None = None) -> tuple[int, set[str], str]:
    """Run stackcheck's main(ARGV) in a fresh interpreter; (exit status, the modules it imported, stdout)."""
    code = (
        "import json, sys\n"
        "from stackcheck.cli import main\n"
        "try:\n"
        f"    rc = main({list(argv)!r})\n"
        "except SystemExit as exc:\n"
        "    rc = exc.code\n"
        "sys.stderr.write(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    run_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=run_env, timeout=120)
    rc, mods = json.loads(proc.stderr.strip().splitlines()[-1])
    return rc, set(mods), proc.stdout


def test_top_level_help_imports_no_verb_module() -> None:
    rc, mods, _ = _modules_after("--help")
    assert rc == 0
    helpers = ("stackcheck.commands.parser", "stackcheck.commands.lean_gettext")  # (the parser's, not verbs)
    assert not [m for m in mods if m.startswith("stackcheck.commands.") and m not in helpers]


#: what a report from saved facts must not import (each is milliseconds of every start, or more)
HEAVY = (
    "jsonschema", "rich", "packaging.specifiers", "pynvml", "pathlib", "importlib.resources", "tempfile",
    "shutil", "subprocess", "socket", "zipfile", "difflib", "hashlib", "email", "decimal", "statistics",
)  # fmt: skip


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "--facts", FACTS],
        ["audit", "--facts", FACTS, "--format", "json"],
        ["plan", "--facts", FACTS],
    ],
)
def test_report_from_saved_facts_imports_nothing_heavy(argv: list[str]) -> None:
    rc, mods, out = _modules_after(*argv)
    assert rc in (0, 1) and out
    assert sorted(m for m in HEAVY if m in mods) == []
    # the manifests' record types are read by the type checker only: typing the documents costs no import
    assert "stackcheck.knowledge.types" not in mods
    assert "stackcheck.documents.types" not in mods  # the report's shapes, likewise


def test_the_planner_imports_no_dataclasses_shlex_nor_difflib() -> None:
    # `plan --want` of a feature no release fixes runs the planner (no kept plan answers it): its records are
    # stackcheck.record.Frozen classes, not dataclasses (with inspect, ast, dis and tokenize: ~8 ms), and its
    # installers quote words without shlex; a feature id spelled as the manifests spell it needs no difflib
    rc, mods, out = _modules_after("plan", "--facts", FACTS, "--want", "torch-symm-mem")
    assert rc in (0, 1) and out
    assert {"stackcheck.plan.planner", "stackcheck.plan.steps", "stackcheck.plan.installers.pip"} <= mods
    lean = ("dataclasses", "inspect", "ast", "dis", "tokenize", "shlex", "difflib")
    assert sorted(m for m in lean if m in mods) == []


def test_a_live_audit_imports_no_pathlib(tmp_path: Path) -> None:
    # pathlib (with urllib.parse and ipaddress) is ~5-7 ms of every start on Python 3.12; the probes spell
    # paths with os.path, and pathlib is imported only where a release is read (derive) or by --deep readers
    rc, mods, out = _modules_after("audit", "--root", str(tmp_path), "--format", "json")
    assert rc in (0, 1) and out.startswith("{")
    assert "stackcheck.probes.source_tables" in mods and "stackcheck.derive.installed" in mods
    assert "pathlib" not in mods
    assert "platform" not in mods  # ~2 ms: the probes read os.uname() and sys.version (probes/test_lean_platform.py)


def test_a_live_audit_imports_no_ast(tmp_path: Path) -> None:
    # torch/version.py is compiled to an AST with the C module's node classes, and the source tables' reader
    # imports ast only where it parses a source: the ast module is ~3 ms of every audit's start; and the C module
    # _ast too is imported only where torch/version.py is read (making its ~120 node classes: ~9 M instructions)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache"), "STACKCHECK_PLAN_CACHE": "1"}  # (the tests turn it off)
    argv = ("audit", "--root", str(tmp_path), "--format", "json")
    _modules_after(*argv, env=env)  # computes the plan (the planner's dataclasses import ast) and keeps it
    rc, mods, out = _modules_after(*argv, env=env)
    assert rc in (0, 1) and out.startswith("{")
    assert {"stackcheck.probes.packages", "stackcheck.probes.source_tables"} <= mods
    assert "stackcheck.plan.planner" not in mods  # the plan came from the cache
    assert "ast" not in mods
    assert "_ast" not in mods  # (no torch under the root: nothing to parse)


def test_a_live_audit_of_no_image_imports_no_image_only_probe(tmp_path: Path) -> None:
    # the container toolkit and Docker daemon probes judge only an image audit: on any other view the runner
    # skips them with their own reason (probes.IMAGE_ONLY) without importing their modules (~2 M instructions)
    rc, mods, out = _modules_after("audit", "--root", str(tmp_path), "--format", "json")
    assert rc in (0, 1) and out.startswith("{")
    assert "stackcheck.probes.runner" in mods
    assert "stackcheck.probes.container_toolkit" not in mods and "stackcheck.probes.docker_daemon" not in mods
    got = {p["name"]: (p["status"], p["reason"]) for p in json.loads(out)["probes"]}
    assert got["container_toolkit"] == ("skipped", "only an image audit (--image) judges NVIDIA_REQUIRE_*")
    assert got["docker_daemon"] == ("skipped", "only an image audit (--image) judges how its container starts")


@pytest.mark.parametrize(
    "argv",
    [
        ("audit", "--format", "json"),
        ("gate", "--dry-run", "--", "python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"),
    ],
)
def test_the_fast_command_lines_import_no_argparse(tmp_path: Path, argv: tuple[str, ...]) -> None:
    # `audit` and `gate ... --` read their common command lines without argparse's parser (cli._fast_args): their
    # verb modules take argparse for annotations only, so argparse itself (~8 M instructions) is not imported
    rc, mods, out = _modules_after(*argv, env={"STACKCHECK_CACHE_DIR": str(tmp_path)})  # (this host: --root is no
    assert rc in (0, 1) and out  # option of the fast path)
    assert "stackcheck.commands." + argv[0] in mods
    assert "argparse" not in mods and "gettext" not in mods


def test_a_cached_report_from_saved_facts_imports_no_packaging_version_nor_typing(tmp_path: Path) -> None:
    # packaging.version is ~3 ms of every start: once the verdicts come from the plan cache, the implied-versions
    # step (facts.implied: which stated release pins what) compares the facts' and the releases' versions as
    # facts.versions._plain reads them. (`packaging` itself: its version is part of the cache key.) typing is
    # ~3.5 ms more: the modules on this path take cast and NamedTuple from stackcheck.lean_typing
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache"), "STACKCHECK_PLAN_CACHE": "1"}
    argv = ("audit", "--facts", FACTS, "--format", "json")
    _, first, before = _modules_after(*argv, env=env)  # judges the stack and keeps the verdicts and the plan
    assert "stackcheck.facts.pep440" in first  # (the engine reads versions as packaging does, without it)
    assert "packaging.version" not in first
    rc, mods, out = _modules_after(*argv, env=env)
    assert rc in (0, 1) and out == before
    # the implied versions' merge is kept with the verdicts too (plan_cache.Entry.merged): neither is judged again
    assert "stackcheck.verdicts.engine" not in mods and "stackcheck.facts.implied" not in mods
    assert "packaging.version" not in mods
    assert "stackcheck.lean_typing" in mods
    assert "threading" not in mods  # saved facts: the manifests load on the main thread, no thread is started
    if "typing" not in _bare_modules():  # (an interpreter whose site imports typing itself proves nothing)
        assert "typing" not in mods


def test_the_driver_starts_before_typing_is_imported() -> None:
    # a live verb starts NVML (the longest wait of an audit) as soon as the command line is read: what is
    # imported before that is on the critical path, and typing (~3.5 ms) is not needed there
    code = (
        "import json, sys\n"
        "import stackcheck.cli\n"
        "from stackcheck.probes import nvml_early\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60, check=True)
    mods = set(json.loads(proc.stdout))
    assert "stackcheck.probes.nvml_early" in mods
    if "typing" not in _bare_modules():
        assert "typing" not in mods


def test_a_cached_live_audit_imports_no_typing(tmp_path: Path) -> None:
    # the live audit of an unchanged box reads its verdicts and plan from the cache: the probes, the views they
    # read through and the pipeline take cast and NamedTuple from stackcheck.lean_typing, not typing (~3.5 ms)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache"), "STACKCHECK_PLAN_CACHE": "1"}
    argv = ("audit", "--root", str(tmp_path), "--format", "json")
    _modules_after(*argv, env=env)
    rc, mods, out = _modules_after(*argv, env=env)
    assert rc in (0, 1) and out.startswith("{")
    assert {"stackcheck.probes.packages", "stackcheck.probes.source_tables", "stackcheck.assembly.target"} <= mods
    assert "stackcheck.verdicts.engine" not in mods
    if "typing" not in _bare_modules():
        assert "typing" not in mods


@pytest.mark.parametrize("facts_ok", [False, True])
def test_saved_facts_are_read_before_the_manifests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], facts_ok: bool
) -> None:
    # without the loading thread, the order of the errors is the thread's: a bad facts file is what is reported,
    # whatever the manifests hold; good facts with broken manifests report the manifests
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "features.json").write_text("{not json")
    bad = tmp_path / "facts.json"
    bad.write_text('{"x":')
    facts = FACTS if facts_ok else str(bad)
    rc = cli.main(["audit", "--facts", facts, "--manifests", str(tmp_path / "m"), "--format", "json"])
    err = capsys.readouterr().err
    assert rc == 2
    assert ("features.json" in err) is facts_ok and (str(bad) in err) is not facts_ok


def _bare_modules() -> set[str]:
    """The modules this interpreter has imported before running anything (its site, .pth files)."""
    proc = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return set(json.loads(proc.stdout))


@given(st.text(alphabet="/.ab", max_size=12))
@example("//a")
@example("///a/")
@example("")
@example("./")
@example("a/./b/../c//")
def test_path_text_is_pathlibs(text: str) -> None:
    assert path_text(text) == str(pathlib.PurePosixPath(text))


def test_home_dir_is_pathlibs(monkeypatch: pytest.MonkeyPatch) -> None:
    for home in ("/root", "/home/ann/", "//srv//u"):
        monkeypatch.setenv("HOME", home)
        assert home_dir() == str(pathlib.Path.home())


@pytest.mark.parametrize("columns", [None, "120", "0", "-3", "abc", " 90"])
def test_columns_are_shutils(monkeypatch: pytest.MonkeyPatch, columns: str | None) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    assert cli_parser._columns() == shutil.get_terminal_size().columns


def test_the_program_exits_without_teardown_and_loses_no_output(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    argv = ["audit", "--facts", FACTS, "--format", "json"]
    proc = subprocess.run([sys.executable, "-m", "stackcheck", *argv], capture_output=True, text=True, env=env)
    code = "import sys\nfrom stackcheck.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    plain = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env)
    assert proc.returncode == plain.returncode
    strip = [line for line in proc.stdout.splitlines() if "collected_at" not in line]
    assert strip == [line for line in plain.stdout.splitlines() if "collected_at" not in line]
    assert json.loads(proc.stdout)["summary"]
    # an atexit callback (a coverage tool, a plug-in) still runs: the ordinary exit is taken then
    marker = tmp_path / "atexit-ran"
    code = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(lambda: pathlib.Path({str(marker)!r}).write_text('yes'))\n"
        "from stackcheck.cli import run\n"
        "sys.argv = ['stackcheck', 'audit', '--facts', sys.argv[1]]\n"
        "run()\n"
    )
    got = subprocess.run([sys.executable, "-c", code, FACTS], capture_output=True, text=True, env=env)
    assert got.returncode == plain.returncode and marker.read_text() == "yes"


def test_atexit_callbacks_run_then_the_program_leaves_without_teardown(tmp_path: Path) -> None:
    """An atexit callback (a coverage tool's; certifi.where() called from a site .pth file registers one) is run by
    run() as the ordinary exit runs it (the last registered first, an error printed and passed over, what it
    prints flushed), and the program then leaves through os._exit (iperf31: the ordinary exit's teardown was ~16 ms
    of every command of such an interpreter). Something waiting through threading's own exit hook still gets
    the ordinary exit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    marker = tmp_path / "order"
    code = (
        "import atexit, os, sys\n"
        f"MARK = {str(marker)!r}\n"
        "def note(word):\n"
        "    with open(MARK, 'a') as fh:\n"
        "        fh.write(word + ' ')\n"
        "_exit = os._exit\n"
        "def leave(code):\n"
        "    note(f'os._exit({code})')\n"
        "    _exit(code)\n"
        "os._exit = leave\n"
        "atexit.register(note, 'first')\n"
        "def broken():\n"
        "    raise ValueError('a callback that fails')\n"
        "atexit.register(broken)\n"
        "atexit.register(print, 'printed at exit')\n"
        "atexit.register(note, 'last')\n"
        "if sys.argv[2] == 'threading':\n"
        "    import threading\n"
        "    threading._register_atexit(note, 'threading')\n"
        "from stackcheck.cli import run\n"
        "sys.argv = ['stackcheck', 'audit', '--facts', sys.argv[1], '--format', 'json']\n"
        "run()\n"
    )
    plain = subprocess.run(
        [sys.executable, "-m", "stackcheck", "audit", "--facts", FACTS, "--format", "json"],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    got = subprocess.run(
        [sys.executable, "-c", code, FACTS, "atexit"], capture_output=True, text=True, env=env, timeout=60
    )
    assert got.returncode == plain.returncode
    assert marker.read_text() == f"last first os._exit({plain.returncode}) "
    assert got.stdout.endswith("}\nprinted at exit\n") and json.loads(got.stdout[: -len("printed at exit\n")])
    assert "ValueError: a callback that fails" in got.stderr
    marker.unlink()
    got = subprocess.run(
        [sys.executable, "-c", code, FACTS, "threading"], capture_output=True, text=True, env=env, timeout=60
    )
    assert got.returncode == plain.returncode
    assert marker.read_text() == "threading last first "  # the ordinary exit: no os._exit
    assert got.stdout.endswith("}\nprinted at exit\n")


def test_a_deep_audit_imports_no_dataclasses_or_pathlib(tmp_path: Path) -> None:
    # the ELF, fatbin and library readers' records are NamedTuples and records: dataclasses (with inspect, dis
    # and tokenize) and pathlib (with urllib.parse and ipaddress) were ~8 ms of every audit --deep's start
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache"), "STACKCHECK_PLAN_CACHE": "1"}  # (the tests turn it off)
    argv = ("audit", "--deep", "--root", str(tmp_path), "--format", "json")
    _modules_after(*argv, env=env)  # computes the plan (the planner's records are dataclasses) and keeps it
    rc, mods, out = _modules_after(*argv, env=env)
    assert rc in (0, 1) and out.startswith("{")
    assert {"stackcheck.readers.binaries", "stackcheck.readers.libs"} <= mods
    assert "stackcheck.plan.planner" not in mods  # the plan came from the cache
    assert sorted(m for m in ("dataclasses", "inspect", "pathlib") if m in mods) == []
    # the fatbin reader is imported where a file is read (none under this root; an answer kept by readers.kept
    # needs none): imported alone it brings none of them either
    code = (
        "import sys, stackcheck.readers.fatbin\n"
        "print(sorted(m for m in ('dataclasses', 'inspect', 'pathlib') if m in sys.modules))"
    )
    got = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, check=True
    )
    assert got.stdout.strip() == "[]"


def test_a_live_gate_binds_its_port_without_socket_or_ipaddress() -> None:
    # the port check binds with _socket and tells an IPv4 address or a name without ipaddress; the gate's text
    # names sources without importing the report's renderer: ~5 ms of the gate's start
    argv = ["gate", "--dry-run", "--", sys.executable, "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
    rc, mods, out = _modules_after(*argv)
    assert rc in (0, 1) and "preflight port: " in out  # the port was bound (free or not)
    assert re.search(r" \([\w.:-]+( \+\d+)?\)$", out, re.M)  # a reason's source ids, as the full renderer wrote them
    assert "stackcheck.launch.preflight.host" in mods
    assert sorted(m for m in ("socket", "ipaddress", "stackcheck.render.text") if m in mods) == []
