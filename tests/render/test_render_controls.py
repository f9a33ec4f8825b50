"""No terminal control from the box reaches a terminal through any human format of any document (irel4): every
free-text string of a real document (one with a space, a `/` or a `.`: names, paths, versions, reasons, commands)
is given ESC/OSC/CSI, BEL, backspace, C1 CSI/DCS/OSC and a bidi override, and every format but JSON (which escapes
them, redact.json_text) is rendered; the fleet reads reports whose host names and GPU names carry them."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from stackcheck.redact import _map_strings
from stackcheck.render import DOCUMENTS
from stackcheck.render.interface import RenderOptions

CASES = Path(__file__).resolve().parent.parent / "cases"
PLANTED = "\x1b]0;PWN\x07\x1b[2J\x9b31m\x08\x90q\x9d0;x\u202e\u2066"
RAW = ("\x1b", "\x07", "\x9b", "\x08", "\x90", "\x9d", "\u202e", "\u2066")


def planted(doc: Any) -> Any:
    return _map_strings(doc, lambda s: s + PLANTED if (" " in s or "/" in s or "." in s) else s)


def assert_no_raw(out: str, where: str, colour: bool) -> None:
    if colour:  # the renderer's own colours (SGR: ESC [ digits m) are the only escapes a coloured text may hold
        out = re.sub(r"\x1b\[[0-9;]*m", "", out)
    for raw in RAW:
        assert raw not in out, (where, repr(raw), repr(out[max(0, out.find(raw) - 120) : out.find(raw) + 20]))


def _document(name: str, tmp: Path) -> Any:
    """The real document test_render_registry.py renders (loaded by path: tests/render is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "_registry_documents", Path(__file__).with_name("test_render_registry.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.document(name, tmp)


OPTIONS = (RenderOptions(), RenderOptions(color=True, width=80, sources=True, verbose=True))


@pytest.mark.parametrize("name", sorted(set(DOCUMENTS) - {"fleet", "triage"}))
def test_every_human_format_escapes_what_the_box_planted(name: str, tmp_path: Path) -> None:
    doc = planted(_document(name, tmp_path))
    for fmt, render in DOCUMENTS[name].items():
        if fmt == "json":
            continue
        for options in OPTIONS:
            assert_no_raw(render(doc, options), f"{name} {fmt}", options.color)


def test_recommend_shell_escapes_a_command_with_a_control() -> None:
    from stackcheck.render.recommend import render_shell

    step = {"component": "c", "to": "1", "commands": ["pip install 'a\x1b]0;T\x07b' && true"]}
    doc = {
        "box": "b",
        "goal": "g",
        "launch": {"tp": 1},
        "command": ["python", "-m", "x\x1b[2J"],
        "plan": {"steps": [step]},
    }
    out = render_shell(doc)
    assert_no_raw(out, "shell", False)
    assert "pip install $'a\\x1b]0;T\\x07b' && true" in out and "$'x\\x1b[2J'" in out
    assert "\n# echo 'x\\x07\n" in render_shell({**doc, "plan": {"steps": [{"commands": ["echo 'x\x07"]}]}})


def test_fleet_formats_escape_host_and_gpu_names(tmp_path: Path) -> None:
    from stackcheck.cli import main
    from stackcheck.documents.fleet import FleetReport, read_fleet

    for name in ("writeup-after", "h200-newest"):
        doc = json.loads((CASES / name / "facts.json").read_text())
        doc.setdefault("host", {})["hostname"] = f"node-{name}{PLANTED}"
        doc["facts"]["gpus"][0]["name"] += PLANTED
        (tmp_path / f"{name}-facts.json").write_text(json.dumps(doc))
        out = tmp_path / f"{name}.json"
        main(["audit", "--facts", str(tmp_path / f"{name}-facts.json"), "--format", "json", "--output", str(out)])
        (tmp_path / f"{name}-facts.json").unlink()
    fleet = read_fleet([str(tmp_path)], jobs=1)
    report = FleetReport(fleet, fleet.summary())
    for fmt, render in DOCUMENTS["fleet"].items():
        if fmt != "json":
            for options in OPTIONS:
                assert_no_raw(render(report, options), f"fleet {fmt}", options.color)
