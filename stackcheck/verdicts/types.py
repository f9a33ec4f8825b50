"""The typed shapes of the engine's verdicts (stackcheck.verdicts.engine): a feature's verdict, a stack check's
verdict, and the reasons they carry. Their own module so that the parts of the engine that build reasons
(stackcheck.derive.judge) name these types without importing the engine back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, TypedDict

if TYPE_CHECKING:
    from stackcheck.knowledge.types import Enable, Workaround

Status = Literal["ok", "blocked", "unknown", "not-applicable"]
CheckStatus = Literal["ok", "failed", "warning", "unknown", "skipped"]


class Reason(TypedDict, total=False):
    rule: str
    result: Literal["fail", "unknown", "pass"]
    requirement: str
    observed: Any
    required: Any
    effect: str  # crash | wrong-output | disabled | degraded (stackcheck.verdicts.EFFECT_ORDER ranks them)
    message: str
    source: Any
    inferred: bool
    gpu: str
    patched: str  # the file that differs from the release, when a gate table was locally patched
    derived: str  # judged from an installed release newer than the data (stackcheck.derive.judge)
    implied: list[str]  # the implied facts it rests on (stackcheck.facts.implied, audit --facts)
    filled: list[str]  # the filled facts its rule reads (stackcheck.facts.filled, audit --facts): it is inferred
    sweep: dict[str, Any]  # a check's release sweep, per rule: releases swept, those it fails with (rule_cover)


class FeatureVerdict(TypedDict, total=False):
    id: str
    title: str
    status: Status
    effect: str | None  # a blocked verdict's worst failing effect (crash | wrong-output | disabled | degraded)
    reasons: list[Reason]
    enable: Enable
    workaround: Workaround
    implied: list[str]  # the implied facts it rests on (stackcheck.facts.implied, audit --facts)


class CheckVerdict(TypedDict, total=False):
    id: str
    title: str
    status: CheckStatus
    reasons: list[Reason]
    fix: dict[str, Any]  # checks.json `fix`, on a failed or warning check
    implied: list[str]  # the implied facts it rests on (stackcheck.facts.implied, audit --facts)
