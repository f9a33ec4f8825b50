"""iperf34: the --want search judges its candidate stacks lazily. For each stack that makes the wanted features ok it
asked whether a stack check fails with a crash after the plan to it by making the whole plan (steps, `unblocks`,
every feature's verdict after it) and judging every check; now it builds the facts after the plan alone
(steps.facts_after), stops at the first check that crashes, and the plan to the stack it settles on reads the checks
the search judged there instead of judging them again. Against the straightforward search (the whole plan, every
check, as before), on the case folders and on generated boxes: the same answer for every candidate, the same failing
checks for the one chosen, and the same plan, facts after it and error, byte for byte."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_boxes import draw_driver_and_packages

from stackcheck.errors import StackcheckError
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import planner, steps
from stackcheck.plan.hypothetical import Engine
from stackcheck.plan.solver import Box, Stack
from stackcheck.verdicts import REFUSED_EFFECTS
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all
from stackcheck.verdicts.types import FeatureVerdict

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
CASES = sorted(p for group in ("cases", "plan_cases") for p in (ROOT / "tests" / group).iterdir() if p.is_dir())
BASES = [c for c in CASES if (c / "facts.json").is_file()]
FEATURES = [str(f["id"]) for f in M.features]
#: the wanted features of a release the write-up box lacks (many candidate stacks: ifc50's 12.9 -> 38.8 ms)
WANTS = (["fp8-block-gemm"], ["torch-symm-mem"], ["fa4"], ["fp8-block-gemm", "mxfp8"])


def _straight(
    ctx: Context,
    engine: Engine,
    stack: Stack,
    box: Box,
    before: dict[str, FeatureVerdict],
    search: Any = None,
) -> bool:
    """The search's question as it was asked before iperf34: the whole plan to the stack, then every check after it."""
    planned = steps.plan_steps(ctx, engine, stack, box, before)
    failing = engine.checks_failing_on(planned.facts, planned.choices)
    return any(planner._failing_entry(v).effect in REFUSED_EFFECTS for v in failing)  # crash or wrong-output


@contextmanager
def _patched(name: str, value: Any) -> Iterator[None]:
    """planner.NAME replaced for the block (no monkeypatch fixture: hypothesis runs the body many times)."""
    real = getattr(planner, name)
    setattr(planner, name, value)
    try:
        yield
    finally:
        setattr(planner, name, real)


def _plan(facts: dict[str, Any], kept: bool, **kw: Any) -> tuple[str, ...]:
    """The plan's JSON and the facts after it (or the error), with the box's verdicts and checks given (`kept`, as the
    plan command gives them) or not."""
    ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
    features, checks = evaluate_all(ctx)
    try:
        plan, after = planner.plan_and_facts(
            ctx,
            list(features),
            box_verdicts=list(features) if kept else None,
            box_checks=list(checks) if kept else None,
            **kw,
        )
    except StackcheckError as exc:
        return ("error", type(exc).__name__, exc.message)
    return json.dumps(plan.to_json(), sort_keys=True), json.dumps(after, sort_keys=True)


def _agree(facts: dict[str, Any], **kw: Any) -> int:
    """The lazy search against the straightforward one on this box and request: every candidate answered alike (each
    asked both ways on engines of their own), the checks kept for the chosen stack equal to those judged after its
    plan, and the plans equal, with and without the box's verdicts. Returns how many candidates were asked."""
    asked = 0
    lazy = planner._crashes_after

    def both(
        ctx: Context,
        engine: Engine,
        stack: Stack,
        box: Box,
        before: dict[str, FeatureVerdict],
        search: Any = None,
    ) -> bool:
        nonlocal asked
        asked += 1
        mine = planner._Search()  # (a search of its own: asked with and without the last crasher first)
        got = lazy(ctx, engine, stack, box, before, mine)
        other = Engine(ctx, box=dict(engine._box), box_checks=list(engine._box_checks.values()) or None)
        assert got == _straight(ctx, other, stack, box, before), stack.describe()
        if not got:  # every check judged: the failing ones, as the plan to the stack judges them
            planned = steps.plan_steps(ctx, other, stack, box, before)
            expected = [json.dumps(v, sort_keys=True) for v in other.checks_failing_on(planned.facts, planned.choices)]
            assert [json.dumps(v, sort_keys=True) for v in mine.failing_after(stack) or []] == expected
            assert mine.failing_after(stack) is not None, stack.describe()
        answer = lazy(ctx, engine, stack, box, before, search)
        assert answer == got, stack.describe()
        return answer

    for kept in (False, True):
        with _patched("_crashes_after", both):
            new = _plan(facts, kept, **kw)
        with _patched("_crashes_after", _straight):
            old = _plan(facts, kept, **kw)
        assert new == old, (kept, kw)
    return asked


@pytest.mark.parametrize("want", WANTS, ids=["+".join(w) for w in WANTS])
def test_the_write_up_box_plans_the_same_with_the_lazy_search(want: list[str]) -> None:
    facts = dict(load_facts_file(str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")))
    _agree(facts, want=want)


def test_fp8_block_gemm_on_the_write_up_box_asks_several_candidates() -> None:
    """The case the search is slow on (ifc50): several stacks make fp8-block-gemm ok and crash after their plan."""
    facts = dict(load_facts_file(str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")))
    assert _agree(facts, want=["fp8-block-gemm"]) >= 3


def test_the_search_makes_the_whole_plan_only_for_the_target(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lazy search makes no plan (steps, every feature's verdict after them) for a candidate stack: plan_steps
    runs once, for the stack chosen, and the checks after that plan are the ones the search judged (not judged again).
    Before iperf34 the write-up box's --want fp8-block-gemm made eight plans and judged the checks after each."""
    made: list[Stack] = []
    judged: list[int] = []
    real_steps = steps.plan_steps
    real_failing = Engine.checks_failing_on

    def plan_steps(ctx: Context, engine: Engine, target: Stack, *a: Any) -> Any:
        made.append(target)
        return real_steps(ctx, engine, target, *a)

    def checks_failing_on(self: Engine, *a: Any, **k: Any) -> Any:
        judged.append(1)
        return real_failing(self, *a, **k)

    monkeypatch.setattr(planner, "plan_steps", plan_steps)
    monkeypatch.setattr(Engine, "checks_failing_on", checks_failing_on)
    facts = dict(load_facts_file(str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")))
    ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
    features, _ = evaluate_all(ctx)
    plan = planner.make_plan(ctx, list(features), want=["fp8-block-gemm"], box_verdicts=list(features))
    assert plan.target is not None and plan.error is None
    assert len(made) == 1 and judged == []


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_every_case_plans_the_same_with_the_lazy_search(case: Path) -> None:
    facts = dict(load_facts_file(str(case / "facts.json")))
    for want in (["fp8-block-gemm"], ["torch-symm-mem", "fa4"]):
        _agree(facts, want=want)


@st.composite
def wanted_boxes(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """A case folder's box with its driver and serving packages moved, one to three wanted features, maybe a hold."""
    base = draw(st.sampled_from(BASES))
    facts: dict[str, Any] = copy.deepcopy(dict(load_facts_file(str(base / "facts.json"))))
    draw_driver_and_packages(draw, facts, M)
    request: dict[str, Any] = {"want": draw(st.lists(st.sampled_from(FEATURES), min_size=1, max_size=3, unique=True))}
    held = draw(st.lists(st.sampled_from(["driver", "torch", "sglang", "flashinfer"]), max_size=1))
    if held:
        request["hold"] = held
    return facts, request


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wanted_boxes())
def test_generated_boxes_plan_the_same_with_the_lazy_search(box: tuple[dict[str, Any], dict[str, Any]]) -> None:
    facts, request = box
    _agree(facts, **request)
