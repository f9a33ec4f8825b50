"""imend16: the stack checks failing on the box that the plan cache keeps beside its ok-elsewhere answers (iperf40)
carried no signature, and an empty list is a valid shape: a kept list edited to [] (or cut, or with a verdict
changed) hid failing checks from every later `plan --want` on the same facts. Each kept list now carries an
integrity mark (a hash of the key, the way and the list); a list whose mark is absent or another one is judged
again. The cache file edited, emptied, truncated."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import plan_cache
from stackcheck.cli import main
from stackcheck.plan import hypothetical

ROOT = Path(__file__).resolve().parent.parent.parent
WU = str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")
WANT = ("--want", "torch-symm-mem")


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setattr(plan_cache, "answer_for", lambda *a, **k: None)  # no whole answer served before the plan
    return tmp_path / "c" / "upstream"


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    count = [0]
    real = hypothetical.Engine.failing_checks

    def counted(self: Any, *a: Any, **k: Any) -> Any:
        count[0] += 1
        return real(self, *a, **k)

    monkeypatch.setattr(hypothetical.Engine, "failing_checks", counted)
    return count


def plan(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", "--facts", WU, *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def _kept(cache: Path) -> tuple[Path, dict[str, Any]]:
    files = list(cache.glob("*.json"))
    assert len(files) == 1
    return files[0], json.loads(files[0].read_text())


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "emptied": lambda doc: doc["failing"].__setitem__("all", []),
    "cut": lambda doc: doc["failing"]["all"].pop(),
    "title edited": lambda doc: doc["failing"]["all"][0].__setitem__("title", "EDITED"),
    "marks removed": lambda doc: doc.pop("failing_marks", None),
    "mark of another list": lambda doc: doc.setdefault("failing_marks", {}).__setitem__("all", "0" * 64),
    "marks not an object": lambda doc: doc.__setitem__("failing_marks", ["x"]),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_kept_list_is_judged_again(
    edit: str, cache: Path, judged: list[int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    fmt = ("--format", "json")
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        want = plan(capsys, *WANT, *fmt)
    assert json.loads(want[1])["plan"]["still_failing_checks"], "the write-up box has a failing stack check"
    plan(capsys, *WANT, *fmt)
    plan(capsys, *WANT, *fmt)
    where, doc = _kept(cache)
    assert doc["failing"]["all"]
    EDITS[edit](doc)
    where.write_text(json.dumps(doc))
    judged[0] = 0
    assert plan(capsys, *WANT, *fmt) == want  # (before: the emptied / cut / edited list was printed)
    assert judged[0] > 0


def test_a_truncated_or_emptied_cache_file_is_judged_again(
    cache: Path, judged: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    want = [plan(capsys, *WANT), plan(capsys, *WANT)][1]
    where, _doc = _kept(cache)
    text = where.read_bytes()
    for spoilt in (text[: len(text) // 2], b""):
        where.write_bytes(spoilt)
        judged[0] = 0
        assert plan(capsys, *WANT) == want
        assert judged[0] > 0


def test_a_list_with_its_own_mark_is_read(cache: Path, judged: list[int], capsys: pytest.CaptureFixture[str]) -> None:
    plan(capsys, *WANT)
    plan(capsys, *WANT)
    where, doc = _kept(cache)
    assert doc["failing_marks"]["features"] == plan_cache._failing_mark(
        where.stem, "features", doc["failing"]["features"]
    )
    judged[0] = 0
    plan(capsys, *WANT)
    assert judged[0] == 0  # (served from the kept list, as iperf40 made it)
