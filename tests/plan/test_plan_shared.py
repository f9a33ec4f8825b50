"""The planner's shortcuts of issue 21 checked against the plain engine: the outcomes of predicates that read
no replaced component, shared between the hypothetical contexts of one plan (verdicts.context.SharedOutcomes),
and Engine.ok, which reads a feature's rules only up to the first that fails or is unknown
(verdicts.engine.feature_ok). Every verdict must be the one a fresh context without either gives."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import hypothetical
from stackcheck.plan.solver import Restrict, Space, Stack, enumerate_stacks, read_box
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature, evaluate_predicate, feature_ok

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
CASES = sorted(p for group in ("cases", "plan_cases") for p in (ROOT / "tests" / group).iterdir() if p.is_dir())
BASES = [c for c in CASES if (c / "facts.json").is_file()]


def _stacks(ctx: Context, n: int) -> list[Stack]:
    """Up to n stacks of the box, spread over the preference order (so over SGLang releases)."""
    box = read_box(ctx)
    stacks = sorted(enumerate_stacks(Space(ctx, box), Restrict()), key=Stack.key)
    step = max(1, len(stacks) // n)
    return stacks[::step][:n]


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_shared_outcomes_and_feature_ok_give_the_plain_verdicts(case: Path) -> None:
    facts = copy.deepcopy(dict(load_facts_file(str(case / "facts.json"))))
    ctx = Context(facts=facts, manifests=M)  # type: ignore[arg-type]
    if ctx.facts.get("packages") is None:
        pytest.skip("no packages: the planner does not judge stacks")
    engine = hypothetical.Engine(ctx)
    seen_ok = seen_not_ok = 0
    for stack in _stacks(ctx, 6):
        after = hypothetical.stack_facts(ctx, stack)
        for feature in M.features:
            plain = evaluate_feature(feature, Context(facts=after, manifests=M))
            shared = engine._context(after)
            assert shared.shared_outcomes is not None
            assert evaluate_feature(feature, shared) == plain, feature["id"]
            got = feature_ok(feature, engine._context(after))
            if plain.get("status") == "ok":
                assert got == plain, feature["id"]
                seen_ok += 1
            else:
                assert got is None, (feature["id"], plain.get("status"))
                seen_not_ok += 1
            assert engine.ok(stack, str(feature["id"])) is (plain.get("status") == "ok")
    # the same whether the ok verdict was kept by ok() or judged afresh
    for stack in _stacks(ctx, 6):
        after = hypothetical.stack_facts(ctx, stack)
        for feature in M.features:
            assert engine.verdict(stack, str(feature["id"])) == evaluate_feature(
                feature, Context(facts=after, manifests=M)
            )
    assert seen_ok + seen_not_ok > 0


def test_only_what_no_choice_replaces_is_shared() -> None:
    facts = load_facts_file(str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json"))
    ctx = Context(facts=facts, manifests=M)
    engine = hypothetical.Engine(ctx)
    by_sglang: dict[str, Stack] = {}
    for s in _stacks(ctx, 40):
        by_sglang.setdefault(s.sglang.version, s)
    a, b = list(by_sglang.values())[:2]
    ca, cb = (engine._context(hypothetical.stack_facts(ctx, s)) for s in (a, b))
    reads_sglang = {"fact": "pkg.sglang.version", "op": "version", "value": f"=={a.sglang.version}"}
    first, second = evaluate_predicate(reads_sglang, ca, None), evaluate_predicate(reads_sglang, cb, None)
    assert (first.value, second.value) == (True, False)  # judged on each stack's own SGLang
    reads_gpus = {"fact": "gpu.count", "op": ">=", "value": 1}
    evaluate_predicate(reads_gpus, ca, None)  # (its answer not at hand: kept from its second evaluation on)
    one = evaluate_predicate(reads_gpus, cb, None)
    assert evaluate_predicate(reads_gpus, ca, None) is one  # then read once for the whole plan
    assert one.value is True
    # without the sharing (the reference), each context reads it again
    plain = hypothetical.Engine(ctx, memo=False)
    pa, pb = (plain._context(hypothetical.stack_facts(ctx, s)) for s in (a, b))
    assert pa.shared_outcomes is None
    assert evaluate_predicate(reads_gpus, pa, None) is not evaluate_predicate(reads_gpus, pb, None)


def test_other_gpus_are_not_shared() -> None:
    """A context whose GPUs are not the box's (facts given to verdict_on from elsewhere) reads its own."""
    facts = load_facts_file(str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json"))
    ctx = Context(facts=facts, manifests=M)
    engine = hypothetical.Engine(ctx)
    other: dict[str, Any] = dict(facts)
    other["gpus"] = [dict(g) for g in facts.get("gpus") or []][:1]
    assert engine._context(other).shared_outcomes is None  # type: ignore[arg-type]
    assert engine._context(facts).shared_outcomes is not None


def test_forget_indexes_drops_what_the_planner_worked_out() -> None:
    m = load([], env={})
    memo = m.derived("plan.reads_no_component")
    memo["x"] = 1
    assert m.derived("plan.reads_no_component") == {"x": 1}
    m.forget_indexes()
    assert m.derived("plan.reads_no_component") == {}
    assert copy.deepcopy(m).derived("plan.feature_components") == {}
