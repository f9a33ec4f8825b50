"""The report: a versioned JSON document (schemas/report.schema.json) that fleet tooling parses.

Stable keys: schema_version, tool{name,version}, manifests{data_version,date}, host{hostname,collected_at},
facts, probes[], and for `audit` also features[], checks[], plan{steps[],still_blocked[]}, summary."""

from __future__ import annotations

import math
import os

from stackcheck import __version__
from stackcheck.facts.model import SCHEMA_VERSION
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Final

    from stackcheck.documents.types import Host, Report, Summary
    from stackcheck.facts.model import Facts, ProbeOutcome
    from stackcheck.knowledge.loader import Manifests
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict

#: every status of a feature verdict (stackcheck.verdicts.engine.Status), in the order the fleet and the
#: Prometheus series list them
FEATURE_STATUSES: Final = ("ok", "blocked", "unknown", "not-applicable")
#: every status of a stack check (stackcheck.verdicts.engine.CheckStatus), in the same sense
CHECK_STATUSES: Final = ("ok", "failed", "warning", "unknown", "skipped")


def now_utc() -> str:
    """Now, UTC, to the second: 2026-11-29T00:00:00Z (time.strftime: datetime is not imported to say it)."""
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def parse_timestamp(text: Any) -> float:
    """A report's `host.collected_at` (ISO 8601) as seconds since the epoch; -inf when absent or unreadable
    (it then loses every tie)."""
    if not isinstance(text, str) or not text:
        return -math.inf
    t = text.strip()
    if t.endswith(("Z", "z")):
        t = t[:-1] + "+00:00"
    from datetime import datetime, timezone

    try:
        dt = datetime.fromisoformat(t)
    except ValueError:
        return -math.inf
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def host_block(hostname: str | None = None) -> Host:
    try:
        name = hostname or os.uname().nodename  # os.uname: importing socket costs ~14 ms of start-up
    except (OSError, AttributeError):
        name = "unknown"
    return {"hostname": name, "collected_at": now_utc()}


def base_report(
    facts: Facts,
    probes: list[ProbeOutcome],
    manifests: Manifests | None,
    host: Host | dict[str, Any] | None = None,
) -> Report:
    report: Report = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "stackcheck", "version": __version__},
    }
    if manifests is not None:
        report["manifests"] = {"data_version": manifests.data_version, "date": manifests.date}
    report["host"] = host or host_block()
    report["facts"] = facts
    report["probes"] = probes
    return report


def summarize(features: Sequence[FeatureVerdict], checks: Sequence[CheckVerdict]) -> Summary:
    counts: dict[str, int] = {}
    for f in features:
        counts[f["status"]] = counts.get(f["status"], 0) + 1
    check_counts: dict[str, int] = {}
    for c in checks:
        check_counts[c["status"]] = check_counts.get(c["status"], 0) + 1
    return {
        "features": counts,
        "checks": check_counts,
        "consistent": check_counts.get("failed", 0) == 0,
        "blocked": [f["id"] for f in features if f["status"] == "blocked"],
    }
