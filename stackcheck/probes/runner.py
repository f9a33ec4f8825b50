"""Run probes concurrently, each in a daemon thread with its own timeout, and merge their facts.

Daemon threads (not a ThreadPoolExecutor, which joins its workers at interpreter exit) let a hung probe be
abandoned: the audit returns within its budget and the process can exit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, cast

from stackcheck.errors import UsageError
from stackcheck.facts import Facts, ProbeOutcome
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, one_line


class _Slot:
    def __init__(self, probe: Probe) -> None:
        self.probe = probe
        self.result: ProbeResult | None = None
        self.error: str | None = None
        self.started = 0.0
        self.finished: float | None = None
        self.done = threading.Event()

    def run(self, ctx: ProbeContext) -> None:
        try:
            self.result = self.probe.run(ctx)
        except BaseException as exc:  # a probe must never take the audit down
            self.error = one_line(exc)
        finally:
            self.finished = time.monotonic()
            self.done.set()


def run_probes(
    names: list[str],
    ctx: ProbeContext,
    budget_s: float = 8.0,
    registry: Mapping[str, type[Probe]] | None = None,
) -> tuple[Facts, list[ProbeOutcome]]:
    """Run the named probes concurrently; return the merged facts and one outcome per probe, in order.

    Each probe gets min(its timeout_s, budget_s). A probe that raises is "failed" with the exception's
    one-line text; one that overruns is "timeout". Either way the sections it should have set are present
    with "error".
    """
    if registry is None:
        from stackcheck.probes import PROBES

        registry = PROBES
    unknown = [n for n in names if n not in registry]
    if unknown:
        raise UsageError(f"unknown probe {unknown[0]!r}; known probes: {', '.join(sorted(registry))}")

    slots = [_Slot(registry[name]()) for name in names]
    start = time.monotonic()
    for slot in slots:
        slot.started = time.monotonic()
        thread = threading.Thread(target=slot.run, args=(ctx,), name=f"probe-{slot.probe.name}", daemon=True)
        thread.start()

    for slot in slots:
        deadline = start + min(slot.probe.timeout_s, budget_s)
        slot.done.wait(max(0.0, deadline - time.monotonic()))

    merged: dict[str, Any] = {}
    outcomes: list[ProbeOutcome] = []
    for slot in slots:
        probe = slot.probe
        limit = min(probe.timeout_s, budget_s)
        if not slot.done.is_set():
            reason = f"probe timed out after {limit:g}s"
            merged.update(probe.failure_facts(reason))
            outcomes.append(
                {"name": probe.name, "status": "timeout", "reason": reason, "duration_ms": _ms(limit * 1000)}
            )
            continue
        duration = _ms(((slot.finished or time.monotonic()) - slot.started) * 1000)
        if slot.result is None:
            reason = slot.error or "probe returned nothing"
            merged.update(probe.failure_facts(reason))
            outcomes.append({"name": probe.name, "status": "failed", "reason": reason, "duration_ms": duration})
            continue
        result = slot.result
        facts = dict(result.facts)
        if result.status == "failed":
            for section, value in probe.failure_facts(result.reason or "probe failed").items():
                facts.setdefault(section, value)
        merged.update(facts)
        outcomes.append({"name": probe.name, "status": result.status, "reason": result.reason, "duration_ms": duration})
    facts_out = cast(Facts, merged)
    mark_torch_toolkit(facts_out)
    return facts_out, outcomes


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
