"""engine.rules_hold reads the rules as evaluate_rules(stop=True) does, without building the reasons it would drop:
held equal to that reading, rule by rule and for each feature's whole rule list, on the box of every case folder
and on the facts of candidate stacks the planner judges (other SGLang, torch, FlashInfer releases)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import hypothetical
from stackcheck.plan.solver import Restrict, Space, enumerate_stacks, read_box
from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
CASES = sorted(p.name for p in (ROOT / "tests" / "cases").iterdir() if (p / "facts.json").is_file())


def _reference(rules: list[Any], ctx: Context) -> bool:
    try:
        engine.evaluate_rules({"rules": rules}, ctx, stop=True)
    except engine._NotOk:
        return False
    return True


def _same_on(ctx: Context) -> int:
    n = 0
    for item in (*M.features, *M.checks):
        rules = [r for r in item.get("rules") or [] if isinstance(r, dict)]
        for rule in rules:
            assert engine.rules_hold([rule], ctx) == _reference([rule], ctx), (item.get("id"), rule.get("id"))
            n += 1
        assert engine.rules_hold(rules, ctx) == _reference(rules, ctx), item.get("id")
    return n


@pytest.mark.parametrize("case", CASES)
def test_rules_hold_is_evaluate_rules_stopped(case: str) -> None:
    facts = load_facts_file(str(ROOT / "tests" / "cases" / case / "facts.json"))
    ctx = Context(facts=facts, manifests=M)
    assert _same_on(ctx) > 300


@pytest.mark.parametrize("case", ["writeup-after", "writeup-before"])
def test_on_the_planners_stacks(case: str) -> None:
    ctx = Context(facts=load_facts_file(str(ROOT / "tests" / "cases" / case / "facts.json")), manifests=M)
    stacks = list(enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()))
    for stack in stacks[:: max(1, len(stacks) // 12)]:
        _same_on(Context(facts=hypothetical.stack_facts(ctx, stack), manifests=M))
