"""pipeline.rules_texts keeps the launch readers' index of the shipped features.json and checks.json between runs
(knowledge/prepared.py, as positions of items): a later run's index, read back, names the very items a fresh reading
names; one of another shape, of other documents or of a set with a user's manifests merged in is never used."""

from __future__ import annotations

import marshal
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly import pipeline
from stackcheck.knowledge import prepared
from stackcheck.knowledge.loader import Manifests, load


def _by_id(m: Manifests) -> dict[str, list[str]]:
    """The index with each item named by its id (the index holds the items' identities)."""
    ids = {id(item): str(item.get("id")) for item in (*m.features, *m.checks)}
    return {k: sorted(ids[i] for i in v) for k, v in pipeline._launch_readers(m).items()}


def _reference(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    with monkeypatch.context() as c:
        c.setenv("STACKCHECK_PLAN_CACHE", "0")
        m = load()
        pipeline.rules_texts(m)
        return _by_id(m)


def test_the_kept_index_names_the_items_a_fresh_reading_names(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reference = _reference(monkeypatch)
    assert len(reference) > 20
    first = load()
    pipeline.rules_texts(first)
    assert (cache / prepared.file_name("launch-readers")).is_file()
    assert _by_id(first) == reference
    second = load()
    pipeline.rules_texts(second)
    assert second.derived("rules-text") == {}  # read back: no rule was written as text
    assert _by_id(second) == reference


@pytest.mark.parametrize(
    "value",
    [
        {"items": 3, "index": {}},  # another count of items
        {"items": None, "index": {"tp": [0]}},
        {"index": {"tp": [0]}},
        {"items": "N", "index": {"tp": [10**9]}},  # a position past the end
        {"items": "N", "index": {"tp": [-1]}},
        {"items": "N", "index": {"tp": ["0"]}},
        {"items": "N", "index": {"tp": (0,)}},
        {"items": "N", "index": {1: [0]}},
        {"items": "N", "index": [["tp", [0]]]},
    ],
)
def test_a_kept_index_of_another_shape_is_a_miss(cache: Path, monkeypatch: pytest.MonkeyPatch, value: Any) -> None:
    reference = _reference(monkeypatch)
    m = load()
    pipeline.rules_texts(m)  # (keeps it)
    path = cache / prepared.file_name("launch-readers")
    fmt, key, _ = marshal.loads(path.read_bytes())
    if value.get("items") == "N":
        value = {**value, "items": len((*m.features, *m.checks))}
    path.write_bytes(marshal.dumps((fmt, key, value)))
    again = load()
    pipeline.rules_texts(again)
    assert _by_id(again) == reference
    assert len(again.derived("rules-text")) == len((*again.features, *again.checks))  # made afresh
    assert marshal.loads(path.read_bytes())[2] != value  # and kept anew


def test_no_kept_index_for_manifests_a_user_merged_into(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = load()
    pipeline.rules_texts(m)
    assert (cache / prepared.file_name("launch-readers")).is_file()
    m.origins["features.json"].append(str(tmp_path / "features.json"))  # (as load() records a user's document)
    assert m.shipped_stamp("features.json") is None
    assert pipeline._kept_readers(m) is None


def test_another_stamp_of_the_documents_is_another_key(cache: Path) -> None:
    m = load()
    kept = pipeline._kept_readers(m)
    assert kept is not None and kept[2] is None  # (nothing kept yet)
    pipeline.rules_texts(m)
    again = pipeline._kept_readers(load())
    assert again is not None and again[1] == kept[1] and again[2] is not None
    other = load()
    other._stamps["checks.json"] += " edited"
    moved = pipeline._kept_readers(other)
    assert moved is not None and moved[1] != kept[1] and moved[2] is None
    assert prepared.load(str(cache), "launch-readers", moved[1]) is None
