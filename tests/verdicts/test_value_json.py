"""engine.value_json: json.dumps built by hand for a rule value's usual shapes (null, booleans, integers, lists of
integers or of plain strings), held equal to json.dumps on every value, the shapes it hands over to json.dumps
included; and a predicate's requirement in words (_describe) is the same text either way."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from stackcheck.verdicts import engine

_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=6)
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
)


@given(_values)
def test_value_json_is_json_dumps(value: Any) -> None:
    assert engine.value_json(value) == json.dumps(value)


@given(st.lists(st.integers() | st.text(max_size=6) | st.booleans() | st.none(), max_size=5))
def test_lists_of_mixed_items_are_json_dumps(value: list[Any]) -> None:
    assert engine.value_json(value) == json.dumps(value)


def test_the_shapes_built_by_hand_and_the_escapes_handed_over() -> None:
    for value in (None, True, False, 0, -7, 10**30, [], [9, 10], ["sm_90a", "sm_100a"], [1, "a"]):
        assert engine.value_json(value) == json.dumps(value)
    for text in ('a"b', "a\\b", "é", "\x7f", "tab\there", "\u2028", ""):
        assert engine.value_json([text]) == json.dumps([text])


def test_every_shipped_predicate_is_described_as_before(monkeypatch: Any) -> None:
    from stackcheck.knowledge.loader import load

    manifests = load([], env={})
    preds: list[Any] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "fact" in node or "gate" in node:
                preds.append(node)
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for item in (*manifests.features, *manifests.checks):
        walk(item.get("rules"))
    assert len(preds) > 500
    monkeypatch.setattr(engine, "MEMO_TEXTS", False)
    now = [engine._describe_now(p) for p in preds]
    monkeypatch.setattr(engine, "value_json", json.dumps)
    assert now == [engine._describe_now(p) for p in preds]
