"""The result of one preflight check, and small helpers shared by the checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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


def gib(n: float | None) -> str:
    """Bytes as GiB with one decimal ("46.8 GiB"); "?" when unknown."""
    if n is None:
        return "?"
    return f"{n / (1 << 30):.1f} GiB"


def option(options: Mapping[str, Any], flag: str, default: Any) -> Any:
    """A parsed launch option (gate.Derived.options: canonical flag -> value), or its default."""
    value = options.get(flag)
    return default if value is None else value


def int_option(options: Mapping[str, Any], flag: str, default: int) -> int:
    value = options.get(flag)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def truthy(value: str | None, true: Sequence[str] = ("1", "true", "yes", "on", "y")) -> bool | None:
    """An environment flag as SGLang and huggingface_hub read them; None when unset."""
    if value is None:
        return None
    return value.strip().lower() in true


def worst(results: Sequence[CheckResult]) -> Status:
    """The most severe status among results (ok when empty)."""
    rank = {s: i for i, s in enumerate(STATUSES)}
    return max((r.status for r in results), key=lambda s: rank[s], default="ok")
