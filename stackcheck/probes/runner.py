"""Run probes in waves under one time budget, each in a daemon thread, and merge their facts.

A probe declares the facts sections it produces (`sections`) and the ones it reads (`needs`). The runner
starts every probe whose needs are produced by no other selected probe at once (the first wave: NVML, the
system, the target's Python), and starts each later probe as soon as the probes that produce its needs are
done (finished, failed or timed out): the package probe waits for the target's sys.path, the gate tables
and the binaries wait for the package locations, but none of them waits for a slow driver. Everything runs
under the single `--timeout` budget: a probe gets min(its own timeout_s, what is left of the budget), and
`ctx.deadline` tells it when the budget ends so that a long reader (binaries) can stop cleanly.

Daemon threads (not a ThreadPoolExecutor, which joins its workers at interpreter exit) let a hung probe be
abandoned: the audit returns within its budget and the process can exit.
"""

from __future__ import annotations

import threading
import time
from _queue import Empty, SimpleQueue  # (the C queue: `queue` would import heapq and its pure-Python classes)
from collections.abc import Mapping, Sequence

from stackcheck.errors import UsageError
from stackcheck.lean_typing import TYPE_CHECKING, cast
from stackcheck.probes import LazyProbe, lazy_registry
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, one_line

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.facts.model import Facts, ProbeOutcome


class _Slot:
    def __init__(self, kind: type[Probe] | LazyProbe) -> None:
        self.kind = kind
        self._probe: Probe | None = None
        self.result: ProbeResult | None = None
        self.error: str | None = None
        self.started: float | None = None
        self.deadline = 0.0
        self.limit = 0.0
        self.finished: float | None = None
        self.outcome: ProbeOutcome | None = None
        self.facts: dict[str, Any] = {}
        self.deps: set[int] = set()
        self.prepare_error: str | None = None  # (what Probe.prepare raised, for a debugger: nothing reports it)

    @property
    def name(self) -> str:
        """The probe's name, known without its module (a module that fails to import still has one)."""
        return self.kind.name

    def failure_facts(self, reason: str) -> dict[str, Any]:
        """The probe's failure facts (Probe.failure_facts); from the table's sections when its module never loaded."""
        if self._probe is not None:
            return self._probe.failure_facts(reason)
        return {s: [] if s in Probe.list_sections else {"error": reason} for s in self.kind.sections}

    @property
    def probe(self) -> Probe:
        """The probe itself, its module imported on first use (in the main thread, when the probe starts)."""
        if self._probe is None:
            kind = self.kind
            self._probe = (kind.load() if isinstance(kind, LazyProbe) else kind)()
        return self._probe

    def prepare(self, ctx: ProbeContext) -> None:
        try:
            self.probe.prepare(ctx)
        except Exception as exc:  # never the audit's failure: the probe's run does the work itself
            self.prepare_error = one_line(exc)

    def run(self, ctx: ProbeContext, done: SimpleQueue[_Slot]) -> None:
        try:
            self.result = self.probe.run(ctx)
        except BaseException as exc:  # a probe must never take the audit down
            self.error = one_line(exc)
        finally:
            self.finished = time.monotonic()
            done.put(self)


def waves(names: list[str], registry: Mapping[str, type[Probe] | LazyProbe]) -> list[list[str]]:
    """The probes grouped by the wave they start in when none is slow (for documentation and tests):
    wave 0 needs nothing another selected probe produces; wave n needs something from wave n-1."""
    deps = _dependencies([registry[n] for n in names])
    level: dict[int, int] = {}

    def depth(i: int) -> int:
        if i not in level:
            level[i] = 1 + max((depth(d) for d in deps[i]), default=-1)
        return level[i]

    out: dict[int, list[str]] = {}
    for i, name in enumerate(names):
        out.setdefault(depth(i), []).append(name)
    return [out[k] for k in sorted(out)]


def _dependencies(probes: Sequence[type[Probe] | LazyProbe]) -> list[set[int]]:
    producers: dict[str, list[int]] = {}
    for i, cls in enumerate(probes):
        for section in cls.sections:
            producers.setdefault(section, []).append(i)
    deps = [{j for need in cls.needs for j in producers.get(need, []) if j != i} for i, cls in enumerate(probes)]
    # a cycle would leave probes waiting for ever: refuse it (a registry bug, caught by the tests)
    state: dict[int, int] = {}

    def visit(i: int) -> None:
        if state.get(i) == 2:
            return
        if state.get(i) == 1:
            raise ValueError(f"probe {probes[i].name} depends on itself through its needs")
        state[i] = 1
        for d in deps[i]:
            visit(d)
        state[i] = 2

    for i in range(len(probes)):
        visit(i)
    return deps


def _start_order(deps: list[set[int]]) -> list[tuple[int, int]]:
    """Per probe, its place among the probes ready at the same time: more probes waiting on it (directly or
    through others) first, then the order given."""
    waiting_on: list[set[int]] = [set() for _ in deps]
    for i, needs in enumerate(deps):
        for j in needs:
            waiting_on[j].add(i)
    closure: dict[int, set[int]] = {}

    def all_waiting(i: int) -> set[int]:
        if i not in closure:
            closure[i] = set()  # (no cycles: _dependencies refused them)
            for k in waiting_on[i]:
                closure[i] |= {k} | all_waiting(k)
        return closure[i]

    return [(-len(all_waiting(i)), i) for i in range(len(deps))]


def run_probes(
    names: list[str],
    ctx: ProbeContext,
    budget_s: float = 8.0,
    registry: Mapping[str, type[Probe] | LazyProbe] | None = None,
) -> tuple[Facts, list[ProbeOutcome]]:
    """Run the named probes in waves; return the merged facts and one outcome per probe, in `names` order.

    A probe that raises is "failed" with the exception's one-line text; one that overruns is "timeout";
    one that could not start before the budget ended is "timeout" too. Either way the sections it should
    have set are present with "error". Facts are merged in `names` order, whatever order probes end in.
    """
    if registry is None:  # each probe's module is imported when the probe starts (the first wave's first)
        registry = lazy_registry()
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise UsageError(f"unknown probe {unknown[0]!r}; known probes: {', '.join(sorted(registry))}")

    slots = [_Slot(registry[name]) for name in names]
    for slot, deps in zip(slots, _dependencies([s.kind for s in slots]), strict=True):
        slot.deps = deps
    # among the probes ready together, those that more probes wait on start first (the packages before the
    # toolkits: five probes need the packages, one the toolkits), so the next wave is not held behind a thread
    # that nothing waits for; the facts still merge in `names` order
    # (and before them the probe that starts first: NVML, which only waits for the forked reader's answer)
    rank = [
        (not slot.kind.starts_first, *order)
        for slot, order in zip(slots, _start_order([s.deps for s in slots]), strict=True)
    ]
    start = time.monotonic()
    end = start + budget_s
    done: SimpleQueue[_Slot] = SimpleQueue()
    so_far: dict[str, Any] = dict(ctx.facts)  # sections of finished probes, handed to the probes that need them
    waiting = set(range(len(slots)))
    running: set[int] = set()
    closed: set[int] = set()

    def close(i: int, outcome: ProbeOutcome, facts: dict[str, Any]) -> None:
        slot = slots[i]
        slot.outcome, slot.facts = outcome, facts
        running.discard(i)
        closed.add(i)
        so_far.update(facts)

    def start_ready() -> None:
        for i in sorted(waiting, key=rank.__getitem__):
            slot = slots[i]
            if not slot.deps <= closed:
                continue
            waiting.discard(i)
            kind = slot.kind
            if isinstance(kind, LazyProbe) and kind.image_only and not callable(getattr(ctx.view, "image_facts", None)):
                # what its run() answers on a view that is not an image's, without its module or a thread
                close(i, _outcome(slot.name, "skipped", kind.image_only, 0.0), {})
                continue
            try:  # (its module is imported here: one that fails to import is a failed probe, never a traceback)
                slot.probe  # noqa: B018
            except Exception as exc:
                reason = f"probe could not be loaded: {one_line(exc)}"
                close(i, _outcome(slot.name, "failed", reason, 0.0), slot.failure_facts(reason))
                continue
            now = time.monotonic()
            slot.limit = max(0.0, min(slot.probe.timeout_s, end - now))
            if slot.limit <= 0.0:
                reason = f"no time left in the {budget_s:g}s budget to start this probe"
                close(i, _outcome(slot.name, "timeout", reason, 0.0), slot.failure_facts(reason))
                continue
            slot.started = now
            slot.deadline = now + slot.limit
            probe_ctx = ctx.replace(facts=dict(so_far), deadline=slot.deadline)
            thread = threading.Thread(
                target=slot.run, args=(probe_ctx, done), name=f"probe-{slot.probe.name}", daemon=True
            )
            running.add(i)
            thread.start()

    start_ready()
    # the probes that start later but have slow work needing nothing (the toolkits probe's `nvcc --version`) start it
    # now, beside the first wave; a prepare that fails leaves the work to the probe's run
    for i in sorted(waiting, key=rank.__getitem__):
        if slots[i].kind.prepares:
            slots[i].prepare(ctx)
    while running or waiting:
        if not running:  # nothing can start and nothing runs: only a dependency cycle gets here
            break
        next_deadline = min(slots[i].deadline for i in running)
        try:
            finished = done.get(timeout=max(0.0, next_deadline - time.monotonic()))
        except Empty:
            finished = None
        if finished is not None:
            i = slots.index(finished)
            if i in running:  # a probe that ends after its timeout was already closed
                close(i, *_finish(finished))
        now = time.monotonic()
        for i in sorted(running):
            slot = slots[i]
            if slot.finished is None and now >= slot.deadline:
                reason = f"probe timed out after {round(slot.limit, 2):g}s"
                close(
                    i,
                    _outcome(slot.name, "timeout", reason, _ms(slot.limit * 1000)),
                    slot.failure_facts(reason),
                )
        start_ready()

    merged: dict[str, Any] = {}
    outcomes: list[ProbeOutcome] = []
    for slot in slots:
        if slot.outcome is None:  # never started (a dependency cycle): say so rather than lose it
            reason = "probe never started: its needs are never produced"
            slot.outcome = _outcome(slot.name, "failed", reason, 0.0)
            slot.facts = slot.failure_facts(reason)
        merged.update(slot.facts)
        outcomes.append(slot.outcome)
    facts_out = cast("Facts", merged)
    mark_torch_toolkit(facts_out)
    return facts_out, outcomes


def _finish(slot: _Slot) -> tuple[ProbeOutcome, dict[str, Any]]:
    name = slot.name
    duration = _ms(((slot.finished or time.monotonic()) - (slot.started or 0.0)) * 1000)
    if slot.result is None:
        reason = slot.error or "probe returned nothing"
        return _outcome(name, "failed", reason, duration), slot.failure_facts(reason)
    result = slot.result
    facts = dict(result.facts)
    if result.status == "failed":
        for section, value in slot.failure_facts(result.reason or "probe failed").items():
            facts.setdefault(section, value)
    return _outcome(name, result.status, result.reason, duration), facts


def _outcome(name: str, status: Any, reason: str | None, duration_ms: float) -> ProbeOutcome:
    return {"name": name, "status": status, "reason": reason, "duration_ms": duration_ms}


def _ms(value: float) -> float:
    return round(value, 1)


def mark_torch_toolkit(facts: Facts) -> None:
    """Set `active_for_torch` on the pip CUDA toolkit whose major version matches torch's CUDA build.

    The toolkits probe lists pip runtimes before other pip toolkit wheels, so the first match is the
    nvidia-cuda-runtime wheel when it is installed. Runs after the merge: torch's CUDA comes from the
    packages probe.
    """
    toolkits = facts.get("cuda_toolkits")
    packages = facts.get("packages")
    torch = packages.get("torch") if isinstance(packages, dict) else None
    if not isinstance(toolkits, list):
        return
    cuda = torch.get("cuda") if isinstance(torch, dict) else None
    major = cuda.split(".")[0] if isinstance(cuda, str) else None
    chosen = False
    for tk in toolkits:
        if not isinstance(tk, dict) or "path" not in tk:
            continue
        version = tk.get("version")
        match = (
            not chosen
            and major is not None
            and tk.get("source") == "pip"
            and isinstance(version, str)
            and version.split(".")[0] == major
        )
        tk["active_for_torch"] = match
        chosen = chosen or match
