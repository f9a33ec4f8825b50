"""Post-probe: read the gate tables (manifests/gates.json) out of the installed packages' sources.

It runs after the packages probe, on the merged facts: each gate's package location comes from
facts["packages"][NAME]["location"]. The result is the facts section `source_tables`, keyed by gate id,
each value a `GateReading` (see stackcheck.deep.sourcetables). Sources are parsed with `ast`, never
imported.

Two ways in: the plain function `probe_source_tables(facts, gates)`, and `SourceTablesProbe(facts, gates)`,
a `Probe` for the runner's second pass (it needs the packages facts, so it is built after the first pass
and is not in the first-pass registry). The probe maps the facts' box paths through `ctx.rooted`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

from stackcheck.deep.sourcetables import GateReading, normalise_name, read_source_tables
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult

NAME = "source_tables"


def package_locations(facts: Mapping[str, Any]) -> dict[str, str]:
    """Normalised distribution name → location, for every package the facts say is installed."""
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
    """The `source_tables` facts section: gate id → GateReading, for gates whose package is installed.

    When the facts carry no packages section the result is `{"error": reason}` (nothing could be read).
    With a `ctx`, package locations are box paths seen through `ctx.rooted` (tests fake a root).
    """
    if not isinstance(facts.get("packages"), Mapping):
        return {"error": "no packages facts: the package locations are unknown"}
    locations = package_locations(facts)
    if ctx is not None:
        locations = {name: str(ctx.rooted(loc)) for name, loc in locations.items()}
    readings: dict[str, GateReading] = read_source_tables(gates, locations)
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
    """The post-probe: built with the merged first-pass facts and the gates of the manifests."""

    name: ClassVar[str] = NAME
    timeout_s: ClassVar[float] = 10.0
    sections: ClassVar[tuple[str, ...]] = ("source_tables",)

    def __init__(self, facts: Mapping[str, Any], gates: Sequence[Mapping[str, Any]]) -> None:
        self.facts = facts
        self.gates = gates

    def run(self, ctx: ProbeContext) -> ProbeResult:
        section = probe_source_tables(self.facts, self.gates, ctx)
        status, reason = outcome(section)
        return ProbeResult(facts={"source_tables": section}, status=status, reason=reason)
