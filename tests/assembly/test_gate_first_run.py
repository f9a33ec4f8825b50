"""The gate's first run of a command line (no kept decision: gate_cache misses) with the caches on prints what the
gate prints with them off, whether the shipped manifests come from their JSON or from their twins
(knowledge/prepared.py), and takes stackcheck's code stamp once (the gate cache's key and the plan key share it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import plan_cache
from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
BOXES = ["tests/cases/h200-newest/facts.json", "tests/cases/b200/facts.json", "tests/cases/writeup-after/facts.json"]


def _run(env: dict[str, str], argv: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "stackcheck", *argv], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("box", BOXES)
def test_a_first_run_from_the_twins_prints_what_the_gate_prints_without_caches(tmp_path: Path, box: str) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    argv = ["gate", "--dry-run", "--facts", box, "--format", "json", "--", *LAUNCH]
    off = _run({**env, "STACKCHECK_PLAN_CACHE": "0"}, argv)
    assert off[0] in (0, 1)
    runs = []
    for _ in range(2):  # the first parses the JSON and writes the twins; the second reads them
        runs.append(_run({**env, "STACKCHECK_PLAN_CACHE": "1"}, argv))
        for kept in (tmp_path / "c" / "gate").glob("*.json"):
            kept.unlink()  # (a new command line: no kept decision)
    assert len(list((tmp_path / "c" / "prepared").glob("*.marshal"))) >= 8
    assert runs == [off, off]


def test_a_live_first_run_takes_the_code_stamp_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    real = plan_cache._code_stamp
    calls: list[int] = []

    def counted() -> Any:
        calls.append(1)
        return real()

    monkeypatch.setattr(plan_cache, "_code_stamp", counted)
    code = main(["gate", "--dry-run", "--", *LAUNCH])
    capsys.readouterr()
    assert code in (0, 1)
    assert len(calls) == 1  # (the gate cache's key took it; the plan key's preparation reuses it)
