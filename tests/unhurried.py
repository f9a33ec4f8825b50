"""Probes without their time limits, for tests that check what a probe reads rather than how fast.

A probe's own `timeout_s` (5 s for the gate tables, 8 s for derive) is the audit's budget on a real box. A test
that runs the probes for their facts must not depend on it: on this suite's 2-core CI box under load (a run at
nice 10 beside six others gets a few per cent of a core) the gate-table probe, 0.02 s when quiet, overran its 5 s
and the newest-release test then judged torch-symm-mem from no table at all (stop 35). The budget and the
timeouts themselves are tested with fake probes in tests/probes/test_probe_runner.py.
"""

from __future__ import annotations

from typing import ClassVar

from stackcheck.probes import PROBES
from stackcheck.probes.interface import Probe

#: Long enough that only a hang reaches it.
LIMIT_S = 600.0


def unhurried(names: list[str]) -> dict[str, type[Probe]]:
    """A registry for run_probes(..., registry=...): the named probes, each with LIMIT_S as its timeout."""

    def slow(cls: type[Probe]) -> type[Probe]:
        class Unhurried(cls):  # type: ignore[valid-type,misc]
            timeout_s: ClassVar[float] = LIMIT_S

        Unhurried.__name__ = Unhurried.__qualname__ = f"Unhurried{cls.__name__}"
        return Unhurried

    return {name: slow(PROBES[name]) for name in names}
