"""A rule that stopped a feature's reading on one stack is not judged again on a stack with the same choices of
what it reads (hypothetical.Engine.ok_with, issue 21): `plan --want torch-symm-mem` on the write-up box asks the
feature of every candidate stack (any_ok), and its stopping rules read SGLang's release only, so the facts of at
most one stack per SGLang release are built. The answers are the plain engine's (test_plan_memo's
test_never_ok_and_ok_agree_with_the_plain_engine_on_every_case and its generated boxes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import hypothetical
from stackcheck.plan.solver import Restrict, Space, Stack, enumerate_stacks, read_box
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})


def _engine_and_stacks(case: str) -> tuple[hypothetical.Engine, list[Stack]]:
    ctx = Context(facts=load_facts_file(str(ROOT / "tests" / "cases" / case / "facts.json")), manifests=M)
    box = {str(f.get("id")): evaluate_feature(f, ctx) for f in M.features}
    stacks = sorted(enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()), key=lambda s: (s.changes(), s.key()))
    return hypothetical.Engine(ctx, box=box), stacks


@pytest.mark.parametrize("case", ["writeup-after", "writeup-before"])
def test_a_failed_stopping_rule_is_not_judged_again_under_the_same_choices(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine, stacks = _engine_and_stacks(case)
    built: list[Any] = []
    real = hypothetical.Engine._context

    def context(self: hypothetical.Engine, facts: Any) -> Any:
        built.append(facts)
        return real(self, facts)

    monkeypatch.setattr(hypothetical.Engine, "_context", context)
    assert not engine.any_ok(stacks, "torch-symm-mem")  # no release has the change
    releases = {s.sglang.version for s in stacks}
    assert len(stacks) > len(releases) > 1
    assert 0 < len(built) <= len(releases), (len(built), len(releases))


@pytest.mark.parametrize("case", ["writeup-after", "writeup-before"])
def test_the_last_stopper_is_a_stopper_exactly_when_its_key_is_known(case: str) -> None:
    """ok_with reads the last stopping rule's key in its loop over the stoppers, not again after it: that rests on a
    rule that stopped a feature being among its stoppers exactly when what it reads is known (its key not None)."""
    engine, stacks = _engine_and_stacks(case)
    for fid in engine.features:
        engine.any_ok(stacks, fid)
    assert engine._stopped_by
    for fid, last in engine._stopped_by.items():
        among = any(r is last for r in engine._stoppers.get(fid, ()))
        for s in stacks[:5]:
            assert among == (engine._rule_key(last, engine.applied(s)) is not None)


@pytest.mark.parametrize("case", ["writeup-after", "writeup-before"])
def test_on_box_reads_the_features_components_as_one_set(case: str) -> None:
    """_on_box gives the box's verdict exactly when the choices replace none of the feature's components (exact and
    presence), read as one set."""
    engine, stacks = _engine_and_stacks(case)
    for s in stacks[:40]:
        choices = engine.applied(s)
        for fid in engine.features:
            exact, presence = engine.deps(fid)
            replaced = any(c in choices for c in exact) or any(c in choices for c in presence)
            got = engine._on_box(fid, choices)
            assert (got is None) == (replaced or fid not in engine._box)
            assert got is None or got is engine._box[fid]
