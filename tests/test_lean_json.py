"""stackcheck.lean_json gives json.loads's and json.dumps's answers and errors (on listed and generated documents),
and a probed audit and a gate served from its kept decision import no json package (~5 M instructions of each)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_process import modules_at_exit
from hypothesis import given, settings
from hypothesis import strategies as st

from stackcheck import lean_json

ROOT = Path(__file__).resolve().parent.parent


def _outcome(call: Any) -> tuple[Any, ...]:
    try:
        value = call()
    except Exception as exc:  # (the error is the answer compared)
        return ("error", type(exc), str(exc), getattr(exc, "lineno", None), getattr(exc, "colno", None))
    return ("value", json.dumps(value, allow_nan=True, sort_keys=True), type(value))


def _reject(value: str) -> Any:
    raise ValueError(f"non-standard JSON constant {value}")


TEXTS = [
    '{"a": [1, 2.5, null, true, false, "x\\u00e9"]}', " [1] ", "\n\t[1]\r\n", "", " ", "[1] x", "[1]]", "\ufeff[1]",
    "NaN", "[Infinity, -Infinity]", '{"a":', '"\\ud800"', '{"a": 1,}', "[01]", '"a\tb"', '{"a": 1, "a": 2}', "1e400",
    "-0", "123456789012345678901234567890", '"\\x"', "tru", "[" * 50 + "]" * 50, '{"k": "\u2028 \x85"}', "\x00",
]  # fmt: skip


@pytest.mark.parametrize("text", TEXTS)
@pytest.mark.parametrize("constant", [None, _reject])
def test_loads_is_jsons_on_listed_texts(text: str, constant: Any) -> None:
    assert _outcome(lambda: lean_json.loads(text, parse_constant=constant)) == _outcome(
        lambda: json.loads(text, parse_constant=constant)
    )


@pytest.mark.parametrize(
    "data",
    [b'{"x": 1}', b"[1, 2]", b"\xef\xbb\xbf[1]", b"\xff\xfe[\x001\x00]\x00", b"[1]", b"1", b"", b'"\xff\xfe"',
     b'{"a": "\xc3\xa9"}', b"\x00[1]", bytearray(b'{"y": [true]}'), b'[1] x', b'"\xed\xa0\x80"'],
)  # fmt: skip
def test_loads_of_bytes_is_jsons(data: bytes) -> None:
    assert _outcome(lambda: lean_json.loads(data)) == _outcome(lambda: json.loads(data))


def test_a_decode_error_is_told_apart() -> None:
    try:
        lean_json.loads('{"a": }')
    except ValueError as exc:
        assert lean_json.is_decode_error(exc) and isinstance(exc, json.JSONDecodeError)
    assert not lean_json.is_decode_error(ValueError("non-standard JSON constant NaN"))


VALUES = [
    {"b": [1, 2.0, None, "é", "\u2028", "\x7f"], "a": {"z": True, "y": False}}, "plain", "é\n", 1, 2.5, None, [],
    {}, [float("nan")], [float("inf")], {1: "int key", "s": 2}, {(1, 2): "tuple key"}, [object()], {"a": {1, 2}},
    [1e16, -0.0, 10**30], {"x": "\ud800"},
]  # fmt: skip
OPTIONS = [
    {}, {"separators": (",", ":")}, {"sort_keys": True}, {"ensure_ascii": False}, {"allow_nan": False},
    {"ensure_ascii": False, "separators": (",", ":"), "sort_keys": True}, {"indent": 2}, {"default": str},
]  # fmt: skip


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
@pytest.mark.parametrize("options", OPTIONS, ids=[repr(o) for o in OPTIONS])
def test_dumps_is_jsons_on_listed_values(value: Any, options: dict[str, Any]) -> None:
    def run(f: Any) -> tuple[Any, ...]:
        try:
            return ("text", f(value, **options))
        except Exception as exc:  # (the error is the answer compared)
            return ("error", type(exc), str(exc))

    assert run(lean_json.dumps) == run(json.dumps)


def test_a_circular_value_is_jsons_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference detected"):
        lean_json.dumps(loop)


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.booleans(), st.booleans(), st.booleans())
def test_generated_values_round_trip_as_json_does(value: Any, ascii_: bool, compact: bool, sort: bool) -> None:
    options: dict[str, Any] = {"ensure_ascii": ascii_, "sort_keys": sort}
    if compact:
        options["separators"] = (",", ":")
    text = json.dumps(value, **options)
    assert lean_json.dumps(value, **options) == text
    got, want = lean_json.loads(text), json.loads(text)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert _outcome(lambda: lean_json.loads(text, parse_constant=_reject)) == _outcome(
        lambda: json.loads(text, parse_constant=_reject)
    )
    if isinstance(value, float) and not math.isfinite(value):
        with pytest.raises(ValueError):
            lean_json.dumps(value, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=' \t\n\r[]{}",:0123456789.eE+-truefalsnuNaIiy\\u', max_size=24))
def test_generated_texts_parse_or_fail_as_json_does(text: str) -> None:
    assert _outcome(lambda: lean_json.loads(text)) == _outcome(lambda: json.loads(text))


@pytest.mark.parametrize(
    "argv",
    [
        ("audit", "--format", "json"),
        ("gate", "--dry-run", "--", "python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"),
    ],
    ids=["audit", "gate"],
)
def test_a_warm_audit_and_a_served_gate_import_no_json(tmp_path: Path, argv: tuple[str, ...]) -> None:
    # the first run keeps the plan (the planner and the engine import json) and the gate's decision; the second is
    # the one issue 21 times: its caches, kept answers and the NVML reader's message are read by lean_json
    modules_at_exit(tmp_path, *argv)
    mods = modules_at_exit(tmp_path, *argv)
    assert "stackcheck.probes.runner" in mods  # (it probed this box)
    if argv[0] == "gate":
        assert "stackcheck.assembly.gate_cache" in mods and "stackcheck.launch.refusals" not in mods  # (served)
    bare = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"], capture_output=True,
                          text=True, check=True, timeout=60).stdout.split()  # fmt: skip
    if "json" not in bare:
        assert sorted(m for m in mods if m == "json" or m.startswith("json.")) == []


def test_a_first_plan_of_saved_facts_imports_no_json(tmp_path: Path) -> None:
    """`plan --facts F --want X` with nothing kept (no plan entry, no answer): the facts check reads the report schema
    and the engine writes a rule value's JSON through lean_json (iperf23: the json package was ~4.6 M instructions of
    that first run, callgrind)."""
    argv = ("plan", "--facts", str(ROOT / "tests/cases/writeup-after/facts.json"), "--want", "torch-symm-mem")
    mods = modules_at_exit(tmp_path, *argv)
    assert {"stackcheck.plan.planner", "stackcheck.verdicts.engine", "stackcheck.facts.schema_check"} <= mods
    bare = subprocess.run([sys.executable, "-c", "import sys; print(' '.join(sys.modules))"], capture_output=True,
                          text=True, check=True, timeout=60).stdout.split()  # fmt: skip
    if "json" not in bare:
        assert sorted(m for m in mods if m == "json" or m.startswith("json.")) == []


def test_the_report_schema_is_read_as_json_reads_it() -> None:
    from stackcheck.facts.schema_check import report_schema
    from stackcheck.knowledge.package_data import schema_text

    assert report_schema() == json.loads(schema_text("report.schema.json"))


def test_a_scanner_that_reads_other_settings_falls_back_to_json(monkeypatch: Any) -> None:
    """A later interpreter's _json.make_scanner that wants a setting _Context lacks (AttributeError) or other
    arguments (TypeError) must not fail the run: json.loads answers."""
    import stackcheck.lean_json as lean

    class _Strict:
        @staticmethod
        def make_scanner(context: Any) -> Any:
            return context.a_setting_json_never_had

    monkeypatch.setattr(lean, "_c", _Strict)
    monkeypatch.setattr(lean, "_SCANNERS", {})
    assert lean.loads('{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
