"""Step ordering: the target stack's changes as ordered steps (driver, CUDA toolkit, torch, kernel,
flashinfer, SGLang, then manual patches), each with its installer's commands, why it is there, and the
features blocked before the plan that are ok after the whole plan, each on the step after which it stays ok
(`unblocks`: a feature ok only between two steps, blocked again by a later one, is unblocked by none); a
feature ok now and blocked after the plan is a warning on the step after which it stays blocked."""

from __future__ import annotations

from stackcheck.facts.versions import compare_numeric
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.plan.hypothetical import Engine, apply_choice, first_failure
from stackcheck.plan.installers import INSTALLERS
from stackcheck.plan.installers.interface import q
from stackcheck.plan.model import Step
from stackcheck.plan.solver import COMPONENTS, Box, Choice, Stack, cuda_key
from stackcheck.record import Frozen, replace
from stackcheck.verdicts.context import Context

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts
    from stackcheck.verdicts.types import FeatureVerdict  # (typing: ~3 ms, for annotations only)

STEP_ORDER = ("driver", "toolkit", "torch", "kernel", "flashinfer", "sglang", "patch")


class Steps(Frozen):
    """The ordered steps to a target, the facts after all of them, every feature's verdict then, and the choices
    those facts apply to the box (by component, the toolkit's included; empty without a step)."""

    __slots__ = ("choices", "facts", "final", "steps")
    steps: list[Step]
    facts: Facts
    final: dict[str, FeatureVerdict]
    choices: dict[str, Choice]

    def __init__(
        self, steps: list[Step], facts: Facts, final: dict[str, FeatureVerdict], choices: dict[str, Choice]
    ) -> None:
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "facts", facts)
        object.__setattr__(self, "final", final)
        object.__setattr__(self, "choices", choices)


def toolkit_choice(ctx: Context, target: Stack) -> Choice | None:
    """A CUDA toolkit step when the toolkit that builds extensions is older (major) than torch's CUDA."""
    tk = ctx.toolkit_cuda()
    if tk is None or target.torch.cuda is None:
        return None
    if cuda_key(tk)[0] < cuda_key(target.torch.cuda)[0]:
        return Choice("toolkit", "cuda-toolkit", target.torch.cuda)
    return None


def step_choices(ctx: Context, target: Stack) -> list[Choice]:
    """The choices of the plan's steps to `target`, in the order of the steps (STEP_ORDER; the toolkit's included)."""
    order: list[Choice] = []
    for comp in STEP_ORDER:
        if comp == "toolkit":
            toolkit = toolkit_choice(ctx, target)
            if toolkit is not None:
                order.append(toolkit)
            continue
        ch = target.get(comp) if comp in COMPONENTS else None
        if ch is not None and not ch.current:
            order.append(ch)
    return order


def facts_after(ctx: Context, target: Stack) -> tuple[Facts, dict[str, Choice]]:
    """plan_steps' `facts` and `choices` alone: the facts after every step to `target` and the choices they apply, built
    as plan_steps builds them (the same choices applied in the same order), without the steps, their `unblocks` and
    every feature's verdict after them (what the --want search asks of each candidate stack: its stack checks after
    the plan)."""
    facts = ctx.facts
    choices: dict[str, Choice] = {}
    for ch in step_choices(ctx, target):
        facts = apply_choice(facts, ch, ctx)
        choices[ch.component] = ch
    return facts, choices


def plan_steps(ctx: Context, engine: Engine, target: Stack, box: Box, before: dict[str, FeatureVerdict]) -> Steps:
    """The ordered steps; each step's `unblocks` from the engine on the facts after it and every earlier
    step. Also the facts and the verdicts of every feature after the whole plan."""
    blocked0 = {fid for fid, v in before.items() if v.get("status") == "blocked"}
    ok0 = {fid for fid, v in before.items() if v.get("status") == "ok"}
    facts = ctx.facts
    states: list[tuple[dict[str, Choice], Facts]] = []  # the choices applied so far and the facts they give
    choices: dict[str, Choice] = {}
    order = step_choices(ctx, target)
    final: dict[str, FeatureVerdict] = dict(before)
    drafts: list[tuple[Step, list[str]]] = []  # a step and its warnings, which the regressions extend
    for n, ch in enumerate(order):
        facts = apply_choice(facts, ch, ctx)
        choices = {**choices, ch.component: ch}
        states.append((choices, facts))
        if n == len(order) - 1:
            final = _verdicts(engine, (choices, facts))
        install = INSTALLERS[ch.component](ctx, ch, box, target)
        if ch.component == "driver":
            component, frm, to = "driver", box.installed_text("driver"), f"{ch.version} branch (CUDA {ch.cuda})"
        elif ch.component == "toolkit":
            component, frm, to = "cuda-toolkit", ctx.toolkit_cuda(), ch.version
        else:
            component, frm = ch.name, box.installed_text(ch.component)
            to = ch.label if ch.component != "torch" else f"{ch.version}+{ch.variant}"
        step = Step(
            component=component,
            from_=frm,
            to=to,
            commands=install.commands,
            unblocks=(),
            reason=_reason(ctx, ch, target, box),
            warnings=(),
            alternatives=install.alternatives,
        )
        drafts.append((step, list(install.warnings)))
    # unblocked: blocked before the plan, ok after it; told at the step after which it stays ok (an earlier
    # step's stack can be ok and a later one block it again: SGLang 0.5.19 with sgl-kernel 0.3.21 between
    # the kernel step and the SGLang step of a plan to 0.5.9)
    newly: list[list[str]] = [[] for _ in drafts]
    for fid in sorted(blocked0):
        if not states or final[fid].get("status") != "ok":
            continue
        at = len(states) - 1
        while at > 0 and _ok_at(engine, states[at - 1], fid):
            at -= 1
        newly[at].append(fid)
    drafts = [(replace(step, unblocks=tuple(newly[i])), warnings) for i, (step, warnings) in enumerate(drafts)]
    # regressions: ok before the plan, blocked after it; told at the step after which it stays blocked
    if states:
        for fid in sorted(ok0):
            if final[fid].get("status") != "blocked":
                continue
            at = len(states) - 1
            while at > 0 and _status_at(engine, states[at - 1], fid) == "blocked":
                at -= 1
            drafts[at][1].append(f"{fid} is ok now and blocked after this plan: {first_failure(final[fid])}")
    steps = [replace(step, warnings=tuple(warnings)) for step, warnings in drafts]
    return Steps(steps, facts, final, choices)


def _verdicts(engine: Engine, state: tuple[dict[str, Choice], Facts]) -> dict[str, FeatureVerdict]:
    choices, facts = state
    return {fid: engine.verdict_with(choices, fid, lambda: facts) for fid in engine.features}


def _ok_at(engine: Engine, state: tuple[dict[str, Choice], Facts], fid: str) -> bool:
    choices, facts = state
    return engine.ok_with(choices, fid, lambda: facts)


def _status_at(engine: Engine, state: tuple[dict[str, Choice], Facts], fid: str) -> str:
    choices, facts = state
    return str(engine.verdict_with(choices, fid, lambda: facts).get("status"))


def _reason(ctx: Context, ch: Choice, target: Stack, box: Box) -> str:
    """Why the step is in the plan, in words."""
    if ch.component == "driver":
        reason = f"torch {target.torch.label} needs a driver for CUDA {target.torch.cuda}"
        if not box.driver_version:
            return f"no NVIDIA driver is installed (or it could not be read); {reason}"
        if box.driver_cuda and target.torch.cuda and (compare_numeric(box.driver_cuda, target.torch.cuda) or 0) >= 0:
            return f"driver {box.driver_version} is older than these GPUs need ({box.min_driver})"
        return reason
    if ch.component == "toolkit":
        return (
            f"the build toolkit is CUDA {ctx.toolkit_cuda()}, older than torch's CUDA {target.torch.cuda}: "
            "extensions built against it do not match torch"
        )
    if ch.component == "sglang":
        return f"target SGLang release {ch.version}" if box.sglang else f"SGLang {ch.version} is not installed"
    req = target.sglang.release.get("requires") or {}
    pin = req.get(ch.name)
    base = f"sglang {target.sglang.version} pins {ch.name}{pin}" if pin else f"newest {ch.name} for this stack"
    if ch.component == "torch":
        if not box.ccs:
            return base + f"; the {ch.variant} build (CUDA {ch.cuda}); no GPU is visible, so coverage is unchecked"
        return base + f"; the {ch.variant} build (CUDA {ch.cuda}) covers these GPUs"
    if ch.component == "kernel":
        return base + f"; the {ch.variant} build matches torch's CUDA {target.torch.cuda}"
    return base


def patch_step(engine: Engine, fid: str) -> Step:
    """A wanted feature no release makes ok, with a local workaround: the manual edit, never done by
    stackcheck, as a step of its own."""
    w = engine.features[fid].get("workaround") or {}
    patch = w.get("patch")
    text = str(w.get("text", ""))
    cmds: list[str] = []
    if patch is not None:
        # in words, not `add_key=12`: the output's secret masking takes a `NAME_key=VALUE` for a secret and the
        # user would read `add_key=***` (schemas/features.schema.json: file, symbol, add_key, copy_from_key)
        what = f"in {patch.get('file')}, add key {patch.get('add_key')} to {patch.get('symbol')}"
        if "copy_from_key" in patch:
            what += f", with the value of key {patch['copy_from_key']}"
        cmds.append(f"# manual edit, not done by stackcheck: {q(what)}")
    return Step(
        component=f"patch:{fid}",
        from_=None,
        to="locally patched",
        commands=tuple(cmds),
        unblocks=(),
        reason=text or f"{fid}: local workaround",
        warnings=(
            "unsupported upstream: no release has this change; re-apply after every upgrade of the patched package",
        ),
    )
