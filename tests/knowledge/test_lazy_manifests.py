"""The shipped manifests are parsed when first read (stackcheck.knowledge.loader.Manifests.doc): the same
documents, in the same order, as parsing them all at load; a text that is not JSON is a ManifestError at
every read; threads that read one document at once get one parse; and an audit whose verdicts and plan come
from the plan cache parses only what it reads."""

from __future__ import annotations

import io
import json
import threading
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

import stackcheck.knowledge.loader as loader
import stackcheck.knowledge.prepared as prepared
from stackcheck.cli import main
from stackcheck.errors import ManifestError
from stackcheck.knowledge.loader import Manifests, load
from stackcheck.knowledge.package_data import shipped_texts

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_documents_are_those_parsed_at_once_in_their_order() -> None:
    texts = shipped_texts()
    eager = {name: json.loads(text) for name, (_origin, text) in texts.items()}
    m = load([], env={})
    assert m.sources == eager["sources.json"]["sources"]  # one read first: the others are still to parse
    assert list(m.docs) == list(texts) and m.docs == eager
    assert m == Manifests(docs=eager, origins={k: [v[0]] for k, v in texts.items()})


def test_a_broken_document_is_an_error_at_every_read_and_the_others_still_read() -> None:
    m = Manifests(
        origins={},
        unparsed={"meta.json": ("manifests/meta.json", '{"date": "2026-01-01"}'), "sources.json": ("o", "{not")},
    )
    assert m.date == "2026-01-01"
    for _ in range(2):
        with pytest.raises(ManifestError, match="o: line 1 column 2: not valid JSON"):
            _ = m.sources
    with pytest.raises(ManifestError):
        _ = m.docs
    assert m.doc("absent.json") is None


def test_threads_reading_one_document_share_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    parsed: list[str] = []
    real = loader._parse

    def counted(text: str, origin: str, check_depth: bool = True) -> Any:
        parsed.append(origin)
        return real(text, origin, check_depth)

    monkeypatch.setattr(loader, "_parse", counted)
    m = load([], env={})
    start = threading.Barrier(8)
    seen: list[Any] = []

    def read() -> None:
        start.wait()
        seen.append(m.doc("features.json"))

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert parsed == ["manifests/features.json"]
    assert len({id(doc) for doc in seen}) == 1 and seen[0]["features"]


def test_an_audit_from_the_plan_cache_parses_only_what_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path))
    parsed: list[str] = []
    real = loader._parse

    def counted(text: str, origin: str, check_depth: bool = True) -> Any:
        parsed.append(origin.rsplit("/", 1)[-1])
        return real(text, origin, check_depth)

    monkeypatch.setattr(loader, "_parse", counted)
    real_twin = prepared.load

    def twin(where: str, name: str, key: str) -> Any:  # (a document read from its twin: knowledge/prepared.py)
        doc = real_twin(where, name, key)
        if doc is not None:
            parsed.append(name)
        return doc

    monkeypatch.setattr(prepared, "load", twin)
    argv = ["audit", "--facts", str(ROOT / "tests/cases/writeup-after/facts.json"), "--format", "json"]
    outputs = []
    for _ in range(2):
        parsed.clear()
        out = io.StringIO()
        with redirect_stdout(out):
            main(argv)
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1]
    assert "features.json" not in parsed and "checks.json" not in parsed  # the second run judged nothing
    assert {"meta.json", "sources.json"} <= set(parsed)
