"""iperf35 (issue 21): the runner scan every gate and recommend run (launch/runners.py, irobust5) imports no
dataclasses; that import brought inspect, ast, dis and tokenize with it (~34-42 M instructions of each command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LEAN = ("dataclasses", "inspect", "ast", "dis", "tokenize")


def _modules_after(*argv: str) -> tuple[int, set[str]]:
    code = (
        "import json, sys\n"
        "from stackcheck.cli import main\n"
        "try:\n"
        f"    rc = main({list(argv)!r})\n"
        "except SystemExit as exc:\n"
        "    rc = exc.code\n"
        "sys.stderr.write(json.dumps([rc, sorted(sys.modules)]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    rc, mods = json.loads(proc.stderr.strip().splitlines()[-1])
    return rc, set(mods)


@pytest.mark.parametrize(
    "argv",
    [
        ["gate", "--facts", str(ROOT / "tests/cases/h200-newest/facts.json"), "--dry-run", "--format", "json", "--",
         "/bin/true", "--tp", "8", "--attention-backend", "flashinfer"],
        ["gate", "--facts", str(ROOT / "tests/cases/h200-newest/facts.json"), "--dry-run", "--format", "json", "--",
         "nice", "-n", "5", "python3", "-m", "sglang.launch_server", "--tp", "8"],
        ["recommend", "--facts", str(ROOT / "tests/recommend/seed-before/facts.json"), "--format", "json"],
    ],
)  # fmt: skip
def test_the_runner_scan_imports_no_dataclasses(argv: list[str]) -> None:
    rc, mods = _modules_after(*argv)
    assert rc in (0, 1)
    assert "stackcheck.launch.runners" in mods  # (the scan ran)
    assert sorted(m for m in LEAN if m in mods) == []


def test_runner_records_read_as_before() -> None:
    from stackcheck.launch.runners import RUNNERS, read_runner

    assert RUNNERS["taskset"].positional == 1 and RUNNERS["srun"].every_long_known is False
    argv = ["taskset", "-c", "0-7", "A=1", "python3"]
    reading = read_runner(argv, 0)
    assert (reading.command, reading.unsure) == (3, None)
    assert read_runner(["srun", "--frob", "x", "python3"], 0).unsure is not None
