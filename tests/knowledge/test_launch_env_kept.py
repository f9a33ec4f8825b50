"""Manifests.launch_env: launch.json's `env` entries, read from a twin of that list alone (knowledge/prepared.py,
`launch-env`) while the shipped launch.json is not parsed, so that a plan or an audit that reads only them never
loads the whole document; the same entries the document holds, whatever is kept; a document parsed already, one a
user's manifests were merged into, or one edited in memory is read itself."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge import prepared
from stackcheck.knowledge.loader import load


def _reference(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    with monkeypatch.context() as c:
        c.setenv("STACKCHECK_PLAN_CACHE", "0")
        env = load().launch.get("env")
        assert isinstance(env, list)
        return env


def _parsed(m: Any, name: str) -> bool:
    return name not in m._unparsed


def test_the_kept_entries_are_the_documents_and_the_document_is_not_read(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = _reference(monkeypatch)
    assert len(reference) > 3 and all(isinstance(spec, dict) for spec in reference)
    first = load()
    assert first.launch_env() == reference  # (made from the document, and kept)
    assert (cache / prepared.file_name("launch-env")).is_file()
    second = load()
    assert second.launch_env() == reference
    assert not _parsed(second, "launch.json")  # read from the small twin: the document is never parsed
    assert second.launch.get("env") == reference  # (and parsing it later gives the same entries)
    assert second.launch_env() == reference


@pytest.mark.parametrize("value", [{"env": None}, {"env": {"A": 1}}, {"other": []}, {"env": "x"}])
def test_a_kept_list_of_another_shape_is_a_miss(cache: Path, monkeypatch: pytest.MonkeyPatch, value: Any) -> None:
    reference = _reference(monkeypatch)
    load().launch_env()
    path = cache / prepared.file_name("launch-env")
    fmt, key, _ = marshal.loads(path.read_bytes())
    path.write_bytes(marshal.dumps((fmt, key, value)))
    again = load()
    assert again.launch_env() == reference
    assert marshal.loads(path.read_bytes())[2] == {"env": reference}  # kept anew


def test_a_parsed_or_edited_document_is_read_itself(cache: Path) -> None:
    load().launch_env()  # (kept)
    m = load()
    m.launch["env"] = [{"name": "MY_VAR", "fact": "x", "default": True}]  # parses it, then edits it in memory
    assert m.launch_env() == [{"name": "MY_VAR", "fact": "x", "default": True}]


def test_no_kept_entries_for_a_document_a_user_merged_into(tmp_path: Path, cache: Path) -> None:
    load().launch_env()
    m = load()
    m.origins["launch.json"].append(str(tmp_path / "launch.json"))  # (as load() records a user's document)
    assert m.shipped_stamp("launch.json") is None
    assert prepared.kept_for(m, "launch-env", ("launch.json",), "x") is None
    assert m.launch_env() == m.launch.get("env")
    assert _parsed(m, "launch.json")


def test_caches_off_read_the_document(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    m = load()
    assert m.launch_env() == m.launch.get("env")
    assert not (tmp_path / "cache" / "prepared").exists()
