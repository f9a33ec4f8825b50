"""irobust9: an error inside a JSON string (a raw control character, a bad escape, an unterminated string) read by
stackcheck.lean_json in a process that has not imported json.decoder. The C scanner of Python 3.10 / 3.11 raises its
JSONDecodeError only where json.decoder is already in sys.modules; otherwise it returned NULL with no exception set
and the read ended in SystemError: `audit --facts` of a hand-edited facts file with a TAB or a Windows path
(`"C:\\models"`) in a string exited 4 ("internal error ... this is a bug") instead of 2 naming the file and place."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_process import ROOT, clean_env, run_stackcheck

BAD_STRINGS = ['{"a": "x\tb"}', '{"a": "C:\\models"}', '{"a": "\x1b[31m"}', '{"a": "open', '["\\u12"]']


@pytest.mark.parametrize("text", BAD_STRINGS)
def test_a_string_error_is_json_decode_error_in_a_fresh_process(text: str) -> None:
    code = (
        "import sys\n"
        "from stackcheck import lean_json\n"
        "assert 'json.decoder' not in sys.modules\n"
        "try:\n"
        "    lean_json.loads(sys.argv[1])\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__, lean_json.is_decode_error(exc))\n"
    )
    got = subprocess.run(
        [sys.executable, "-c", code, text], capture_output=True, text=True, timeout=60, env=clean_env(), cwd=ROOT
    )
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["JSONDecodeError", "True"]


@pytest.mark.parametrize("body", ['"name": "NVIDIA\tH100"', '"path": "C:\\models"', '"os": "Ubuntu\x1b[2J"'])
def test_facts_with_a_bad_string_is_a_bad_input(tmp_path: Path, body: str) -> None:
    facts = tmp_path / "facts.json"
    facts.write_text('{"system": {' + body + "}}\n")
    got = run_stackcheck("audit", "--facts", str(facts))
    assert got.returncode == 2, got.stderr
    assert "internal error" not in got.stderr and "SystemError" not in got.stderr
    assert str(facts) in got.stderr and "line 1" in got.stderr
    assert "\x1b" not in got.stderr
