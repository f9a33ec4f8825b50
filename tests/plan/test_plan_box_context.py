"""iperf33 (issue 21, `plan --want`'s first run): where the planner judges the box's own facts (the stack checks after a
plan that replaces nothing, a wanted feature no release makes ok judged on the facts after such a plan), it judges them
on the caller's context when that context keeps its lookups (Context.keep_lookups: `stackcheck plan` promises its
facts and launch stay as they are), not on a new context of the same facts that reads every fact path again.

Held equal to the straightforward reading: the failing checks against evaluate_check on a fresh context, and the whole
plan against the plan made from a context that keeps nothing (which takes the old path: a context of its own), on the
box of every case folder and plan case, with and without a wanted feature."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import hypothetical, make_plan
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check, evaluate_feature

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
BASES = sorted(
    p for group in ("cases", "plan_cases") for p in (ROOT / "tests" / group).iterdir() if (p / "facts.json").is_file()
)


def _facts(case: Path) -> dict[str, Any]:
    return copy.deepcopy(dict(load_facts_file(str(case / "facts.json"))))


def _failing(ctx: Context) -> list[str]:
    return [json.dumps(v, sort_keys=True) for c in M.checks if (v := evaluate_check(c, ctx)).get("status") == "failed"]


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_checks_on_the_box_use_the_callers_context(case: Path) -> None:
    ctx = Context(facts=_facts(case), manifests=M)  # type: ignore[arg-type]
    ctx.keep_lookups()
    engine = hypothetical.Engine(ctx)
    got = [json.dumps(v, sort_keys=True) for v in engine.checks_failing_on(ctx.facts, {})]
    assert got == _failing(Context(facts=_facts(case), manifests=M))  # type: ignore[arg-type]
    assert engine._contexts == {}  # no context of its own for the box's facts: the caller's, lookups kept
    # a context that keeps nothing (its facts may change under it) is not read by the planner: one of its own
    plain = Context(facts=_facts(case), manifests=M)  # type: ignore[arg-type]
    other = hypothetical.Engine(plain)
    assert [json.dumps(v, sort_keys=True) for v in other.checks_failing_on(plain.facts, {})] == got
    assert len(other._contexts) == 1


def _plan(case: Path, keep: bool, want: list[str] | None) -> str:
    ctx = Context(facts=_facts(case), manifests=M)  # type: ignore[arg-type]
    if keep:
        ctx.keep_lookups()
    features = [evaluate_feature(f, ctx) for f in M.features]
    plan = make_plan(ctx, features, want=want, box_verdicts=features).to_json()
    return json.dumps(plan, sort_keys=True)


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
@pytest.mark.parametrize("want", [None, ["torch-symm-mem"]], ids=["plan", "want"])
def test_plans_equal_with_the_callers_context(case: Path, want: list[str] | None) -> None:
    assert _plan(case, True, want) == _plan(case, False, want)
