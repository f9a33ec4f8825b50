"""The typed shapes of the audit report (schemas/report.schema.json) and of the fleet summary
(schemas/fleet.schema.json, at the end), for mypy only. The report's builders
(stackcheck.documents.report, stackcheck.assembly.pipeline, stackcheck.facts.implied) write these keys and
the report's renderers (stackcheck.render: text, markdown, prometheus, nfd, json) read them, so that a key
is followed from where it is written to where it is read.

Imported under TYPE_CHECKING only (tests/test_startup.py asserts an audit never loads it): a report is the
plain dict the builders make, nothing converts it at run time. A report read back from a file (fleet, diff,
--host-facts) is user input and is not described by these types: its readers keep their checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:  # the facts' shapes are themselves type-level only (stackcheck.facts.model)
    from stackcheck.facts.model import Facts, ProbeOutcome
    from stackcheck.plan.json_shapes import PlanJSON
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


# ---- the fleet summary (schemas/fleet.schema.json) -------------------------------------------------------
# Built by stackcheck.documents.fleet.summarise from the records it keeps of each saved report (read there,
# with their checks: a saved report is user input); read by stackcheck.render.fleet and the CSV rows.


class FleetInputs(TypedDict):
    documents: int  # every document read, good or bad
    reports: int  # documents - bad
    hosts: int
    duplicates_dropped: int
    bad: int


class FleetGpuModel(TypedDict):
    model: str  # the GPU names of a host joined by " + ", "no GPU" or "GPUs unknown"
    compute_capability: str | None  # "9.0", "9.0+8.9"; None when the GPUs are unknown
    hosts: int
    gpus: int


#: stackcheck.documents.fleet.STACK_FIELDS: the components that make a host's stack
StackField = Literal["driver", "torch", "kernels", "flashinfer", "sglang"]


class FleetStack(TypedDict):
    """One value per stackcheck.documents.fleet.STACK_FIELDS, in that order: a version, None when absent."""

    driver: str | None
    torch: str | None
    kernels: str | None  # "sgl-kernel 0.3.9, ..." for every kernel package installed
    flashinfer: str | None
    sglang: str | None


class FleetStackRow(TypedDict):
    model: str
    compute_capability: str | None
    driver: str | None
    torch: str | None
    kernels: str | None
    flashinfer: str | None
    sglang: str | None
    hosts: int
    common: bool  # the most common stack of its GPU model


class FleetFeature(TypedDict):
    feature: str
    hosts: dict[str, int]  # status -> hosts, in FEATURE_STATUSES order
    blocked_effects: dict[str, int]  # effect of the blocked -> hosts


class FleetCheck(TypedDict):
    check: str
    hosts: dict[str, int]  # status -> hosts, in CHECK_STATUSES order


class FleetDrift(TypedDict):
    model: str
    compute_capability: str | None
    stack: FleetStack
    common_stack: FleetStack
    differs_in: list[StackField]  # the STACK_FIELDS where stack and common_stack differ
    count: int
    hosts: list[str]


# "from" is a keyword: the functional form
FleetStep = TypedDict("FleetStep", {"component": str, "from": str | None, "to": str})


class FleetWave(TypedDict):
    wave: int  # 1 for the largest group
    steps: list[FleetStep]
    count: int
    hosts: list[str]


class FleetInput(TypedDict):
    input: str  # path, or path:line in a JSON Lines file
    collected_at: str | None


class FleetDuplicate(TypedDict):
    hostname: str
    kept: FleetInput
    dropped: list[FleetInput]


class FleetBad(TypedDict):
    input: str
    reason: str


class FleetSince(TypedDict):
    inputs: list[str]  # the --since paths
    hosts: int
    bad: int


class _HostChangeBase(TypedDict):
    hostname: str
    before: str | None  # collected_at in the older collection
    after: str | None
    features: list[dict[str, Any]]  # stackcheck.documents.diff.verdict_changes (the diff document's rows)
    regressions: list[str]


class HostChange(_HostChangeBase, total=False):
    only_in: str  # "before" (the host went) or "after" (it came); its features are not listed


class _FleetSummaryBase(TypedDict):
    schema_version: int  # FLEET_SCHEMA_VERSION
    fleet_schema_version: int  # the same, under the name readers of 1 know
    tool: Tool
    inputs: FleetInputs
    gpu_models: list[FleetGpuModel]
    stacks: list[FleetStackRow]
    features: list[FleetFeature]
    checks: list[FleetCheck]
    consistent: dict[str, int]  # "true" / "false" / "unknown" -> hosts
    drift: list[FleetDrift]
    waves: list[FleetWave]
    duplicates: list[FleetDuplicate]
    bad: list[FleetBad]


class FleetSummary(_FleetSummaryBase, total=False):
    """The `stackcheck fleet --format json` document; `since` and `changes` only with --since."""

    since: FleetSince
    changes: list[HostChange]
