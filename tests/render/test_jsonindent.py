"""stackcheck.render.jsonindent writes what json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False,
default=str) writes: on every JSON document of the case folders, on a report, on generated values, and on
the odd ones (subclasses, tuples, non-string keys, values JSON has no type for); and it fails where json.dumps
fails, with the same error."""

from __future__ import annotations

import enum
import json
import math
from collections import OrderedDict, defaultdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck.render.jsonindent import dumps_indented
from stackcheck.render.jsonout import json_document

ROOT = Path(__file__).resolve().parent.parent.parent


def reference(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False, default=str)


DOCUMENTS = sorted(
    p
    for group in ("cases", "plan_cases", "recommend", "realworld")
    for p in (ROOT / "tests" / group).rglob("*.json")
    if p.stat().st_size < 2_000_000
)


def test_every_document_of_the_case_folders() -> None:
    assert len(DOCUMENTS) > 100
    for path in DOCUMENTS:
        value = json.loads(path.read_text(encoding="utf-8"))
        assert dumps_indented(value) == reference(value), path


class Color(enum.IntEnum):
    RED = 1


class Name(str):
    pass


class Weird:
    def __str__(self) -> str:
        return "weird \u2028 \x7f"


ODD: list[Any] = [
    None,
    True,
    False,
    0,
    -(2**70),
    1.5,
    -0.0,
    1e300,
    "",
    "\ud800 lone",
    '\x00\x1f"\\ \u00e9 \u2028',
    [],
    {},
    [[]],
    {"a": {}},
    [{}, [], {"b": []}],
    (1, (2, "three")),
    {2: "int", 2.5: "float", True: "t", False: "f", None: "n", "s": 0},
    {Color.RED: Color.RED},
    Color.RED,
    Name("sub"),
    {Name("k"): Name("v")},
    OrderedDict([("z", 1), ("a", 2)]),
    defaultdict(list, {"x": [1]}),
    Weird(),
    [Weird(), {"w": Weird()}],
    {"set": {1}},  # a set has no JSON type: default=str writes its text
    [float("1e-7"), 123456789.123456789],
]


@pytest.mark.parametrize("value", ODD, ids=[repr(v)[:30] for v in ODD])
def test_odd_values(value: Any) -> None:
    assert dumps_indented(value) == reference(value)


def test_the_same_object_twice_is_not_circular() -> None:
    shared = {"a": [1, 2]}
    value = {"x": shared, "y": [shared, shared]}
    assert dumps_indented(value) == reference(value)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -math.inf, [1, {"x": float("nan")}], {float("inf"): 1}])
def test_out_of_range_floats_fail_alike(bad: Any) -> None:
    with pytest.raises(ValueError) as ours:
        dumps_indented(bad)
    with pytest.raises(ValueError) as theirs:
        reference(bad)
    assert str(ours.value) == str(theirs.value)


def test_bad_keys_and_circles_fail_alike() -> None:
    bad_keys: list[Any] = [{(1, 2): "tuple key"}, {"a": [{frozenset(): 1}]}]
    for bad in bad_keys:
        with pytest.raises(TypeError) as ours:
            dumps_indented(bad)
        with pytest.raises(TypeError) as theirs:
            reference(bad)
        assert str(ours.value) == str(theirs.value)
    loop: list[Any] = [1]
    loop.append(loop)
    d: dict[str, Any] = {}
    d["me"] = [d]
    for circle in (loop, d):
        with pytest.raises(ValueError, match="Circular reference detected"):
            dumps_indented(circle)
        with pytest.raises(ValueError, match="Circular reference detected"):
            reference(circle)


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=12)
)
KEYS = (
    st.text(max_size=6) | st.integers() | st.booleans() | st.none() | st.floats(allow_nan=False, allow_infinity=False)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(VALUES)
def test_generated_values(value: Any) -> None:
    assert dumps_indented(value) == reference(value)


@settings(max_examples=100, deadline=None)
@given(VALUES)
def test_the_document_writer_is_json_text(value: Any) -> None:
    """json_document (indented through dumps_indented, compact through json.dumps) still escapes what a
    terminal would act on, and reads back as the same JSON value either way."""
    from stackcheck.redact import json_text

    assert json_document(value) == json_text(value, indent=2, allow_nan=False, default=str) + "\n"
    assert json.loads(json_document(value)) == json.loads(json_document(value, compact=True))
