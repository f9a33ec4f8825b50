"""The kept manifests (stackcheck.knowledge.kept) change no answer: every recorded case's `audit --facts` and the
gate of SGLang command lines on it give byte-identical JSON with the cache off, on the run that writes the kept
entries, and on the runs that read them back. Each run is a fresh process, as a user's is (the kept form is read
at the start of a run; in one process the documents are parsed once anyway)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted(p.parent for p in (ROOT / "tests" / "cases").glob("*/facts.json"))
LINES = [
    ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"],
    ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8", "--enable-torch-symm-mem",
     "--speculative-algorithm", "EAGLE3", "--attention-backend", "trtllm_mla"],
]  # fmt: skip


def _run(args: list[str], cache: Path, kept: bool) -> tuple[int, bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKCHECK_")}
    env.update(
        PYTHONPATH=str(ROOT),
        STACKCHECK_CACHE_DIR=str(cache),
        STACKCHECK_PLAN_CACHE="0",  # the plan's own cache is another question: every run plans afresh
        STACKCHECK_MANIFEST_CACHE="1" if kept else "0",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], cwd=ROOT, env=env, capture_output=True, timeout=120, check=False
    )
    assert proc.returncode in (0, 1, 2), proc.stderr[-2000:]
    return proc.returncode, proc.stdout


def _verb_lines(facts: Path) -> list[list[str]]:
    out = [["audit", "--facts", str(facts), "--format", "json"]]
    out += [["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line] for line in LINES]
    return out


@pytest.mark.parametrize("case", [c.name for c in CASES])
def test_kept_manifests_give_the_same_answers(tmp_path: Path, case: str) -> None:
    cache = tmp_path / "cache"
    for args in _verb_lines(ROOT / "tests" / "cases" / case / "facts.json"):
        reference = _run(args, tmp_path / "off", kept=False)
        first = _run(args, cache, kept=True)  # writes the kept entries (or reads those an earlier verb wrote)
        again = _run(args, cache, kept=True)  # reads them back
        assert first == reference, args
        assert again == reference, args
    kept = sorted(p.name for p in (cache / "manifests").iterdir())
    assert "rules.kept" in kept and "features.json.kept" in kept and "launch.json.kept" in kept, kept
