"""ismall, finding four: `recommend --plan-facts FILE` with an output that cannot be written.

Before, the plan-facts file was written (replacing the one there) and then writing --output failed (exit 2): the
user was left with a new plan-facts file and no recommendation. Now both are rendered, the plan facts staged
beside their file, the recommendation written, then the plan facts renamed into place: a failed recommendation
write leaves the plan-facts file as it was and no temporary file behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest
from cli_process import clean_env

ROOT = Path(__file__).resolve().parents[1]
FACTS = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"
OLD = '{"the": "plan facts of an earlier run"}\n'


def recommend(*args: str, stdout: int | IO[str] = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    env = clean_env("HF_", "CUDA_", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "stackcheck", "recommend", "--facts", str(FACTS), *args],
                          stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120, env=env, cwd=ROOT,
                          stdin=subprocess.DEVNULL, check=False)  # fmt: skip


@pytest.mark.parametrize("bad", ["a-directory", "missing-dir/out.txt"])
def test_an_output_that_cannot_be_written_leaves_the_plan_facts_as_they_were(tmp_path: Path, bad: str) -> None:
    (tmp_path / "a-directory").mkdir()
    plan = tmp_path / "after.json"
    plan.write_text(OLD)
    proc = recommend("--plan-facts", str(plan), "--output", str(tmp_path / bad))
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and bad in proc.stderr
    assert plan.read_text() == OLD  # before: replaced by this run's plan facts
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-directory", "after.json"]  # no .tmp left
    fresh = tmp_path / "new.json"
    assert recommend("--plan-facts", str(fresh), "--output", str(tmp_path / bad)).returncode == 2
    assert not fresh.exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_leaves_no_plan_facts(tmp_path: Path) -> None:
    plan = tmp_path / "after.json"
    with open("/dev/full", "w") as full:
        proc = recommend("--plan-facts", str(plan), stdout=full)
    assert proc.returncode == 2, proc.stderr
    assert not plan.exists() and list(tmp_path.iterdir()) == []


def test_both_written_when_both_can_be(tmp_path: Path) -> None:
    plan, out = tmp_path / "after.json", tmp_path / "rec.json"
    plan.write_text(OLD)
    proc = recommend("--plan-facts", str(plan), "--output", str(out), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    assert "facts" in json.loads(plan.read_text()) and "schema_version" in json.loads(out.read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["after.json", "rec.json"]


def test_the_same_file_for_both_is_a_usage_error(tmp_path: Path) -> None:
    plan = tmp_path / "after.json"
    plan.write_text(OLD)
    proc = recommend("--plan-facts", str(plan), "--output", str(tmp_path / "." / "after.json"))
    assert proc.returncode == 2 and "name the same file" in proc.stderr, proc.stderr
    assert plan.read_text() == OLD
