"""The gate tables (manifests/gates.json) read out of the installed packages' sources: facts.source_tables.

It needs the packages probe's facts: each gate's package location comes from
facts["packages"][NAME]["location"], a box path read through the probe's filesystem view. The result is
keyed by gate id, each value a `TableReading` (see stackcheck.readers.sourcetables). Sources are parsed with
`ast`, never imported.

Two ways in: the plain function `probe_source_tables(facts, gates, ctx=None)`, and `SourceTablesProbe`, the
runner's probe (the gates come from `ctx.gates`, the manifests the command loaded; the shipped ones when
none is given).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult

if TYPE_CHECKING:
    from typing import Any, ClassVar, Literal

    from stackcheck.readers.sourcetables import TableReading

NAME = "source_tables"


def package_locations(facts: Mapping[str, Any]) -> dict[str, str]:
    """Normalised distribution name → location, for every package the facts say is installed."""
    from stackcheck.readers.sourcetables import normalise_name

    packages = facts.get("packages")
    if not isinstance(packages, Mapping):
        return {}
    out: dict[str, str] = {}
    for name, pkg in packages.items():
        if not isinstance(name, str) or not isinstance(pkg, Mapping):
            continue
        location = pkg.get("location")
        if pkg.get("installed") is True and isinstance(location, str) and location:
            out[normalise_name(name)] = location
    return out


def probe_source_tables(
    facts: Mapping[str, Any],
    gates: Sequence[Mapping[str, Any]],
    ctx: ProbeContext | None = None,
) -> dict[str, Any]:
    """The `source_tables` facts section: gate id → TableReading, for gates whose package is installed.

    When the facts carry no packages section the result is `{"error": reason}` (nothing could be read).
    With a `ctx`, package locations are box paths read through `ctx.fs` (tests fake a root).
    """
    from stackcheck.readers.sourcetables import read_source_tables

    packages = facts.get("packages")
    if not isinstance(packages, Mapping):
        return {"error": "no packages facts: the package locations are unknown"}
    entries = [p for p in packages.values() if isinstance(p, Mapping)]
    if entries and all(isinstance(p.get("error"), str) and "installed" not in p for p in entries):
        return {"error": f"the packages could not be read: {entries[0]['error']}"}
    readings: dict[str, TableReading] = read_source_tables(gates, package_locations(facts), ctx.fs if ctx else None)
    return dict(readings)


def outcome(section: Mapping[str, Any]) -> tuple[Literal["ok", "partial", "failed"], str | None]:
    """The probe status for the report's probes[] entry: partial when some gate could not be read."""
    if isinstance(section.get("error"), str):
        return "failed", str(section["error"])
    failed = sorted(
        gate_id
        for gate_id, reading in section.items()
        if isinstance(reading, Mapping) and reading.get("status") == "error"
    )
    if failed:
        return "partial", f"could not read {len(failed)} gate table(s): {', '.join(failed)}"
    return "ok", None


class SourceTablesProbe(Probe):
    """The gate tables in SGLang's and FlashInfer's installed sources (always run)."""

    name: ClassVar[str] = NAME
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ("source_tables",)
    needs: ClassVar[tuple[str, ...]] = ("packages",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        if ctx.gates is not None:
            gates = ctx.gates()
        else:
            from stackcheck.knowledge.loader import load

            gates = load([], env={}).gates
        section = probe_source_tables(ctx.facts, gates, ctx)
        status, reason = outcome(section)
        return ProbeResult(facts={"source_tables": section}, status=status, reason=reason)
