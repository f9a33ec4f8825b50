"""igap42 (issue 16): `python -P` on a Python older than 3.11. -P came in 3.11 (CPython 3.10's Python/getopt.c has no
P among its short options: "Unknown option: -P", the usage, exit 2), so `python3.10 -P -m sglang.launch_server` dies
before SGLang is imported, and the gate said nothing of it. The audited interpreter's version (facts.python.version,
which the packages probe reads for PYTHONSAFEPATH already) now judges it: blocked before 3.11, nothing from 3.11 on,
unknown where the version is not read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json, release_box

from stackcheck.assembly.target import python_option_letters


def _gate(tmp_path: Path, python: str | None, *interpreter: str) -> tuple[int, dict[str, Any]]:
    path = release_box(tmp_path, "0.5.9", "9.0")
    doc = json.loads(path.read_text())
    if python is not None:
        doc["facts"]["python"] = {"version": python}
    path.write_text(json.dumps(doc))
    command = [*interpreter, "-m", "sglang.launch_server", "--model-path", "/m"]
    return cli_json(["gate", "--facts", str(path), "--format", "json", "--", *command])


def _p_reason(doc: dict[str, Any]) -> dict[str, Any] | None:
    found = [r for r in doc["reasons"] if r["feature"] == "-P"]
    return found[0] if found else None


@pytest.mark.parametrize("interpreter", [["python3.10", "-P"], ["python", "-uP"], ["env", "A=1", "python", "-IP"]])
def test_p_on_python_310_is_blocked(tmp_path: Path, interpreter: list[str]) -> None:
    rc, doc = _gate(tmp_path, "3.10.13", *interpreter)
    reason = _p_reason(doc)
    assert rc == 1 and doc["decision"] == "refuse" and reason is not None, doc["reasons"]
    assert reason["status"] == "blocked" and reason["effect"] == "crash"
    assert "Unknown option: -P" in reason["reasons"][0]["message"]
    assert reason["reasons"][0]["observed"] == "Python 3.10.13"


def test_p_on_python_311_and_later_is_no_problem(tmp_path: Path) -> None:
    for version in ("3.11.7", "3.13.1"):
        _, doc = _gate(tmp_path, version, "python", "-P")
        assert _p_reason(doc) is None, (version, doc["reasons"])


def test_p_with_the_version_unread_is_unknown(tmp_path: Path) -> None:
    _, doc = _gate(tmp_path, None, "python", "-P")
    reason = _p_reason(doc)
    assert reason is not None and reason["status"] == "unknown", doc["reasons"]


def test_no_p_or_a_p_inside_an_options_argument_is_not_read_as_p(tmp_path: Path) -> None:
    _, doc = _gate(tmp_path, "3.10.13", "python", "-u", "-Werror::PendingDeprecationWarning")
    assert _p_reason(doc) is None, doc["reasons"]


def test_python_option_letters() -> None:
    assert python_option_letters(["python", "-u", "-P", "-m", "x"], {}) == "uPm"
    assert python_option_letters(["python", "-X", "P", "-Wd", "s.py", "-P"], {}) == "XW"
    assert python_option_letters(["nohup", "python3.10", "-EP", "-c", "pass"], {}) == "EPc"
    assert python_option_letters(["sglang", "serve", "-P"], {}) is None
