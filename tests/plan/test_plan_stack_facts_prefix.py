"""The memoised engine builds a candidate stack's facts from those of its longest prefix built already
(hypothetical.Engine._stack_facts, iperf40): the choices are applied in a fixed order (driver, torch, kernel,
flashinfer, sglang) and each reads only the facts before it, so every prefix of choices is applied once however many
stacks share it. Held here on case folders' boxes: each stack's facts are equal to stack_facts' from scratch (the
reference), in any order of asking, and apply_choice runs once per distinct prefix (a call count, not a timing;
before: once per choice per stack, 98 calls for the 24 stacks of the write-up box's --want search)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import hypothetical
from stackcheck.plan.solver import Restrict, Space, Stack, enumerate_stacks, read_box
from stackcheck.verdicts.context import Context

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
CASES = ["writeup-before", "writeup-after", "h200-newest"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_each_prefix_is_applied_once_and_the_facts_are_the_reference(
    case: str, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = ROOT / "tests" / "cases" / case / "facts.json"
    if not path.is_file():
        pytest.skip(f"no case {case}")
    facts = load_facts_file(str(path))
    ctx = Context(facts=copy.deepcopy(facts), manifests=M)
    stacks = sorted(enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()), key=Stack.key)
    assert stacks
    random.Random(seed).shuffle(stacks)
    engine = hypothetical.Engine(ctx)
    calls = [0]
    real = hypothetical.apply_choice

    def counted(*a: Any, **k: Any) -> Any:
        calls[0] += 1
        return real(*a, **k)

    monkeypatch.setattr(hypothetical, "apply_choice", counted)
    prefixes: set[tuple[Any, ...]] = set()
    for s in stacks:
        choices = engine.applied(s)
        key = tuple(choices.items())
        prefixes.update(key[: n + 1] for n in range(len(key)))
        got = engine._stack_facts(choices, s)
        monkeypatch.setattr(hypothetical, "apply_choice", real)
        want = hypothetical.stack_facts(Context(facts=copy.deepcopy(facts), manifests=M), s)
        monkeypatch.setattr(hypothetical, "apply_choice", counted)
        assert json.dumps(got, sort_keys=True, default=str) == json.dumps(want, sort_keys=True, default=str), s
        assert engine._stack_facts(choices, s) is got  # (kept: asked again, the same object)
    assert calls[0] == len(prefixes)
