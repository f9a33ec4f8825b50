"""The planner: the request (holds, pins, wanted features) against the consistent stacks of the solver, the
target stack chosen, the plan assembled (steps, features still blocked, why no stack satisfies the
request). Pure.

Every consistent stack gets a preference key (solver.Stack.key); the default target is the newest stack
that keeps every feature that is ok now ok (among the best REGRESSION_SEARCH), `want` targets the fewest
changed components, then the smallest key, among the stacks whose verdicts (evaluated by the real engine on
hypothetical facts) make the wanted features ok."""

from __future__ import annotations

from stackcheck.errors import UsageError
from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.facts.versions import cuda_from_tag, numeric_tuple, parse_version, public, variant_of
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.plan.hypothetical import Engine, first_failure
from stackcheck.plan.model import Blocked, FailingCheck, Plan, Step
from stackcheck.plan.solver import (
    COMPONENTS,
    Box,
    Choice,
    Restrict,
    Space,
    Stack,
    allowed,
    component_name,
    enumerate_stacks,
    find_release,
    not_installable,
    read_box,
    same_version,
    violations,
)
from stackcheck.plan.steps import Steps, facts_after, patch_step, plan_steps
from stackcheck.verdicts import REFUSED_EFFECTS, worst_effect
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import workaround_for

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.facts.model import Facts
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict  # (typing: ~3 ms, for annotations only)

#: how many of the best stacks are tried for one that keeps every feature that is ok now
REGRESSION_SEARCH = 10
#: how many of the stacks that make the wanted features ok (different packages, the driver aside) are tried for one
#: after which the box starts
WANT_SEARCH = 10


def make_plan(
    ctx: Context,
    features: list[FeatureVerdict],
    want: list[str] | None = None,
    hold: list[str] | None = None,
    pins: dict[str, str] | None = None,
    upstream_kept: dict[str, str | None] | None = None,
    box_verdicts: list[FeatureVerdict] | None = None,
    box_checks: list[CheckVerdict] | None = None,
    box_failing: list[CheckVerdict] | None = None,
    failing_out: list[list[CheckVerdict]] | None = None,
) -> Plan:
    """The plan for this box: target stack, ordered steps, features still blocked; `error` when no stack
    satisfies the holds, pins and wanted features. Raises UsageError for unknown components/features.
    `upstream_kept`, `box_verdicts`, `box_checks`, `box_failing`, `failing_out`: see plan_and_facts."""
    return plan_and_facts(
        ctx,
        features,
        want,
        hold,
        pins,
        upstream_kept=upstream_kept,
        box_verdicts=box_verdicts,
        box_checks=box_checks,
        box_failing=box_failing,
        failing_out=failing_out,
    )[0]


def plan_and_facts(
    ctx: Context,
    features: list[FeatureVerdict],
    want: list[str] | None = None,
    hold: list[str] | None = None,
    pins: dict[str, str] | None = None,
    upstream: bool = True,
    memo: bool = True,
    upstream_kept: dict[str, str | None] | None = None,
    box_verdicts: list[FeatureVerdict] | None = None,
    box_checks: list[CheckVerdict] | None = None,
    box_failing: list[CheckVerdict] | None = None,
    failing_out: list[list[CheckVerdict]] | None = None,
) -> tuple[Plan, Facts | None]:
    """make_plan, and the hypothetical facts of the box after every step of the plan (None when no stack
    satisfies the request): what `stackcheck recommend` judges its launch against. With `upstream` False
    the still-blocked features do not say which other stack would unblock them (half the planner's time).
    `memo` False judges every feature on every stack from scratch (the reference the tests compare with).

    `upstream_kept` (feature -> the stack of the manifests that makes it ok, described, or None): which stack
    would unblock a feature (_upstream_ok) is a function of the box and the manifests alone, not of the
    request, so the plan cache keeps the answers of a box's plain plan with its verdicts and a later request
    reads them from there (assembly.plan_cache.Entry.upstream). The answers given are used, and those worked
    out are added to it; a plan without a request also works out those of the features blocked on the box as
    it is (what a request that changes little leaves blocked).

    `box_verdicts`: the features as evaluate_feature judges them on `ctx` (the audit's verdicts before a facts file's
    implied versions are merged in; `features` may be those merged): a feature whose rules read none of the
    components a stack replaces is not judged again on it (hypothetical.Engine, `box`).

    `box_checks`: the stack checks as evaluate_check judges them on `ctx`, one per check of the manifests in their
    order (else not used): a check that reads none of the components the plan replaces is not judged again on the
    facts after it (the plan's still_failing_checks; hypothetical.Engine.checks_failing_on).

    `box_failing`: the stack checks failing on `ctx`'s own facts (hypothetical.Engine.checks_failing_on with nothing
    replaced), as an earlier request under the same plan-cache key judged them: a plan that replaces no component
    reads them instead of judging every check again; `failing_out`: filled with that list when judged now (for the
    caller to keep: assembly.plan_cache.keep_upstream's `failing`)."""
    box = read_box(ctx)
    space = Space(ctx, box)
    engine = Engine(
        ctx,
        memo=memo,
        box={str(v.get("id")): v for v in box_verdicts or []},
        box_checks=box_checks,
        box_failing=box_failing,
    )
    held = {component_name(h) for h in hold or []}
    pinned = parse_pins(pins, space)
    for c in held & set(pinned):
        raise UsageError(f"--hold {c} and --to {c}==...: a component cannot be both held and pinned")
    wanted = list(dict.fromkeys(want or []))
    for fid in wanted:
        if fid not in engine.features:
            raise UsageError(f"--want {fid!r}: unknown feature (expected one of {', '.join(sorted(engine.features))})")
    restrict = Restrict(held, pinned)
    note: str | None = None
    if not box.ccs:
        note = (
            "no GPU is visible: the plan cannot check which builds cover the GPUs; "
            "give --assume-gpu CC[xN] (e.g. 12.0x8) to plan for the GPUs this image will run on"
        )
    if ctx.facts.get("packages") is None:
        return Plan(
            note=note, error="installed packages are not known (not probed, not in the facts file): cannot plan"
        ), None
    from stackcheck.facts.model import serving_elsewhere

    elsewhere = serving_elsewhere(ctx.facts)
    if elsewhere and not wanted and not pinned:  # audit the environment that serves, do not install a new one
        others = ctx.facts.get("other_environments") or []
        selects = tuple(str(o.get("select")) for o in others if isinstance(o, dict) and o.get("select"))
        return Plan(note=f"{elsewhere} (no fresh install planned)", elsewhere=selects), None
    for c in sorted(held):
        if c == "driver" and not box.driver_version:
            return Plan(note=note, error="--hold driver: no driver is installed (or its version was not read)"), None
        if c in box.unversioned:
            return Plan(note=note, error=f"--hold {c}: {c} is installed but its version is not known"), None
        if c != "driver" and box.installed_text(c) is None:
            return Plan(note=note, error=f"--hold {c}: {c} is not installed"), None
    before = {str(f.get("id")): f for f in features}
    for fid in engine.features:
        if fid not in before:
            before[fid] = engine.verdict_now(fid)

    stacks = sorted(enumerate_stacks(space, restrict), key=Stack.key)
    search = _Search()  # what the --want search judged (the checks failing after the plan to its target)
    impossible: list[str] = []
    error: str | None = None
    if not wanted:
        target, newer = _default_target(ctx, engine, box, before, stacks)
        if newer is not None:
            note = (note + "; " if note else "") + newer
    else:
        target, impossible, error = _wanted_target(engine, space, restrict, box, stacks, wanted, ctx, before, search)
    if target is None:
        if error is None:
            error = _no_stack_error(space, restrict, box)
        still = tuple(_blocked_entry(engine, before, fid, None, True) for fid in impossible)
        return Plan(still_blocked=still, note=note, error=error), None

    planned = plan_steps(ctx, engine, target, box, before)
    steps: list[Step] = list(planned.steps)
    blocked_final = [fid for fid, v in planned.final.items() if v.get("status") == "blocked"]
    ok_elsewhere: dict[str, str | None] = {}
    if upstream:
        asked = list(blocked_final)
        if upstream_kept is not None and not wanted and not restrict.hold and not restrict.pins:
            asked += [f for f, v in before.items() if v.get("status") == "blocked" and f not in blocked_final]
        ok_elsewhere = _upstream_ok(space, engine, restrict, stacks, asked, upstream_kept)
    still = tuple(
        _blocked_entry(engine, planned.final, fid, ok_elsewhere.get(fid), fid in wanted) for fid in blocked_final
    )
    for fid in wanted:
        if fid in impossible and engine.features[fid].get("workaround"):
            steps.append(patch_step(engine, fid))
    if impossible:
        names = ", ".join(impossible)
        prefix = "; ".join(_held_text(c, box) for c in sorted(held))
        error = (prefix + "; " if prefix else "") + (
            f"{names}: no release in the manifests makes {'it' if len(impossible) == 1 else 'them'} ok on this box "
            f"({'; '.join(first_failure(_after(engine, planned, f)) for f in impossible)})"
        )
    failing_checks = search.failing_after(target)
    if failing_checks is None:
        failing_checks = engine.checks_failing_on(planned.facts, planned.choices)
    if failing_out is not None and engine.box_failing_now is not None:
        failing_out[:] = [engine.box_failing_now]
    failing = tuple(_failing_entry(v) for v in failing_checks)
    plan = Plan(
        target=_target_dict(target),
        steps=tuple(steps),
        still_blocked=still,
        note=note,
        error=error,
        still_failing_checks=failing,
    )
    return plan, planned.facts


def _failing_entry(v: CheckVerdict) -> FailingCheck:
    """A stack check that fails after the plan: its failing reasons, the worst effect among them, its fix."""
    fails = tuple(r for r in v.get("reasons") or [] if r.get("result") == "fail")
    effects = [str(r.get("effect", "crash")) for r in fails]
    effect = worst_effect(effects, "crash")
    fix = v.get("fix")
    return FailingCheck(str(v.get("id")), str(v.get("title", v.get("id"))), effect, fails, fix or None)


def _after(engine: Engine, planned: Steps, fid: str) -> FeatureVerdict:
    """The feature on the facts after the plan: its verdict among the plan's final ones (judged on those facts,
    under the same choices) when the plan has steps; else judged on them (the final verdicts of a plan without a
    step are the caller's, which a facts file's implied versions may have changed)."""
    got = planned.final.get(fid) if planned.steps else None
    return got if got is not None else engine.verdict_on(planned.facts, fid)


def _default_target(
    ctx: Context, engine: Engine, box: Box, before: dict[str, FeatureVerdict], stacks: list[Stack]
) -> tuple[Stack | None, str | None]:
    """The newest stack that keeps every feature that is ok now ok (among the best REGRESSION_SEARCH, judged
    after the plan's own steps, the toolkit step included), else the newest; and, when that is not the
    newest, a note saying what the newest would block."""
    ok_now = [fid for fid, v in before.items() if v.get("status") == "ok"]
    newest_lost: list[str] = []
    for s in stacks[:REGRESSION_SEARCH]:
        after = plan_steps(ctx, engine, s, box, before).final
        lost = [f for f in ok_now if after.get(f, {}).get("status") != "ok"]
        if not lost:
            if s is stacks[0]:
                return s, None
            return s, (
                f"a newer stack ({stacks[0].describe()}) would block what is ok now ({', '.join(newest_lost)}); "
                "this plan keeps them: `stackcheck plan --want FEATURE` trades them for a wanted feature"
            )
        if s is stacks[0]:
            newest_lost = lost
    return (stacks[0] if stacks else None), None


def _wanted_target(
    engine: Engine,
    space: Space,
    restrict: Restrict,
    box: Box,
    stacks: list[Stack],
    wanted: list[str],
    ctx: Context | None = None,
    before: dict[str, FeatureVerdict] | None = None,
    search: _Search | None = None,
) -> tuple[Stack | None, list[str], str | None]:
    """The stack with the fewest changes (then the newest) that makes every wanted feature ok that some
    stack of the manifests makes ok (holds and pins aside); the wanted features none makes ok; and, when
    the holds or pins are what stands in the way, which one (the error).

    With `ctx` and `before`: among the first WANT_SEARCH such stacks, the first after whose plan no stack check
    fails with a crash (a wanted feature is no use on a box that does not start: the fiftieth fact-check sample's
    w2, `--want torch-symm-mem` on a B300 box answered with SGLang 0.5.5, whose sgl-kernel has no code for
    sm_103), else the first, as before (and where no wanted feature is reachable). `search`: see _crashes_after."""
    free = (
        stacks
        if not restrict.hold and not restrict.pins
        else sorted(enumerate_stacks(space, Restrict()), key=Stack.key)
    )
    # by (changes, key): `free` and `stacks` are in key order already, and a stable sort by the changes alone keeps
    # that order among equal changes, so the order is the same without building each key again
    by_changes = sorted(free, key=Stack.changes)
    impossible = [fid for fid in wanted if engine.never_ok(fid) or not engine.any_ok(by_changes, fid)]
    reachable = [f for f in wanted if f not in impossible]
    # (without holds or pins `free` is `stacks`: their order by changes is by_changes, not sorted again)
    first: Stack | None = None
    tried: set[tuple[str | None, ...]] = set()
    for s in by_changes if free is stacks else sorted(stacks, key=Stack.changes):
        if not all(engine.ok(s, f) for f in reachable):
            continue
        if ctx is None or before is None or not reachable:
            return s, impossible, None
        # (a stack that differs from one tried only in the driver branch is not planned again: the drivers offered
        # are those that run torch's build, and the same packages crash the same way under each)
        packages = (s.sglang.label, s.torch.label, s.kernel.label if s.kernel else None, s.flashinfer.label)
        if packages in tried:
            continue
        if not _crashes_after(ctx, engine, s, box, before, search):
            return s, impossible, None
        first = s if first is None else first
        tried.add(packages)
        if len(tried) >= WANT_SEARCH:
            break
    if first is not None:
        return first, impossible, None
    return None, impossible, (_blame(space, engine, restrict, box, reachable) if stacks else None)


class _Search:
    """What the lazy --want search (_crashes_after, with the memo) keeps from one candidate stack to the next: the
    checks failing after the plan to a stack where none crashes (by the stack's identity, the stack kept alive with
    them: the plan to that stack reads them there), and the check that crashed the last candidate that crashed (asked
    first of the next one: the search's candidates mostly crash on the same check; iperf34)."""

    __slots__ = ("crasher", "judged")
    judged: dict[int, tuple[Stack, list[CheckVerdict]]]
    crasher: list[Any]

    def __init__(self) -> None:
        self.judged = {}
        self.crasher = []

    def failing_after(self, target: Stack) -> list[CheckVerdict] | None:
        """The checks failing after the plan to `target`, where the search judged every one of them, else None."""
        kept = self.judged.get(id(target))
        return kept[1] if kept is not None and kept[0] is target else None


def _crashes_after(
    ctx: Context,
    engine: Engine,
    stack: Stack,
    box: Box,
    before: dict[str, FeatureVerdict],
    search: _Search | None = None,
) -> bool:
    """Whether a stack check fails with a crash (or a wrong output: REFUSED_EFFECTS, "crash" below stands for
    both) after the plan to `stack` (the plan's still_failing_checks).

    With the memo (iperf34), judged lazily: on the facts after the plan alone (steps.facts_after: the plan's facts and
    choices, without its steps and every feature's verdict after them), the check that crashed the last candidate
    first, then every check in order, stopping at the first that fails with a crash (whichever check crashes, the
    answer is the same); where none does, every check was judged, and `search` keeps the failing ones under the
    stack. Without the memo, the straightforward reading (the reference the tests compare with): the whole plan,
    then every check after it."""
    if not engine.memo:
        planned = plan_steps(ctx, engine, stack, box, before)
        failing = engine.checks_failing_on(planned.facts, planned.choices)
        return any(_failing_entry(v).effect in REFUSED_EFFECTS for v in failing)
    facts, choices = facts_after(ctx, stack)
    if search is not None and search.crasher:
        for v in engine.failing_checks(facts, choices, only=search.crasher):
            if _failing_entry(v).effect in REFUSED_EFFECTS:
                return True
    seen: list[CheckVerdict] = []
    for v in engine.failing_checks(facts, choices):
        if _failing_entry(v).effect in REFUSED_EFFECTS:
            if search is not None:
                search.crasher[:] = [c for c in ctx.manifests.checks if str(c.get("id")) == str(v.get("id"))][:1]
            return True
        seen.append(v)
    if search is not None:
        search.judged[id(stack)] = (stack, seen)
    return False


def _held_text(component: str, box: Box) -> str:
    if component == "driver":
        return f"--hold driver keeps driver {box.driver_version} (CUDA {box.driver_cuda})"
    return f"--hold {component} keeps {component} {box.installed_text(component) or 'not installed'}"


def parse_pins(pins: dict[str, str] | None, space: Space) -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    for raw, value in (pins or {}).items():
        comp = component_name(raw, "--to")
        text = str(value).strip()
        if comp == "driver":
            if numeric_tuple(text) is None:
                raise UsageError(f"--to driver=={text}: expected a driver branch or version such as 580 or 580.95.05")
            branch = text.split(".")[0]
            known = {str(b.get("branch")) for b in space.branches}
            if branch not in known and not (space.box.driver_version or "").startswith(branch + "."):
                raise UsageError(f"--to driver=={text}: the manifests know no driver branch {branch}")
            out[comp] = (text, None)
            continue
        if parse_version(text) is None:
            raise UsageError(f"--to {raw}=={text}: not a version")
        variant = variant_of(text)
        version = str(public(text))
        names = {"torch": ["torch"], "kernel": list(KERNEL_PACKAGES), "flashinfer": ["flashinfer-python"]}.get(
            comp, [comp]
        )
        if raw.strip().lower() in KERNEL_PACKAGES:
            names = [raw.strip().lower()]
        if not any(find_release(space.ctx, n, version) for n in names):
            raise UsageError(f"--to {raw}=={text}: the manifests know no {' or '.join(names)} {version}")
        out[comp] = (version, variant)
    return out


def _target_dict(stack: Stack) -> dict[str, str]:
    out = {"driver": stack.driver.version}
    out["torch"] = f"{stack.torch.version}+{stack.torch.variant}" if stack.torch.variant else stack.torch.version
    if stack.kernel is not None:
        out[stack.kernel.name] = stack.kernel.label
    out["flashinfer-python"] = stack.flashinfer.version
    out["sglang"] = stack.sglang.version
    return out


def _upstream_ok(
    space: Space,
    engine: Engine,
    restrict: Restrict,
    stacks: list[Stack],
    fids: list[str],
    kept: dict[str, str | None] | None = None,
) -> dict[str, str | None]:
    """For each feature blocked after the plan: a stack of the manifests (best one per SGLang release,
    ignoring holds and pins) where it is ok, described, or None. `kept`: the answers known already (read from
    it; those worked out here are added to it)."""
    kept = {} if kept is None else kept
    todo = [f for f in fids if f not in kept]
    if not todo:
        return {f: kept[f] for f in fids}
    pool = (
        stacks
        if not restrict.hold and not restrict.pins
        else sorted(enumerate_stacks(space, Restrict()), key=Stack.key)
    )
    best: dict[str, Stack] = {}
    for s in pool:
        best.setdefault(s.sglang.version, s)
    reps = list(best.values())
    for fid in todo:
        ok = None if engine.never_ok(fid) else next((s for s in reps if engine.ok(s, fid)), None)
        kept[fid] = ok.describe() if ok is not None else None
    return {f: kept[f] for f in fids}


def _blocked_entry(
    engine: Engine, verdicts: dict[str, FeatureVerdict], fid: str, ok_stack: str | None, wanted: bool
) -> Blocked:
    v = verdicts.get(fid)
    why = first_failure(v) if v is not None else "blocked"
    if ok_stack is not None:
        why = f"{why} (ok with {ok_stack}: stackcheck plan --want {fid})"
    workaround = workaround_for(engine.features[fid], v) if v is not None else None
    return Blocked(feature=fid, why=why, upstream_supported=ok_stack is not None, workaround=workaround or None)


def _no_stack_error(space: Space, restrict: Restrict, box: Box) -> str:
    """No consistent stack under the holds and pins: name the hold or pin that makes it so."""
    if box.ccs and not space.torch_choices():
        ccs = ", ".join(f"{a}.{b}" for a, b in box.ccs)
        return f"no torch build in the manifests has a target for GPU compute capability {ccs}"
    names = sorted(restrict.hold) + sorted(c for c in restrict.pins if c not in restrict.hold)
    for c in names:
        relaxed = Restrict(restrict.hold - {c}, {k: v for k, v in restrict.pins.items() if k != c})
        best = next(iter(sorted(enumerate_stacks(space, relaxed), key=Stack.key)), None)
        if best is None:
            continue
        label = _held_text(c, box) if c in restrict.hold else f"--to {c}=={restrict.pins[c][0]}"
        if c == "sglang" and c in restrict.pins and not same_version(box.sglang, restrict.pins[c][0]):
            pinned = [r for r in space.sglang if same_version(str(r.get("version")), restrict.pins[c][0])]
            refused = next((t for r in pinned if (t := not_installable(r, box)) is not None), None)
            label += f" ({refused})" if refused else ""
        problems = _problems_if_kept(space, best, c, box, restrict)
        return f"{label}; the closest consistent stack is {best.describe()}" + (
            f", and with {c} kept: {'; '.join(problems)}" if problems else ""
        )
    why: list[str] = []
    for _ in enumerate_stacks(space, restrict, why):
        break
    detail = why[0] if why else "no release combination satisfies the pins"
    prefix = "; ".join(_held_text(c, box) for c in sorted(restrict.hold))
    return (prefix + "; " if prefix else "") + f"no consistent stack in the manifests: {detail}"


def _problems_if_kept(space: Space, best: Stack, comp: str, box: Box, restrict: Restrict) -> list[str]:
    kept: Choice | None = None
    if comp == "driver":
        kept = next((d for d in space.driver_choices() if d.current), None)
    elif comp == "torch":
        kept = next((t for t in space.torch_choices() if allowed(t, restrict) and t.component == "torch"), None)
    elif comp == "sglang":
        kept = next(
            (
                Choice("sglang", "sglang", str(r.get("version")), release=r, current=True)
                for r in space.sglang
                if same_version(box.sglang, str(r.get("version")))
            ),
            None,
        )
    elif comp == "flashinfer":
        kept = next((f for f in space.flashinfer_choices(None) if f.current), None)
    elif comp == "kernel" and box.kernel is not None:
        rel = find_release(space.ctx, box.kernel[0], box.kernel[1]) or {}
        variant = box.kernel[2]
        cuda = cuda_from_tag(variant)
        kept = Choice("kernel", box.kernel[0], box.kernel[1], variant, cuda, current=True, release=rel)
    if kept is None:
        return []
    fields = {c: best.get(c) for c in COMPONENTS}
    fields[comp] = kept
    try:
        alt = Stack(**fields)  # type: ignore[arg-type]
    except TypeError:
        return []
    return violations(alt, box)


def _blame(space: Space, engine: Engine, restrict: Restrict, box: Box, wanted: list[str]) -> str:
    """Wanted features reachable without the holds/pins but not with them: which hold or pin, and why."""
    names = sorted(restrict.hold) + sorted(c for c in restrict.pins if c not in restrict.hold)
    for c in names:
        relaxed = Restrict(restrict.hold - {c}, {k: v for k, v in restrict.pins.items() if k != c})
        cands = sorted(enumerate_stacks(space, relaxed), key=lambda s: (s.changes(), s.key()))
        best = next((s for s in cands if all(engine.ok(s, f) for f in wanted)), None)
        if best is None:
            continue
        label = _held_text(c, box) if c in restrict.hold else f"--to {c}=={restrict.pins[c][0]}"
        problems = _problems_if_kept(space, best, c, box, restrict)
        return f"{label}; {', '.join(wanted)} needs a stack such as {best.describe()}" + (
            f", but {'; '.join(problems)}" if problems else ""
        )
    prefix = "; ".join(
        [_held_text(c, box) for c in sorted(restrict.hold)]
        + [f"--to {c}=={v[0]}" for c, v in sorted(restrict.pins.items())]
    )
    return f"{prefix}; no stack allowed by these makes {', '.join(wanted)} ok together"
