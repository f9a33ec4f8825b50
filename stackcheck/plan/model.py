"""The plan as typed values: what `make_plan` returns and every consumer reads (the command line, the
gate's fixes, the recommendation). Frozen: a consumer that wants a different plan makes one with
`stackcheck.record.replace`. They are plain classes with slots on `stackcheck.record.Frozen`, not dataclasses
(importing dataclasses brings inspect, ast, dis and tokenize: ~8 ms of a `plan --want`). `to_json` gives the
document of the report's `plan` (schemas/report.schema.json $defs/plan; its shapes, for mypy, are in
json_shapes.py), keys in the order they have always been written."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.record import Frozen

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    # the JSON shapes (what `to_json` returns; mypy follows them into the report)
    from stackcheck.plan.json_shapes import (
        AlternativeJSON,
        BlockedJSON,
        FailingCheckJSON,
        FailureJSON,
        PlanJSON,
        StepJSON,
    )


# ---- the values ---------------------------------------------------------------------------------------


class Alternative(Frozen):
    """Another way to run a step's last command (a command is never written inside prose)."""

    __slots__ = ("commands", "note")
    note: str
    commands: tuple[str, ...]

    def __init__(self, note: str, commands: tuple[str, ...]) -> None:
        object.__setattr__(self, "note", note)
        object.__setattr__(self, "commands", commands)

    def to_json(self) -> AlternativeJSON:
        return {"note": self.note, "commands": list(self.commands)}


class Step(Frozen):
    """One step of the plan: a component from one version to another, the commands that do it, the
    features blocked before the plan that are ok after this step and every earlier one."""

    __slots__ = ("alternatives", "commands", "component", "from_", "reason", "to", "unblocks", "warnings")
    component: str  # "driver", "cuda-toolkit", a package name, or "patch:FEATURE"
    from_: str | None  # what is installed now (None: nothing)
    to: str
    commands: tuple[str, ...]
    unblocks: tuple[str, ...]
    reason: str
    warnings: tuple[str, ...]
    alternatives: tuple[Alternative, ...]

    def __init__(
        self,
        component: str,
        from_: str | None,
        to: str,
        commands: tuple[str, ...],
        unblocks: tuple[str, ...],
        reason: str,
        warnings: tuple[str, ...],
        alternatives: tuple[Alternative, ...] = (),
    ) -> None:
        setter = object.__setattr__
        setter(self, "component", component)
        setter(self, "from_", from_)
        setter(self, "to", to)
        setter(self, "commands", commands)
        setter(self, "unblocks", unblocks)
        setter(self, "reason", reason)
        setter(self, "warnings", warnings)
        setter(self, "alternatives", alternatives)

    @property
    def is_patch(self) -> bool:
        """A local edit of an installed package (a feature's workaround), not an install."""
        return self.component.startswith("patch:")

    def to_json(self) -> StepJSON:
        out: StepJSON = {
            "component": self.component,
            "from": self.from_,
            "to": self.to,
            "commands": list(self.commands),
            "unblocks": list(self.unblocks),
            "reason": self.reason,
            "warnings": list(self.warnings),
        }
        if self.alternatives:
            out["alternatives"] = [a.to_json() for a in self.alternatives]
        return out


class Blocked(Frozen):
    """A feature still blocked after the plan: why, whether another stack of the manifests would unblock
    it, and its local workaround when that answers the failure."""

    __slots__ = ("feature", "upstream_supported", "why", "workaround")
    feature: str
    why: str
    upstream_supported: bool
    workaround: Mapping[str, Any] | None

    def __init__(
        self, feature: str, why: str, upstream_supported: bool, workaround: Mapping[str, Any] | None = None
    ) -> None:
        object.__setattr__(self, "feature", feature)
        object.__setattr__(self, "why", why)
        object.__setattr__(self, "upstream_supported", upstream_supported)
        object.__setattr__(self, "workaround", workaround)

    def to_json(self) -> BlockedJSON:
        out: BlockedJSON = {"feature": self.feature, "why": self.why, "upstream_supported": self.upstream_supported}
        if self.workaround:
            out["workaround"] = dict(self.workaround)
        return out


class FailingCheck(Frozen):
    """A stack check (manifests/checks.json) that still fails on the facts after the plan (a failing rule that
    crashes or disables, not one that only degrades): the plan alone does not make the box launch. `failures` are
    the check's failing reasons as the engine gives them (rule, observed, required, message, source); `fix` the
    check's own fix (text, and commands when it names them)."""

    __slots__ = ("effect", "failures", "fix", "id", "title")
    id: str
    title: str
    effect: str
    failures: tuple[Mapping[str, Any], ...]
    fix: Mapping[str, Any] | None

    def __init__(
        self, id: str, title: str, effect: str, failures: tuple[Mapping[str, Any], ...], fix: Mapping[str, Any] | None
    ) -> None:
        setter = object.__setattr__
        setter(self, "id", id)
        setter(self, "title", title)
        setter(self, "effect", effect)
        setter(self, "failures", failures)
        setter(self, "fix", fix)

    def to_json(self) -> FailingCheckJSON:
        out: FailingCheckJSON = {
            "check": self.id,
            "title": self.title,
            "effect": self.effect,
            "failures": [_failure_json(r) for r in self.failures],
        }
        if self.fix:
            out["fix"] = dict(self.fix)
        return out


def _failure_json(r: Mapping[str, Any]) -> FailureJSON:
    out: FailureJSON = {"rule": str(r.get("rule")), "message": str(r.get("message", ""))}
    for key in ("observed", "required", "source", "inferred"):
        if key in r:
            out[key] = r[key]
    return out


class Plan(Frozen):
    """The target stack (component -> version), the ordered steps to it, the features still blocked after
    it; `note` says what the plan could not check, `elsewhere` lists the environments that serve instead
    of this one (no install is planned then), `error` why no stack satisfies the request; `still_failing_checks`
    the stack checks that still fail (crash or disable) on the facts after it."""

    __slots__ = ("elsewhere", "error", "note", "steps", "still_blocked", "still_failing_checks", "target")
    target: Mapping[str, str]
    steps: tuple[Step, ...]
    still_blocked: tuple[Blocked, ...]
    note: str | None
    elsewhere: tuple[str, ...] | None
    error: str | None
    still_failing_checks: tuple[FailingCheck, ...]

    def __init__(
        self,
        target: Mapping[str, str] | None = None,
        steps: tuple[Step, ...] = (),
        still_blocked: tuple[Blocked, ...] = (),
        note: str | None = None,
        elsewhere: tuple[str, ...] | None = None,
        error: str | None = None,
        still_failing_checks: tuple[FailingCheck, ...] = (),
    ) -> None:
        setter = object.__setattr__
        setter(self, "target", {} if target is None else target)  # a fresh dict for each plan, as the factory
        setter(self, "steps", steps)
        setter(self, "still_blocked", still_blocked)
        setter(self, "note", note)
        setter(self, "elsewhere", elsewhere)
        setter(self, "error", error)
        setter(self, "still_failing_checks", still_failing_checks)

    def to_json(self) -> PlanJSON:
        out: PlanJSON = {
            "target": dict(self.target),
            "steps": [s.to_json() for s in self.steps],
            "still_blocked": [b.to_json() for b in self.still_blocked],
        }
        if self.still_failing_checks:  # (absent when none: the plans that leave no check failing read as before)
            out["still_failing_checks"] = [c.to_json() for c in self.still_failing_checks]
        if self.note is not None:
            out["note"] = self.note
        if self.elsewhere is not None:
            out["elsewhere"] = list(self.elsewhere)
        if self.error is not None:
            out["error"] = self.error
        return out
