"""iperf42: the box's own verdicts the plan cache keeps beside its ok-elsewhere answers (iperf38's "box") carried
no signature: a kept feature verdict edited (blocked made ok, a title changed) or a list emptied was taken as the
box's own by every later `plan --want` / `--hold` on the same facts (a false pass). Each way's kept item now carries
an integrity mark: the document begins with a hash of the rest (plan_cache._marked_doc), as imend16 gave the kept
failing-checks list one; the box of a document whose mark is absent or another one is judged again. The cache file
edited, emptied, truncated."""

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
FMT = ("--format", "json")


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


def fresh(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        return plan(capsys, *argv)


def _kept(cache: Path) -> tuple[Path, dict[str, Any]]:
    files = list(cache.glob("*.json"))
    assert len(files) == 1
    return files[0], json.loads(files[0].read_text())


def _blocked_made_ok(doc: dict[str, Any]) -> None:
    for verdict in doc["box"]["all"]["features"]:
        if verdict.get("status") == "blocked":
            verdict["status"] = "ok"
            verdict["reasons"] = []
            return
    raise AssertionError("the write-up box has a blocked feature: the test needs one")


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "blocked made ok": _blocked_made_ok,
    "title edited": lambda doc: doc["box"]["all"]["features"][0].__setitem__("title", "EDITED"),
    "checks emptied": lambda doc: doc["box"]["all"]["checks"].clear(),
    "mark of another document": lambda doc: doc.__setitem__("mark", "0" * 64),
    "nothing but the mark removed": lambda doc: None,
}


def _keep_both_ways(capsys: pytest.CaptureFixture[str]) -> None:
    plan(capsys, "--want", "attention-fa4", *FMT)
    plan(capsys, "--want", "torch-symm-mem", *FMT)  # (the second request keeps the box: "all")
    plan(capsys, "--want", "torch-symm-mem")  # ("features")


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_kept_box_is_judged_again(
    edit: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _keep_both_ways(capsys)
    where, doc = _kept(cache)
    assert set(doc["box"]) == {"all", "features"} and where.read_bytes().startswith(b'{"mark":"')
    doc.pop("mark")
    EDITS[edit](doc)
    where.write_text(json.dumps(doc, separators=(",", ":")))
    want = fresh(capsys, monkeypatch, "--want", "fp8-block-gemm", *FMT)
    assert plan(capsys, "--want", "fp8-block-gemm", *FMT) == want  # (before: the edited verdicts were printed)


def test_a_truncated_or_emptied_cache_file_is_judged_again(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _keep_both_ways(capsys)
    where, _doc = _kept(cache)
    text = where.read_bytes()
    want = fresh(capsys, monkeypatch, "--want", "fp8-block-gemm", *FMT)
    for spoilt in (text[: len(text) // 2], b""):
        where.write_bytes(spoilt)
        assert plan(capsys, "--want", "fp8-block-gemm", *FMT) == want


def test_a_box_with_its_own_mark_is_read(tmp_path: Path) -> None:
    d, key = str(tmp_path), "k" * 64
    features = [{"id": "a", "status": "ok", "reasons": []}, {"id": "b", "status": "blocked", "reasons": []}]
    assert plan_cache.keep_upstream(d, key, {}, {"features": (features, [], None)})
    raw = (tmp_path / f"{key}.json").read_bytes()
    assert plan_cache._unmarked_doc(raw) is not None
    assert plan_cache.load_upstream_doc(d, key)[1] == {"features": (features, [], None)}
    # an edit that makes the mark again is read: the mark guards against edits that do not (as _failing_mark)
    doc = json.loads(raw)
    doc.pop("mark")
    doc["box"]["features"]["features"][1]["status"] = "ok"
    (tmp_path / f"{key}.json").write_bytes(plan_cache._marked_doc(json.dumps(doc)))
    assert plan_cache.load_upstream_doc(d, key)[1]["features"][0][1]["status"] == "ok"
