"""engine._evaluate_predicate stops an `all` at its first part that is False and an `any` at its first that is True:
the outcome is that part whatever the parts after it give. Compared with the straightforward reading (every part
evaluated, the first decisive one taken, else the first missing, else the last / the alternatives stated), outcome
for outcome: every node of every shipped rule on every case folder's facts under several launches, per GPU model, and
generated trees whose parts are true, false and missing in every order."""

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
    {"attention_backend": "trtllm_mla", "tp": 8, "mla": True, "mla_kv_rope": "512/64", "model_config_read": True},
    {"attention_backend": "flashmla", "mla": False, "model_config_read": False, "speculative_algorithm": "EAGLE"},
    {"attention_backend": "fa4", "tp": 2, "mla": True, "kv_cache_dtype": "fp8_e4m3"},
    {"attention_backend": "trtllm_mha", "prefill_attention_backend": "fa3", "tp": 4},
]


def reference(pred: Any, ctx: Context, gpu: Any) -> engine.Outcome:
    """The straightforward reading: every part of an `all` / `any` evaluated (here, recursively), then picked."""
    if isinstance(pred, dict) and ("all" in pred or "any" in pred):
        is_all = "all" in pred
        subs = pred.get("all" if is_all else "any") or []
        parts = [reference(p, ctx, gpu) for p in subs]
        decisive = [p for p in parts if p.value is (not is_all)]
        if decisive:
            return decisive[0]
        missing = [p for p in parts if p.value is None]
        if missing:
            return missing[0]
        if not parts:
            return engine.Outcome(is_all)
        if is_all:
            return parts[-1]
        seen = {
            f"{o.subject or engine._describe_lhs(sp)} = {engine._text(o.observed)}"
            for sp, o in zip(subs, parts, strict=True)
        }
        patched = next((o.patched for o in parts if o.patched), None)
        return engine.Outcome(False, "; ".join(sorted(seen)), engine._describe(pred), patched=patched)
    if isinstance(pred, dict) and "not" in pred and "unknown" not in pred:
        inner = reference(pred["not"], ctx, gpu)
        if inner.value is None:
            return inner
        return engine.Outcome(not inner.value, inner.observed, f"not {inner.required}", patched=inner.patched)
    return engine._evaluate_predicate(pred, ctx, gpu)  # a comparison: no part to stop at


def _walk(pred: Any) -> Iterator[Any]:
    yield pred
    if isinstance(pred, dict):
        for key in ("all", "any"):
            for sub in pred.get(key) or []:
                yield from _walk(sub)
        if "not" in pred:
            yield from _walk(pred["not"])


def _nodes() -> list[Any]:
    manifests = load([])
    return [
        node
        for item in [*manifests.features, *manifests.checks]
        for rule in item.get("rules") or []
        for part in ("when", "require")
        if part in rule
        for node in _walk(rule[part])
    ]


@pytest.mark.parametrize("facts", FACTS, ids=[p.parent.name for p in FACTS])
def test_every_shipped_predicate_as_the_straightforward_reading(facts: Path) -> None:
    manifests = load([])
    data, _host = load_facts_document(str(facts))
    nodes = _nodes()
    assert len(nodes) > 500
    for launch in LAUNCHES:
        ctx = Context(facts=data, manifests=manifests, launch=dict(launch))
        for gpu in [None, *ctx.gpu_models()]:
            for node in nodes:
                assert engine.evaluate_predicate(node, ctx, gpu) == reference(node, ctx, gpu), (launch, node)


def test_the_shipped_rules_stop_early_somewhere() -> None:
    """Not vacuous: on the newest H200 box, some `all` has a false part before others (and is not read past it)."""
    manifests = load([])
    data, _host = load_facts_document(str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json"))
    ctx = Context(facts=data, manifests=manifests, launch=dict(LAUNCHES[1]))
    early = [
        n
        for n in _nodes()
        if isinstance(n, dict)
        and "all" in n
        and any(engine.evaluate_predicate(p, ctx, None).value is False for p in n["all"][:-1])
    ]
    assert len(early) > 20


KEYS = ("mla", "tp", "attention_backend", "draft_mla", "absent_a", "absent_b")


def _leaf(rng: random.Random) -> Any:
    choice = rng.random()
    if choice < 0.1:
        return {"unknown": f"hop {rng.randint(0, 9)} not read"}  # missing
    if choice < 0.15:
        return {"fact": "gpu.cc", "op": ">=", "value": rng.choice(["8.0", "9.0", "10.0"])}  # per GPU, or missing
    if choice < 0.2:
        return {"fact": "nowhere.x"}  # an unknown fact path: missing
    key = rng.choice(KEYS)
    op = rng.choice(["==", "!=", "exists", "in", ">="])
    value: Any = rng.choice([True, False, 1, 2, 8, "fa3", "trtllm_mla"])
    if op == "in":
        value = [value, rng.choice([True, 2, "fa3"])]
    leaf = {"fact": f"launch.{key}", "op": op, "value": value}
    return leaf


def _tree(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.choice(["leaf", "all", "any", "not"] if depth < 4 else ["leaf"])
    if kind in ("all", "any"):
        return {kind: [_tree(rng, depth + 1) for _ in range(rng.randint(0, 5))]}
    if kind == "not":
        return {"not": _tree(rng, depth + 1)}
    return _leaf(rng)


@pytest.mark.parametrize("seed", range(40))
def test_generated_trees_as_the_straightforward_reading(seed: int) -> None:
    rng = random.Random(seed)
    manifests = load([])
    data, _host = load_facts_document(str(ROOT / "tests" / "cases" / ("h200-newest", "b200")[seed % 2] / "facts.json"))
    values: dict[str, list[Any]] = {"mla": [True, False], "tp": [1, 2, 8], "attention_backend": ["fa3", "trtllm_mla"]}
    for _ in range(5):
        launch = {k: rng.choice(v) for k, v in values.items() if rng.random() < 0.7}
        if rng.random() < 0.5:
            launch["draft_mla"] = rng.choice([True, False])
        ctx = Context(facts=data, manifests=manifests, launch=launch)
        for _ in range(40):
            tree = _tree(rng)
            for node in _walk(tree):
                for gpu in [None, *ctx.gpu_models()]:
                    assert engine.evaluate_predicate(node, ctx, gpu) == reference(node, ctx, gpu), (launch, node)
