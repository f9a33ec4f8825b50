"""irobust5: a facts document with the same key twice in one object. JSON's parsers keep the last one silently
(RFC 8259 4: names "SHOULD be unique", and what a parser does with repeats is up to it), so a hand-merged facts file
with two "driver" sections, or two "torch" packages, was judged on whichever came last, with nothing said. Every verb
that reads --facts now refuses it as bad input (exit 2) with one line naming the file and the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import run_stackcheck

from stackcheck.errors import BadInputError
from stackcheck.facts.model import parse_json_text

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "examples" / "facts" / "h200-cu130.json"


def _doubled(tmp_path: Path) -> Path:
    """The example facts with a second "driver" key in the facts object, holding an older driver."""
    text = H200.read_text()
    doc = json.loads(text)
    facts = doc.get("facts", doc)
    driver = json.dumps({**facts["driver"], "version": "470.57.02", "cuda": "11.4"})
    at = text.index('"driver"')
    out = tmp_path / "doubled.json"
    out.write_text(text[:at] + f'"driver": {driver},\n    ' + text[at:])
    return out


def test_a_duplicate_key_is_refused_by_the_parser() -> None:
    with pytest.raises(BadInputError) as got:
        parse_json_text('{"a": {"b": 1, "c": 2, "b": 3}}', "box.json")
    assert "box.json" in str(got.value) and "'b'" in str(got.value) and "\n" not in str(got.value)
    # the same key in two objects is no repeat
    assert parse_json_text('{"a": {"b": 1}, "c": {"b": 2}}', "box.json") == {"a": {"b": 1}, "c": {"b": 2}}


@pytest.mark.parametrize("verb", [["audit"], ["plan"], ["explain", "cuda-graph"], ["gate", "--dry-run"]])
def test_every_verb_refuses_a_facts_file_with_a_repeated_key(tmp_path: Path, verb: list[str]) -> None:
    # fails before: the later "driver" was judged (exit 0/1, no word of the first)
    path = _doubled(tmp_path)
    json.loads(path.read_text())  # (valid JSON as far as json.loads goes)
    args = [*verb[:1], "--facts", str(path), *verb[1:]]
    if verb[0] == "gate":
        args += ["--", "python3", "-m", "sglang.launch_server", "--model-path", "/m"]
    proc = run_stackcheck(*args, timeout=120)
    assert proc.returncode == 2, (proc.returncode, proc.stdout[-400:], proc.stderr[-400:])
    err = proc.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "duplicate key 'driver'" in err and "doubled.json" in err, err
