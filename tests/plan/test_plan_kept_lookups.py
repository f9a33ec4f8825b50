"""iperf27 (issue 21, `plan --want`'s first run): the planner's contexts keep each fact path's value once read
(verdicts.context.Context.keep_lookups, which plan.hypothetical.Engine._context turns on), held equal to a fresh
context's reading of the same facts: every fact path a rule of the manifests reads, for every GPU model of the box and
for no GPU, read twice (the second read is the kept one), the value equal or the same Missing / Unknown (its class,
path and reason). On the box of every case folder, on the planner's candidate stacks and on generated boxes (other
GPUs, two GPU models on one box, drivers, releases of torch, the kernel, FlashInfer and SGLang, packages absent)."""

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
from stackcheck.verdicts.context import Context, Missing

ROOT = Path(__file__).resolve().parent.parent.parent
M = load([], env={})
BASES = sorted(
    p for group in ("cases", "plan_cases") for p in (ROOT / "tests" / group).iterdir() if (p / "facts.json").is_file()
)


def _paths(pred: Any) -> Iterator[str]:
    """The fact paths a predicate reads: its own `fact`, a `value` that is a fact reference, and its parts'."""
    if not isinstance(pred, dict):
        return
    if isinstance(pred.get("fact"), str):
        yield pred["fact"]
    ref = pred.get("value")
    if isinstance(ref, dict) and isinstance(ref.get("fact"), str):
        yield ref["fact"]
    for key in ("all", "any"):
        for sub in pred.get(key) or []:
            yield from _paths(sub)
    yield from _paths(pred.get("not"))


#: every fact path a rule of the manifests reads (features' and checks'), in a fixed order
PATHS = sorted(
    {
        path
        for item in (*M.features, *M.checks)
        for rule in item.get("rules") or []
        if isinstance(rule, dict)
        for part in ("when", "require")
        for path in _paths(rule.get(part))
    }
)


def _read(ctx: Context, path: str, gpu: Any) -> tuple[str, Any]:
    try:
        return "value", ctx.lookup(path, gpu)
    except Missing as exc:
        return type(exc).__name__, (exc.path, exc.reason)


def _agree(kept: Context, facts: Any, launch: dict[str, Any]) -> int:
    """Every path on `kept` (its lookups kept), twice, against a fresh context on the same facts; returns how many
    readings were compared."""
    assert kept._lookups is not None  # the planner's context keeps them (else this compares nothing new)
    n = 0
    for gpu in [*kept.gpu_models(), None]:
        for path in PATHS:
            want = _read(Context(facts=facts, manifests=M, launch=launch), path, gpu)
            first, second = _read(kept, path, gpu), _read(kept, path, gpu)
            assert first == want and second == want, (path, gpu, first, second, want)
            n += 1
    return n


def _agree_on(facts: dict[str, Any], launch: dict[str, Any] | None = None) -> int:
    ctx = Context(facts=copy.deepcopy(facts), manifests=M, launch=launch)  # type: ignore[arg-type]
    engine = hypothetical.Engine(ctx)
    n = _agree(engine._context(ctx.facts), ctx.facts, ctx.launch)
    if ctx.facts.get("packages") is None:
        return n
    for stack in planner_stacks(ctx, 4)[:6]:
        after = hypothetical.stack_facts(ctx, stack)
        n += _agree(engine._context(after), after, ctx.launch)
    return n


@pytest.mark.parametrize("case", BASES, ids=[c.name for c in BASES])
def test_kept_lookups_agree_on_every_case(case: Path) -> None:
    assert _agree_on(dict(load_facts_file(str(case / "facts.json")))) >= len(PATHS)


def test_kept_lookups_agree_with_a_launch_and_are_kept_per_gpu_model() -> None:
    facts = dict(load_facts_file(str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")))
    assert _agree_on(facts, {"tp": 8, "attention_backend": "fa3", "symm_mem": True}) >= len(PATHS)
    ctx = Context(facts=facts, manifests=M)  # type: ignore[arg-type]
    kept = hypothetical.Engine(ctx)._context(ctx.facts)
    model = kept.gpu_models()[0]
    assert kept.lookup("gpu.cc", model) == model.cc
    with pytest.raises(Missing):  # kept per GPU model: no GPU is not the model read before
        kept.lookup("gpu.cc", None)
    assert ("gpu.cc", model) in (kept._lookups or {})
    assert hypothetical.Engine(ctx, memo=False)._context(ctx.facts)._lookups is None  # the reference keeps none


ARCHS = [(str(a["compute_capability"]), str(a.get("name"))) for a in M.architectures]


@st.composite
def boxes(draw: st.DrawFn) -> dict[str, Any]:
    facts: dict[str, Any] = copy.deepcopy(dict(load_facts_file(str(draw(st.sampled_from(BASES)) / "facts.json"))))
    if draw(st.booleans()):
        models = draw(st.lists(st.sampled_from(ARCHS), min_size=0, max_size=2))  # two models on one box, or none
        facts["gpus"] = [
            {"index": i, "name": name, "compute_capability": cc, "uuid": None, "pci_bus_id": None,
             "memory_bytes": None}
            for i, (cc, name) in enumerate(models)
        ]  # fmt: skip
    draw_driver_and_packages(draw, facts, M)
    return facts


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(boxes())
def test_kept_lookups_agree_on_generated_boxes(facts: dict[str, Any]) -> None:
    assert _agree_on(facts) >= len(PATHS)


# ---- `stackcheck plan`'s own context (the box's: build_report's keep_lookups) ------------------------------------


@pytest.mark.parametrize("case", BASES[::3], ids=[c.name for c in BASES[::3]])
def test_the_plan_commands_box_context_keeps_lookups_and_reports_the_same(case: Path) -> None:
    """build_report(keep_lookups=True), as `stackcheck plan` asks it: the report (verdicts, checks, implied versions,
    plan) the same as without, the context's lookups kept and then equal to a fresh context's; with a request, the
    plan made on that context the same too."""
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report
    from stackcheck.plan import make_plan

    opts = Options(facts_file=str(case / "facts.json"))
    kept_report, kept = build_report(opts, keep_lookups=True)
    plain_report, plain = build_report(opts)
    assert kept._lookups is not None and plain._lookups is None
    assert json.dumps(kept_report, sort_keys=True, default=str) == json.dumps(plain_report, sort_keys=True, default=str)
    for gpu in [*kept.gpu_models(), None]:
        for path in PATHS:
            assert _read(kept, path, gpu) == _read(
                Context(facts=kept.facts, manifests=M, launch=kept.launch), path, gpu
            )
    for want in (["torch-symm-mem"], ["fp8-block-gemm"]):
        got = [
            make_plan(c, list(r["features"]), want=want).to_json()
            for c, r in ((kept, kept_report), (plain, plain_report))
        ]
        assert json.dumps(got[0], sort_keys=True) == json.dumps(got[1], sort_keys=True)
