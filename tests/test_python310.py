"""stackcheck runs on the oldest Python it supports (pyproject's requires-python >= 3.10): iperf27's named-tuple
constructors passed co_qualname to CodeType.replace, which Python 3.10 does not take, so every command failed at import
there (found at the ninth session's hand-in re-read). Runs a CPython 3.10 where this machine has one (on the PATH or
under pyenv), else skips; its audit of a saved box must judge every feature and check as this interpreter does."""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "tests" / "cases" / "writeup-before" / "facts.json"


def _python310() -> str | None:
    found = shutil.which("python3.10")
    if found is not None and subprocess.run([found, "-c", "pass"], capture_output=True, check=False).returncode == 0:
        return found
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10*/bin/python3.10")))
    return pyenv[-1] if pyenv else None


def _verdicts(python: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [python, "-m", "stackcheck", "audit", "--facts", str(FACTS), "--format", "json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, cwd=ROOT, timeout=120)
    assert out.stdout.startswith("{"), (out.returncode, out.stderr[-2000:])
    doc = json.loads(out.stdout)
    return {
        **{f"feature {f['id']}": str(f.get("status")) for f in doc["features"]},
        **{f"check {c['id']}": str(c.get("status")) for c in doc["checks"]},
    }


def test_an_audit_on_python_310_judges_as_this_python_does() -> None:
    python = _python310()
    if python is None:
        pytest.skip("no CPython 3.10 on this machine")
    here = _verdicts(sys.executable)
    assert len(here) > 40 and _verdicts(python) == here
