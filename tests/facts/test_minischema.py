"""stackcheck.facts.minischema agrees with jsonschema on the report schema's facts definition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from stackcheck.facts.minischema import is_valid
from stackcheck.facts.schema_check import report_schema
from stackcheck.knowledge.validate import _registry

CASES = Path(__file__).parent.parent / "cases"

leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.sampled_from(["12.0", "nvlink", "all", "ok", "pcie-switch", "9.0x"]),
)
values = st.recursive(
    leaf,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=12,
)
keys = st.sampled_from(
    [
        "driver",
        "gpus",
        "topology",
        "cuda_toolkits",
        "packages",
        "system",
        "binaries",
        "assumed",
        "version",
        "cuda",
        "index",
        "compute_capability",
        "interconnect",
        "p2p",
        "pairs",
        "env",
        "installed",
        "torch",
        "name",
        "a",
        "b",
        "memory_bytes",
        "same_model",
        "error",
    ]
)
docs = st.recursive(
    st.dictionaries(keys, values, max_size=4),
    lambda inner: st.dictionaries(keys, st.one_of(inner, st.lists(inner, max_size=2)), max_size=4),
    max_leaves=10,
)


def reference(doc: Any) -> bool:
    registry, _ = _registry()
    ref = {"$ref": "https://stackcheck.dev/schemas/report.schema.json#/$defs/facts"}
    return bool(Draft202012Validator(ref, registry=registry).is_valid(doc))


@settings(max_examples=1500, deadline=None)
@given(docs)
# found in a CI run: JSON Schema counts 0.0 as an integer (a number with a zero fractional part)
@example({"gpus": [{"driver": None, "index": 0.0}]})
@example({"topology": {"gpu_count": 8.0, "pairs": [{"a": 0.0, "b": 1.5}]}})
@example({"gpus": [{"index": True}]})
def test_agrees_with_jsonschema(doc: dict[str, Any]) -> None:
    schema = report_schema()
    assert is_valid(doc, schema["$defs"]["facts"], schema) == reference(doc)


def test_agrees_on_every_case_file() -> None:
    schema = report_schema()
    for path in CASES.glob("*/facts.json"):
        facts = json.loads(path.read_text())["facts"]
        assert is_valid(facts, schema["$defs"]["facts"], schema) is True
        assert reference(facts) is True


def test_integral_floats_become_ints_where_the_schema_says_integer(tmp_path: Path) -> None:
    from stackcheck.facts.model import load_facts_file

    doc = {
        "schema_version": 1,
        "facts": {
            "gpus": [{"index": 1.0, "compute_capability": "9.0", "memory_bytes": 1024.0}],
            "topology": {"gpu_count": 1.0},
        },
    }
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    facts = load_facts_file(path)
    gpu = facts["gpus"][0]
    assert gpu["index"] == 1 and type(gpu["index"]) is int
    assert type(gpu["memory_bytes"]) is int
    assert type(facts["topology"]["gpu_count"]) is int


def test_a_fractional_index_is_still_refused(tmp_path: Path) -> None:
    import pytest

    from stackcheck.errors import BadInputError
    from stackcheck.facts.model import load_facts_file

    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": {"gpus": [{"index": 0.5}]}}))
    with pytest.raises(BadInputError, match=r"\$\.facts\.gpus\[0\]\.index"):
        load_facts_file(path)
