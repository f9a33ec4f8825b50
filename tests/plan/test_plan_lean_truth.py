"""iperf26 (issue 21, `plan --want`'s first run): two readings of the planner held equal to the straightforward ones.

- engine.predicate_holds, a predicate's value without its Outcome's texts (rules_hold's reading, which the planner
  asks ~250 times a first run), against evaluate_predicate(...).value, on every node of every rule's `when` and
  `require` in the manifests, for every GPU model of the box and for no GPU;
- Engine.checks_failing_on, which does not judge in full a check without a builtin whose every applicable rule
  passes (such a check is ok or skipped, never failed), against evaluate_check on every check.

On the box of every case folder, on the planner's candidate stacks (the contexts sharing their shared outcomes, as the
planner's do: one engine for each reading, so neither reads what the other filled) and on generated boxes (other
GPUs, drivers, releases of torch, the kernel, FlashInfer and SGLang, packages absent)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_boxes import draw_driver_and_packages, planner_stacks

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import hypothetical
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check, evaluate_predicate, predicate_holds

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
BASES = sorted(
    p for group in ("cases", "plan_cases") for p in (ROOT / "tests" / group).iterdir() if (p / "facts.json").is_file()
)


def _nodes(pred: Any) -> Iterator[Any]:
    """The predicate and every predicate inside it (the parts of an `all` / `any`, the operand of a `not`)."""
    yield pred
    if isinstance(pred, dict):
        for key in ("all", "any"):
            for sub in pred.get(key) or []:
                yield from _nodes(sub)
        if "not" in pred:
            yield from _nodes(pred["not"])


#: every node of every rule's `when` and `require`, features' and checks' (a few thousand)
NODES = [
    node
    for item in (*M.features, *M.checks)
    for rule in item.get("rules") or []
    if isinstance(rule, dict)
    for part in ("when", "require")
    if part in rule
    for node in _nodes(rule[part])
]


def _values_agree(lean: Context, plain: Context) -> int:
    """predicate_holds on `lean` against evaluate_predicate(...).value on `plain` (the same facts) for every node and
    GPU target; returns how many were compared."""
    n = 0
    for gpu in [*plain.gpu_models(), None]:
        for node in NODES:
            got = predicate_holds(node, lean, gpu)
            want = evaluate_predicate(node, plain, gpu).value
            assert got is want or (type(got) is bool and got == want), (node, gpu, got, want)
            n += 1
    return n


def _failing(ctx: Context) -> list[str]:
    return [json.dumps(v, sort_keys=True) for c in M.checks if (v := evaluate_check(c, ctx)).get("status") == "failed"]


def _agree_on(facts: dict[str, Any]) -> int:
    """Both readings on the box and on its candidate stacks; returns how many predicate values were compared."""
    ctx = Context(facts=copy.deepcopy(facts), manifests=M)  # type: ignore[arg-type]
    n = _values_agree(Context(facts=ctx.facts, manifests=M), Context(facts=ctx.facts, manifests=M))
    fast = hypothetical.Engine(ctx)
    assert [json.dumps(v, sort_keys=True) for v in fast.checks_failing_on(ctx.facts)] == _failing(ctx)
    if ctx.facts.get("packages") is None:
        return n
    lean_engine, plain_engine = hypothetical.Engine(ctx), hypothetical.Engine(ctx)
    for stack in planner_stacks(ctx, 6)[:8]:
        facts_after = hypothetical.stack_facts(ctx, stack)
        # the planner's contexts: shared outcomes filled by one reading only, each engine its own
        n += _values_agree(lean_engine._context(facts_after), plain_engine._context(facts_after))
        plain = Context(facts=facts_after, manifests=M)
        failing = [json.dumps(v, sort_keys=True) for v in fast.checks_failing_on(facts_after)]
        assert failing == _failing(plain), stack.describe()
    return n


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_lean_readings_agree_on_every_case(case: Path) -> None:
    assert _agree_on(dict(load_facts_file(str(case / "facts.json")))) >= len(NODES)


def test_the_lean_readings_are_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner's test of a check reads it without judging it in full where its rules all pass (else this test
    compares nothing new), and predicate_holds reads a shared predicate from the shared outcomes."""
    facts = copy.deepcopy(dict(load_facts_file(str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json"))))
    ctx = Context(facts=facts, manifests=M)  # type: ignore[arg-type]
    judged: list[str] = []

    def spy(check: Any, c: Context) -> Any:
        judged.append(str(check.get("id")))
        return evaluate_check(check, c)

    monkeypatch.setattr("stackcheck.plan.hypothetical.evaluate_check", spy)
    hypothetical.Engine(ctx).checks_failing_on(ctx.facts)
    rules_only = [str(c.get("id")) for c in M.checks if c.get("builtin") is None]
    assert rules_only and len([c for c in rules_only if c not in judged]) >= len(rules_only) // 2
    engine = hypothetical.Engine(ctx)
    a, b = engine._context(dict(ctx.facts)), engine._context(dict(ctx.facts))  # type: ignore[arg-type]
    shared = a.shared_outcomes
    assert shared is not None and b.shared_outcomes is shared
    tp = {"fact": "launch.tp", "op": ">", "value": 1}  # reads no component: shared
    assert shared.fixed(tp) or shared.fixed(tp)  # (worked out from its second asking on)
    assert predicate_holds(tp, a, None) is evaluate_predicate(tp, Context(facts=ctx.facts, manifests=M), None).value
    assert (id(tp), None) in shared.outcomes  # filled as evaluate_predicate fills it
    assert predicate_holds(tp, b, None) is shared.outcomes[(id(tp), None)][1].value


# ---- generated boxes ---------------------------------------------------------------------------------

ARCHS = [(str(a["compute_capability"]), str(a.get("name"))) for a in M.architectures]


@st.composite
def boxes(draw: st.DrawFn) -> dict[str, Any]:
    facts: dict[str, Any] = copy.deepcopy(dict(load_facts_file(str(draw(st.sampled_from(BASES)) / "facts.json"))))
    if draw(st.booleans()):
        cc, name = draw(st.sampled_from(ARCHS))
        n = draw(st.sampled_from([0, 1, 2, 8]))
        facts["gpus"] = [{"index": i, "name": name, "compute_capability": cc, "uuid": None, "pci_bus_id": None,
                          "memory_bytes": None} for i in range(n)]  # fmt: skip
        facts["topology"] = {"interconnect": draw(st.sampled_from(["nvlink", "pcie-host-bridge", None])),
                             "same_model": True, "gpu_count": n, "p2p": None, "pairs": []}  # fmt: skip
    draw_driver_and_packages(draw, facts, M)
    return facts


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes())
def test_lean_readings_agree_on_generated_boxes(facts: dict[str, Any]) -> None:
    assert _agree_on(facts) >= len(NODES)
