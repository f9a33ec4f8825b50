"""irobust5: a facts document nested a few hundred levels deep (under the parser's own limit, which
test_hostile_files' 100,000-deep one meets) parsed, then the schema check and the other readers after it walked it
recursively and stopped with RecursionError: an internal error (exit 4, "this is a bug") for what is bad input. Now
refused when read, exit 2, one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import run_stackcheck

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "examples" / "facts" / "h200-cu130.json"


def _deep(tmp_path: Path, depth: int) -> Path:
    doc = json.loads(H200.read_text())
    text = json.dumps(doc)
    at = text.index('"packages": {') + len('"packages": {')
    out = tmp_path / "deep.json"
    out.write_text(text[:at] + '"x": {"installed": false, "n": ' + "[" * depth + "]" * depth + "}, " + text[at:])
    return out


@pytest.mark.parametrize(
    "verb",
    [["audit", "--facts"], ["plan", "--facts"], ["facts", "check"], ["diff", str(H200)],
     ["gate", "--dry-run", "--facts"]],
)  # fmt: skip
def test_a_deeply_nested_facts_file_is_bad_input(tmp_path: Path, verb: list[str]) -> None:
    # fails before: exit 4, "internal error: RecursionError"
    path = _deep(tmp_path, 400)
    args = [*verb, str(path)]
    if verb[0] == "gate":
        args += ["--", "python3", "-m", "sglang.launch_server", "--model-path", "/m"]
    proc = run_stackcheck(*args, timeout=120)
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "nested too deeply" in err and "deep.json" in err, (proc.returncode, err[-300:])
    assert len(err.splitlines()) == 1, err


def test_a_document_of_ordinary_depth_is_read(tmp_path: Path) -> None:
    proc = run_stackcheck("facts", "check", str(_deep(tmp_path, 20)), timeout=120)
    assert proc.returncode == 0, proc.stderr[-300:]
