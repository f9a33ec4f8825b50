"""The JSON shapes of a plan (schemas/report.schema.json $defs/plan): what the values of plan/model.py give
from `to_json`, for mypy to follow into the report. Types only: the plan's modules import them under
TYPE_CHECKING (so the planner's path does not import typing for them);
tests/documents/test_types_match_schemas.py reads them to compare their keys with the schema's."""

from __future__ import annotations

from typing import Any, TypedDict


class AlternativeJSON(TypedDict):
    note: str
    commands: list[str]


# "from" is a keyword: the functional form
_StepJSONBase = TypedDict(
    "_StepJSONBase",
    {
        "component": str,
        "from": str | None,
        "to": str,
        "commands": list[str],
        "unblocks": list[str],
        "reason": str,
        "warnings": list[str],
    },
)


class StepJSON(_StepJSONBase, total=False):
    alternatives: list[AlternativeJSON]


class _BlockedJSONBase(TypedDict):
    feature: str
    why: str
    upstream_supported: bool


class BlockedJSON(_BlockedJSONBase, total=False):
    workaround: dict[str, Any]


class _FailureJSONBase(TypedDict):
    rule: str
    message: str


class FailureJSON(_FailureJSONBase, total=False):
    observed: Any
    required: Any
    source: Any
    inferred: bool


class _FailingCheckJSONBase(TypedDict):
    check: str
    title: str
    effect: str
    failures: list[FailureJSON]


class FailingCheckJSON(_FailingCheckJSONBase, total=False):
    fix: dict[str, Any]


class _PlanJSONBase(TypedDict):
    target: dict[str, str]
    steps: list[StepJSON]
    still_blocked: list[BlockedJSON]


class PlanJSON(_PlanJSONBase, total=False):
    note: str
    elsewhere: list[str]
    error: str
    still_failing_checks: list[FailingCheckJSON]
    request: dict[str, list[str]]  # added by `stackcheck plan`: what was asked (--want, --hold, --to)
