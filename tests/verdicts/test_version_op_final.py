"""The version operator's two checks for releases PEP 440 puts on neither side of a bound (straddled_final: a
pre-release or dev build of V; post_between: a post release of V) are not asked of a final release (iperf36, issue
21): a version whose text before `+` is ASCII digits and dots is judged by version_in alone, the same answer as the
full reading on every version and range generated here. And a literal on the right of a predicate is read as its own
value without _ref (predicate_holds and evaluate_predicate), the same outcome as through it."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from stackcheck.facts.versions import post_between, straddled_final, version_in
from stackcheck.knowledge.loader import load
from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context, Missing

#: texts the shortcut takes (digits and dots before `+`): final releases, and texts public() does not read ("0..5")
FINALS = [
    "0.5.9",
    "0.5.8",
    "0.5.14",
    "0.5",
    "1",
    "12",
    "2.9.1+cu128",
    "2.9.1+cpu",
    "0.3.21",
    "0.5.23.0",
    "0.5.9+",
    "0..5",
]
OTHERS = [
    "0.5.9rc1",
    "0.5.9.dev0",
    "0.5.9.post1",
    "0.5.23.post1.dev0",
    "0.5.14a2",
    "1!0.5.9",
    "v0.5.9",
    " 0.5.9",
    "0.5.9 ",
    "",
    "abc",
    "٠.٥",
    "0.5.9.post1+cu128",
]
SPECS = [
    ">=0.5.8",
    "<0.5.9",
    ">=0.5.8,<0.5.14",
    "<=0.5.9",
    ">0.5.9",
    "==0.5.9",
    "!=0.5.9",
    "==0.5.*",
    "~=0.5.8",
    ">=0.5.14",
    "<0.5.9rc2",
    ">=12",
    "==2.9.1+cu128",
    "",
    "nonsense",
]


def _reference(lhs: str, rhs: str) -> Any:
    """The version operator as it read every version before: version_in, then both checks."""
    result = version_in(lhs, rhs)
    if result is None:
        return "missing"
    if straddled_final(lhs, rhs) is not None or post_between(lhs, rhs) is not None:
        return "missing"
    return result


def _now(lhs: str, rhs: str) -> Any:
    try:
        return engine._compare("version", lhs, rhs)
    except Missing:
        return "missing"


@pytest.mark.parametrize("lhs", FINALS + OTHERS)
def test_the_same_answer_as_the_full_reading(lhs: str) -> None:
    for rhs in SPECS:
        assert _now(lhs, rhs) == _reference(lhs, rhs), (lhs, rhs)


def test_generated_versions() -> None:
    parts = ["0", "5", "9", "10", "14", "23"]
    tails = ["", "rc1", ".dev0", ".post1", "+cu128", ".post2+local", "a1.post1"]
    n = 0
    for a, b, c in itertools.product(parts, repeat=3):
        for tail in tails:
            lhs = f"{a}.{b}.{c}{tail}"
            for rhs in SPECS:
                assert _now(lhs, rhs) == _reference(lhs, rhs), (lhs, rhs)
                n += 1
    assert n > 20_000


def test_a_final_release_asks_neither_check(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(*_: Any) -> None:
        raise AssertionError("asked of a final release")

    monkeypatch.setattr(engine, "straddled_final", refused)
    monkeypatch.setattr(engine, "post_between", refused)
    assert engine._compare("version", "0.5.9", ">=0.5.8,<0.5.14") is True
    assert engine._compare("version", "2.9.1+cu128", "<2.9") is False
    assert engine._compare("version", "12", ">=12") is True
    with pytest.raises(AssertionError):  # a pre-release is still read by both
        engine._compare("version", "0.5.9rc1", "<0.5.9")


def test_final_release_text() -> None:
    for text in FINALS:
        assert engine._final_release_text(text), text
    for text in OTHERS:
        assert not engine._final_release_text(text), text


M = load([], env={})
PREDICATES: list[Any] = [
    {"fact": "gpu.count", "op": ">", "value": 0},
    {"fact": "gpu.count", "op": "in", "value": [1, 2, 8]},
    {"fact": "launch.tp", "op": "==", "value": 8},
    {"fact": "pkg.sglang.version", "op": "version", "value": ">=0.5.8"},
    {"fact": "pkg.sglang.version", "op": "==", "value": {"fact": "pkg.sglang.version"}},
    {"fact": "driver.version", "op": "same_release", "value": "570.172.08"},
    {"fact": "pkg.sglang.version", "op": "exists"},
    {"fact": "pkg.nothing-here.version", "op": "version", "value": ">=1"},
]


def _ctx() -> Context:
    facts: Any = {
        "gpus": [{"index": i, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"} for i in range(8)],
        "driver": {"version": "570.172.08", "cuda": "12.8"},
        "packages": {"sglang": {"installed": True, "version": "0.5.9"}},
    }
    return Context(facts=facts, manifests=M, launch={"tp": 8})


def test_a_literal_is_read_without_ref(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = _ctx()
    gpu = ctx.gpu_models()[0]
    before = [(engine.predicate_holds(p, ctx, gpu), engine.evaluate_predicate(p, ctx, gpu).value) for p in PREDICATES]
    through = engine._ref

    def only_references(c: Context, ref: Any, g: Any) -> Any:
        assert isinstance(ref, dict), f"_ref asked of the literal {ref!r}"
        return through(c, ref, g)

    monkeypatch.setattr(engine, "_ref", only_references)
    ctx = _ctx()
    after = [(engine.predicate_holds(p, ctx, gpu), engine.evaluate_predicate(p, ctx, gpu).value) for p in PREDICATES]
    assert after == before
    assert before[0] == (True, True) and before[3] == (True, True) and before[4] == (True, True)
