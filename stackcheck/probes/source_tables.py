"""Post-probe: read the gate tables (manifests/gates.json) out of the installed packages' sources.

It runs after the packages probe, on the merged facts: each gate's package location comes from
facts["packages"][NAME]["location"]. The result is the facts section `source_tables`, keyed by gate id,
each value a `GateReading` (see stackcheck.deep.sourcetables). Sources are parsed with `ast`, never
imported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from stackcheck.deep.sourcetables import GateReading, normalise_name, read_source_tables

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


def probe_source_tables(facts: Mapping[str, Any], gates: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The `source_tables` facts section: gate id → GateReading, for gates whose package is installed.

    When the facts carry no packages section the result is `{"error": reason}` (nothing could be read).
    """
    if not isinstance(facts.get("packages"), Mapping):
        return {"error": "no packages facts: the package locations are unknown"}
    readings: dict[str, GateReading] = read_source_tables(gates, package_locations(facts))
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
