"""The result of one preflight check: the gate's checks (stackcheck/launch/preflight/) and the package checks the
core judges too (stackcheck/verdicts/package_checks.py) return it."""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any, Literal

    Status = Literal["ok", "fail", "unknown", "warn"]

#: how the gate treats a status: fail refuses; unknown refuses unless --allow-unknown; warn and ok never refuse
STATUSES: tuple[Status, ...] = ("ok", "warn", "unknown", "fail")


class CheckResult(NamedTuple):
    """One check: what was observed, what the launch requires, and where the rule comes from.

    `check` is a stable id (gpu-count, gpu-memory, dependencies, ...); `subject` names what it is about when
    one check yields several results (a GPU, a distribution, a file). `observed` and `required` are
    JSON-compatible values a scheduler can show as they are; `message` says both in words. (NamedTuples, not
    dataclasses, for the small immutable records of this package: a dataclass costs a millisecond or more of
    code generation at import, and the gate imports this package on every launch.)
    """

    check: str
    status: Status
    observed: Any
    required: Any
    message: str
    source: Any = None
    subject: str | None = None
    details: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "check": self.check,
            "status": self.status,
            "observed": self.observed,
            "required": self.required,
            "message": self.message,
            "source": self.source,
        }
        if self.subject is not None:
            out["subject"] = self.subject
        if self.details:
            out["details"] = dict(self.details)
        return out
