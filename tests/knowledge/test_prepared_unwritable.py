"""A cache directory the twins cannot be written to (knowledge/prepared.py; irev45): a read-only home, a path under a
file, a full disk. Before, each of the eleven shipped documents was encoded with marshal (~4 ms of CPU in all on the
2-core box) and only then found unwritable, on every run; now the directory is tried before the first document is
encoded, and a failed write stops the encoding of the next ones in the same process. The documents are the same."""

from __future__ import annotations

import json
import marshal
from pathlib import Path
from typing import Any

import pytest

from stackcheck import paths
from stackcheck.knowledge import loader, package_data, prepared


def _count_dumps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = marshal.dumps

    def dumps(value: Any, *args: int) -> bytes:
        calls.append(1)
        return real(value, *args)

    monkeypatch.setattr(marshal, "dumps", dumps)
    return calls


def _documents() -> dict[str, str]:
    return {name: json.dumps(doc) for name, doc in loader.load().docs.items()}


def test_no_document_is_encoded_for_a_cache_under_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert package_data.shipped_files() is not None  # (a checkout: the shipped files have stamps, so twins)
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(blocker / "cache"))
    calls = _count_dumps(monkeypatch)
    first = _documents()
    assert len(first) >= 10 and calls == []
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    assert _documents() == first  # (the same documents as without any cache)


def test_a_failed_write_stops_the_encoding_of_the_next_documents(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "full"))
    monkeypatch.setattr(paths, "write_private", lambda *a: False)  # (ENOSPC: the directory exists, writes fail)
    calls = _count_dumps(monkeypatch)
    _documents()
    assert len(calls) == 1
    assert list((tmp_path / "full" / "prepared").iterdir()) == []


def test_a_writable_cache_still_keeps_every_twin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    files = package_data.shipped_files()
    assert files is not None
    _documents()
    where = tmp_path / "c" / "prepared"
    assert sorted(p.name for p in where.iterdir()) == sorted(prepared.file_name(n) for n in files)
