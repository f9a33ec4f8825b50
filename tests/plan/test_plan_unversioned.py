"""A package the facts say is installed without its version is not "not installed": the audit's stack line and a
plan step's `from` say what is there (a report that pastes torch's capability warning but not `pip list`), and
`--hold` of it says why it cannot be held."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main


def _facts(tmp_path: Path, packages: dict[str, Any]) -> Path:
    doc = {
        "schema_version": 1,
        "facts": {
            "gpus": [{"index": 0, "name": "NVIDIA RTX PRO 6000 Blackwell", "compute_capability": "12.0"}],
            "driver": {"version": "580.95.05", "cuda": "13.0"},
            "packages": packages,
            "collected_at": "2026-01-18",
        },
    }
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def _run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main(args)
        except SystemExit as exc:
            code = int(exc.code or 0)
    return int(code or 0), out.getvalue()


@pytest.fixture(autouse=True)
def _no_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("STACKCHECK_MANIFESTS", raising=False)


def test_torch_installed_without_a_version_is_not_called_not_installed(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"torch": {"installed": True}})
    _, text = _run(["audit", "--facts", str(facts)])
    assert "torch None" not in text
    assert "stack: torch (version not known)" in text
    assert "torch: not installed" not in text
    assert "torch: installed, version not known →" in text
    _, out = _run(["plan", "--facts", str(facts), "--format", "json"])
    steps = [s for s in json.loads(out)["plan"]["steps"] if s["component"] == "torch"]
    assert steps and steps[0]["from"] == "installed, version not known"


def test_a_package_that_is_not_installed_still_says_so(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"torch": {"installed": False}})
    _, out = _run(["plan", "--facts", str(facts), "--format", "json"])
    steps = [s for s in json.loads(out)["plan"]["steps"] if s["component"] == "torch"]
    assert steps and steps[0]["from"] is None


def test_hold_of_a_package_without_a_version_says_why(tmp_path: Path) -> None:
    facts = _facts(tmp_path, {"torch": {"installed": True}})
    code, text = _run(["plan", "--facts", str(facts), "--hold", "torch"])
    assert code == 1
    assert "--hold torch: torch is installed but its version is not known" in text
