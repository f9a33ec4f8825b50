"""irobust12: the plan cache's kept failing checks (iperf40) were taken when each item had a string id and the status
`failed`; the rest of the verdict went to the planner and the plan's renderers as it was. An entry edited or written
otherwise (reasons that are not a list of objects, a fix that is not an object, a title that is not a string) crashed
`stackcheck plan --want ...` with an internal error (exit 4). A way whose list is not in the shape the engine gives
is now left out: judged again."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import plan_cache
from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent.parent
WU = str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")
WANT = ("--want", "torch-symm-mem")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)  # no whole answer served before the plan
    return tmp_path / "c" / "upstream"


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", "--facts", WU, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _each(doc: dict[str, Any], change: Callable[[dict[str, Any]], None]) -> None:
    for item in doc["failing"].values():
        for verdict in item:
            change(verdict)


SPOILS: list[Callable[[dict[str, Any]], None]] = [
    lambda v: v.__setitem__("reasons", "x"),
    lambda v: v.__setitem__("reasons", [1]),
    lambda v: v.__setitem__("fix", 5),
    lambda v: v.__setitem__("fix", {"text": ["a"]}),
    lambda v: v.__setitem__("title", {"a": 1}),
    lambda v: v["reasons"][0].__setitem__("rule", None),
]


@pytest.mark.parametrize("fmt", [(), ("--format", "json")])
@pytest.mark.parametrize("spoil", SPOILS)
def test_a_kept_verdict_of_another_shape_is_judged_again(
    spoil: Callable[[dict[str, Any]], None],
    fmt: tuple[str, ...],
    cache: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        want = plan(capsys, *WANT, *fmt)
    plan(capsys, *WANT, *fmt)
    plan(capsys, *WANT, *fmt)
    files = list(cache.glob("*.json"))
    assert len(files) == 1
    doc = json.loads(files[0].read_text())
    assert doc.get("failing")
    _each(doc, spoil)
    files[0].write_text(json.dumps(doc))
    assert plan(capsys, *WANT, *fmt) == want  # (fails before: exit 4, or the spoilt check printed)
