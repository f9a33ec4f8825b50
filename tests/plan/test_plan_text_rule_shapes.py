"""`stackcheck plan --want` (text) judges the box's features with each rule's per-GPU shape read from the kept answers
(engine.prepare, knowledge/prepared.py `rule-shapes`), as the planner after it does, not worked out rule by rule first
(~9.5M instructions of a first run); once per manifests, the planner's own call then a no-op. The plan is the same."""

from __future__ import annotations

import io
import shutil
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.knowledge.loader import load
from stackcheck.verdicts import engine

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")
ARGV = ["plan", "--facts", FACTS, "--want", "torch-symm-mem"]


@pytest.fixture
def caches_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("STACKCHECK_PLAN_CACHE", raising=False)
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(engine, "_SHAPES", {})
    return tmp_path


def _run() -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        main(ARGV)
    return out.getvalue()


def test_the_box_is_judged_with_the_kept_shapes(caches_on: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = _run()  # (keeps the twins, the rule shapes among them)
    shutil.rmtree(caches_on / "answer")  # (the answer kept for this command line: a first run again, as bench's)
    monkeypatch.setattr(engine, "_SHAPES", {})
    walked: list[Any] = []
    real = engine.uses_gpu

    def spy(pred: Any) -> bool:
        walked.append(pred)
        return real(pred)

    monkeypatch.setattr(engine, "uses_gpu", spy)
    assert _run() == first
    assert walked == []


def test_prepare_is_once_per_manifests(caches_on: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = load([], env={})
    engine.prepare(m)
    n = len(engine._SHAPES)
    assert n > 100
    engine._SHAPES.clear()
    engine.prepare(m)  # (the same manifests: done already)
    assert engine._SHAPES == {}
    engine.prepare(load([], env={}))  # other manifests: read again
    assert len(engine._SHAPES) == n
