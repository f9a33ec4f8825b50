"""The typed shapes of the audit report (schemas/report.schema.json), for mypy only: the builders
(stackcheck.documents.report, stackcheck.assembly.pipeline, stackcheck.facts.implied) write these keys and
the report's renderers (stackcheck.render: text, markdown, prometheus, nfd, json) read them, so that a key
is followed from where it is written to where it is read.

Imported under TYPE_CHECKING only (tests/test_startup.py asserts an audit never loads it): a report is the
plain dict the builders make, nothing converts it at run time. A report read back from a file (fleet, diff,
--host-facts) is user input and is not described by these types: its readers keep their checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # the facts' shapes are themselves type-level only (stackcheck.facts.model)
    from stackcheck.facts.model import Facts, ProbeOutcome
    from stackcheck.plan.model import PlanJSON
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict


class Tool(TypedDict):
    name: str
    version: str


class ManifestsInfo(TypedDict):
    data_version: str
    date: str


class Host(TypedDict, total=False):
    hostname: str
    collected_at: str  # ISO 8601, UTC
    facts_file: str  # a facts document without a host: the file it came from


class Summary(TypedDict):
    features: dict[str, int]  # status -> how many features have it
    checks: dict[str, int]  # status -> how many checks have it
    consistent: bool  # no check failed
    blocked: list[str]  # the ids of the blocked features


# "from" is a keyword: the functional form
class ImpliedFrom(TypedDict):
    package: str
    version: str
    implied: bool


ImpliedRecord = TypedDict(
    "ImpliedRecord",
    {
        "fact": str,
        "value": str,
        "installed_implied": bool,
        "from": ImpliedFrom,
        "pin": str,
        "source": Any,  # sources.py's source_refs
        "text": str,
    },
)


class _ReportBase(TypedDict):
    schema_version: int  # stackcheck.facts.model.SCHEMA_VERSION


class Report(_ReportBase, total=False):
    """The report document: `facts` always (the schema requires it; optional here only because the builder
    writes it after `host`, the documented key order); `audit` adds features, checks, summary and (unless
    --no-plan) plan; `implied` only from `audit --facts` when the facts file leaves out versions its releases
    pin."""

    facts: Facts
    tool: Tool
    manifests: ManifestsInfo
    host: Host | dict[str, Any]  # Host when built here; a saved report's host block as read (only an object)
    probes: list[ProbeOutcome]
    features: list[FeatureVerdict]
    checks: list[CheckVerdict]
    summary: Summary
    plan: PlanJSON
    implied: list[ImpliedRecord]
