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
    from stackcheck.probes.packages import normalise as normalise_name  # (the probe it needs has imported it)

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
    packages = facts.get("packages")
    if not isinstance(packages, Mapping):
        return {"error": "no packages facts: the package locations are unknown"}
    entries = [p for p in packages.values() if isinstance(p, Mapping)]
    if entries and all(isinstance(p.get("error"), str) and "installed" not in p for p in entries):
        return {"error": f"the packages could not be read: {entries[0]['error']}"}
    locations = package_locations(facts)
    if not _any_to_read(gates, locations):
        return {}  # (issue 21: the reader's module is not imported on a box without SGLang or a kernel package)
    from stackcheck.readers.sourcetables import read_source_tables

    readings: dict[str, TableReading] = read_source_tables(gates, locations, ctx.fs if ctx else None)
    return dict(readings)


def _any_to_read(gates: Sequence[Mapping[str, Any]], locations: Mapping[str, str]) -> bool:
    """Whether read_source_tables would answer for some gate: one with a probe whose package is installed, or
    that names no package (an error reading). False: its answer is {}."""
    from stackcheck.probes.packages import normalise

    for gate in gates:
        if not isinstance(gate.get("id"), str) or not isinstance(gate.get("probe"), Mapping):
            continue
        package = gate.get("package")
        if not isinstance(package, str) or not package or normalise(package) in locations:
            return True
    return False


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
