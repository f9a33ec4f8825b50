"""The renderer family is wired end to end: every format of every document renders a real document, every
verb's --format choices are its document's registry (so a format cannot be registered and unreachable, or
offered and missing), and JSON is written in one place."""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import COMMANDS, build_parser, main
from stackcheck.render import DOCUMENTS, FORMAT_ALIASES
from stackcheck.render.interface import RenderOptions

ROOT = Path(__file__).resolve().parent.parent.parent
PACKAGE = ROOT / "stackcheck"
CASES = ROOT / "tests" / "cases"
AFTER = str(CASES / "writeup-after" / "facts.json")
BEFORE = str(CASES / "writeup-before" / "facts.json")
LOG = str(ROOT / "tests" / "realworld" / "sglang-9140-trtllm-mha-sm120" / "server.log")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "8", "--enable-torch-symm-mem"]

#: the document each verb writes; a verb that is not here has no --format
VERB_DOCUMENTS = {
    "audit": "report",
    "probe": "probe",
    "plan": "plan",
    "gate": "gate",
    "triage": "triage",
    "fleet": "fleet",
    "explain": "explain",
    "diff": "diff",
    "recommend": "recommend",
}


def _json_out(argv: list[str]) -> Any:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(argv)
    return json.loads(out.getvalue())


def _fleet(tmp: Path) -> Any:
    from stackcheck.documents.fleet import FleetReport, read_fleet

    for name in ("writeup-after", "writeup-before", "h200-newest"):
        report = _json_out(["audit", "--facts", str(CASES / name / "facts.json"), "--format", "json"])
        (tmp / f"{name}.json").write_text(json.dumps(report), encoding="utf-8")
    fleet = read_fleet([str(tmp)], jobs=1)
    return FleetReport(fleet, fleet.summary())


def _triage() -> Any:
    from stackcheck.launch.triage import TriageReport, triage_file, triage_with_plan

    result = triage_file(LOG)
    report = _json_out(["audit", "--facts", AFTER, "--format", "json"])
    fix = triage_with_plan(result, report["plan"], report["checks"])
    return TriageReport(result, fix, asked=True, sources=lambda: {})


def document(name: str, tmp: Path) -> Any:
    """A real document of each kind, as its command builds it."""
    if name == "triage":
        return _triage()
    if name == "fleet":
        return _fleet(tmp)
    argv = {
        "report": ["audit", "--facts", BEFORE],
        "probe": ["probe", "--facts", BEFORE],
        "plan": ["plan", "--facts", BEFORE],
        "gate": ["gate", "--facts", BEFORE, "--dry-run", "--", *LAUNCH],
        "explain": ["explain", "torch-symm-mem", "--assume-gpu", "12.0x8"],
        "diff": ["diff", BEFORE, AFTER],
        "recommend": ["recommend", "--facts", BEFORE],
    }[name]
    return _json_out([argv[0], "--format", "json", *argv[1:]])  # before a gate's `--`


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_every_format_of_every_document_renders(name: str, tmp_path: Path) -> None:
    doc = document(name, tmp_path)
    registry = DOCUMENTS[name]
    assert "text" in registry and "json" in registry, name
    for fmt, render in registry.items():
        for options in (RenderOptions(), RenderOptions(color=True, width=80, sources=True, verbose=True)):
            out = render(doc, options)
            assert isinstance(out, str) and out.strip(), (name, fmt)
            assert out.endswith("\n"), (name, fmt)
            out.encode("utf-8")
        if fmt == "json":
            parsed = json.loads(render(doc, RenderOptions()))
            assert isinstance(parsed, dict) and parsed, name
            one_line = render(doc, RenderOptions(compact=True))
            assert one_line.count("\n") == 1 and json.loads(one_line) == parsed


def _format_action(parser: argparse.ArgumentParser, verb: str) -> argparse.Action | None:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[verb]
    return next((a for a in sub._actions if "--format" in a.option_strings), None)


@pytest.mark.parametrize("verb", sorted(COMMANDS))
def test_format_choices_are_the_registry_keys(verb: str) -> None:
    """pip-audit's test_to_format_is_exhaustive, both ways: every choice a verb offers renders, and every
    format its document has is offered."""
    action = _format_action(build_parser(verb), verb)
    if verb not in VERB_DOCUMENTS:
        assert action is None, f"{verb} has --format but no document in VERB_DOCUMENTS"
        return
    assert action is not None and action.choices is not None
    registry = DOCUMENTS[VERB_DOCUMENTS[verb]]
    offered = [c for c in action.choices if c not in FORMAT_ALIASES]
    assert offered == list(registry), verb
    for old in action.choices:
        if old in FORMAT_ALIASES:
            assert FORMAT_ALIASES[old] in registry


def test_every_document_is_written_by_a_verb() -> None:
    assert set(VERB_DOCUMENTS.values()) == set(DOCUMENTS)


def test_an_old_format_name_renders_its_new_format(capsys: pytest.CaptureFixture[str]) -> None:
    """`--format table` (text's old name) works for every verb that offers it, recommend included."""
    assert main(["recommend", "--facts", AFTER, "--format", "table"]) == 0
    captured = capsys.readouterr()
    assert "stackcheck recommend" in captured.out and "is now called text" in captured.err


def _calls(tree: ast.AST) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
                out.append(f"{f.value.id}.{f.attr}")
            elif isinstance(f, ast.Name):
                out.append(f.id)
    return out


def test_json_is_written_in_one_place() -> None:
    """Documents are written by render/jsonout.py alone (indent, UTF-8, escaping); the command modules and
    the renderers never call json.dump(s) or the escaper themselves."""
    writers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        calls = _calls(ast.parse(path.read_text(encoding="utf-8")))
        if "json_text" in calls and rel not in ("redact.py", "render/jsonout.py"):
            writers.append(f"{rel}: json_text")
        if rel.startswith(("commands/", "render/")) and {"json.dumps", "json.dump"} & set(calls):
            writers.append(f"{rel}: json.dump(s)")
    assert writers == []


def _case_facts() -> list[Path]:
    return sorted(p / "facts.json" for g in ("cases", "plan_cases") for p in (ROOT / "tests" / g).iterdir())


@pytest.mark.parametrize("facts", [p for p in _case_facts() if p.is_file()], ids=lambda p: p.parent.name)
def test_every_report_format_renders_every_case(facts: Path) -> None:
    """Every case folder's report (a box without GPUs or a driver, an image, an assumed GPU, a broken
    install...) renders in every format of the report, probe and plan registries, at any width."""
    report = _json_out(["audit", "--facts", str(facts), "--format", "json"])
    for name in ("report", "probe", "plan"):
        for fmt, render in DOCUMENTS[name].items():
            for options in (RenderOptions(), RenderOptions(color=True, width=60, sources=True)):
                out = render(report, options)
                assert out.endswith("\n") and out.strip(), (name, fmt)


@pytest.mark.parametrize(
    "log", sorted((ROOT / "tests" / "realworld").glob("*/server.log")), ids=lambda p: p.parent.name
)
def test_every_triage_format_renders_every_log(log: Path) -> None:
    from stackcheck.launch.triage import TriageReport, triage_file

    report = TriageReport(triage_file(str(log)))
    for fmt, render in DOCUMENTS["triage"].items():
        out = render(report, RenderOptions())
        assert out.endswith("\n") and out.strip(), fmt
