"""engine._describe memoises a predicate's requirement text by its identity (engine._TEXTS): the text it gives is the
one built anew (MEMO_TEXTS off), for every predicate of the shipped manifests, for generated predicate trees (asked
in every order, sub-predicates first or last, and again), and the verdicts judged with the memo are those judged
without it on every case folder's facts under several launches."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_document
from stackcheck.knowledge.loader import load
from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context

ROOT = Path(__file__).resolve().parents[2]
FACTS = sorted((ROOT / "tests" / "cases").glob("*/facts.json"))
LAUNCHES: list[dict[str, Any]] = [
    {},
    {"attention_backend": "trtllm_mla", "tp": 2, "mla": True, "mla_kv_rope": [512, 64]},
    {"attention_backend": "flashmla", "mla": False, "model_config_read": False},
    {"attention_backend": "fa4", "tp": 8, "mla": True, "speculative_algorithm": "EAGLE"},
]


def _texts_anew(pred: Any) -> str:
    """The text with the memo off: built from the predicate alone."""
    engine.MEMO_TEXTS = False
    try:
        return engine._describe(pred)
    finally:
        engine.MEMO_TEXTS = True


def _walk(pred: Any) -> Iterator[Any]:
    yield pred
    if isinstance(pred, dict):
        for key in ("all", "any"):
            for sub in pred.get(key) or []:
                yield from _walk(sub)
        if "not" in pred:
            yield from _walk(pred["not"])


def _generated(rng: random.Random, depth: int = 0) -> Any:
    """A predicate tree of the manifests' shape: comparisons (values of every JSON kind, facts, gates), exists,
    unknown hops, and all / any / not nested."""
    kind = rng.choice(["leaf", "leaf", "all", "any", "not", "unknown"] if depth < 4 else ["leaf"])
    if kind in ("all", "any"):
        return {kind: [_generated(rng, depth + 1) for _ in range(rng.randint(0, 4))]}
    if kind == "not":
        return {"not": _generated(rng, depth + 1)}
    if kind == "unknown":
        return {"unknown": f"hop {rng.randint(0, 9)} not read"}
    value = rng.choice([1, 2.5, "12.0", True, None, ["sm_90a", "sm_100"], {"fact": "gpu.cc"}, {"gate": "g"}, {"x": 1}])
    leaf: dict[str, Any] = {rng.choice(["fact", "gate"]): rng.choice(["launch.mla", "gpu.cc", "pkg.torch.version"])}
    if rng.random() < 0.8:
        leaf["op"] = rng.choice(["==", "!=", "<", ">=", "in", "not_in", "contains", "version", "exists", "covered_by"])
    if rng.random() < 0.9:
        leaf["value"] = value
    return leaf


def test_every_shipped_predicate_reads_as_built_anew() -> None:
    manifests = load([])
    preds = [
        sub
        for item in [*manifests.features, *manifests.checks]
        for rule in item.get("rules") or []
        for part in ("when", "require")
        if part in rule
        for sub in _walk(rule[part])
    ]
    assert len(preds) > 500
    for pred in preds:
        anew = _texts_anew(pred)
        assert engine._describe(pred) == anew
        assert engine._describe(pred) == anew  # from the memo now
        if isinstance(pred, dict) and ("all" in pred or "any" in pred):
            assert engine._describe_lhs(pred) == f"({anew})"


@pytest.mark.parametrize("seed", range(40))
def test_generated_predicates_read_as_built_anew(seed: int) -> None:
    rng = random.Random(seed)
    trees = [_generated(rng) for _ in range(25)]
    subs = [sub for tree in trees for sub in _walk(tree)]
    expected = {id(p): _texts_anew(p) for p in subs}
    order = subs[:]
    rng.shuffle(order)  # sub-predicates asked before, after and between their parents
    for pred in [*order, *subs, *reversed(subs)]:
        assert engine._describe(pred) == expected[id(pred)]


def test_a_new_predicate_at_a_reused_address_is_read_anew() -> None:
    """The memo keeps each predicate alive with its text, so its id is never another's; a predicate whose id was
    taken from the memo (a hostile manifest past its cap) is still read from itself (the identity check)."""
    first = {"fact": "launch.mla", "op": "==", "value": True}
    engine._TEXTS[id(first)] = ({"fact": "other"}, "stale text")  # an entry for another object at this address
    assert engine._describe(first) == "launch.mla == true"


@pytest.mark.parametrize("facts", FACTS, ids=[p.parent.name for p in FACTS])
def test_verdicts_with_the_memo_are_those_without(facts: Path) -> None:
    manifests = load([])
    data, _host = load_facts_document(str(facts))
    for launch in LAUNCHES:
        engine._TEXTS.clear()
        engine.MEMO_TEXTS = False
        try:
            anew = engine.evaluate_all(Context(facts=data, manifests=manifests, launch=dict(launch)))
        finally:
            engine.MEMO_TEXTS = True
        first = engine.evaluate_all(Context(facts=data, manifests=manifests, launch=dict(launch)))
        again = engine.evaluate_all(Context(facts=data, manifests=manifests, launch=dict(launch)))  # memo filled
        assert first == anew, launch
        assert again == anew, launch
