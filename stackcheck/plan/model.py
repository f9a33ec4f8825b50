"""The plan as typed values: what `make_plan` returns and every consumer reads (the command line, the
gate's fixes, the recommendation). Frozen: a consumer that wants a different plan makes one with
`dataclasses.replace`. `to_json` gives the document of the report's `plan` (schemas/report.schema.json
$defs/plan), keys in the order they have always been written."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

# ---- the JSON shapes (what `to_json` returns; mypy follows them into the report) --------------------


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


class _PlanJSONBase(TypedDict):
    target: dict[str, str]
    steps: list[StepJSON]
    still_blocked: list[BlockedJSON]


class PlanJSON(_PlanJSONBase, total=False):
    note: str
    elsewhere: list[str]
    error: str
    request: dict[str, list[str]]  # added by `stackcheck plan`: what was asked (--want, --hold, --to)


# ---- the values ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Alternative:
    """Another way to run a step's last command (a command is never written inside prose)."""

    note: str
    commands: tuple[str, ...]

    def to_json(self) -> AlternativeJSON:
        return {"note": self.note, "commands": list(self.commands)}


@dataclass(frozen=True)
class Step:
    """One step of the plan: a component from one version to another, the commands that do it, the
    features blocked before the plan that are ok after this step and every earlier one."""

    component: str  # "driver", "cuda-toolkit", a package name, or "patch:FEATURE"
    from_: str | None  # what is installed now (None: nothing)
    to: str
    commands: tuple[str, ...]
    unblocks: tuple[str, ...]
    reason: str
    warnings: tuple[str, ...]
    alternatives: tuple[Alternative, ...] = ()

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


@dataclass(frozen=True)
class Blocked:
    """A feature still blocked after the plan: why, whether another stack of the manifests would unblock
    it, and its local workaround when that answers the failure."""

    feature: str
    why: str
    upstream_supported: bool
    workaround: Mapping[str, Any] | None = None

    def to_json(self) -> BlockedJSON:
        out: BlockedJSON = {"feature": self.feature, "why": self.why, "upstream_supported": self.upstream_supported}
        if self.workaround:
            out["workaround"] = dict(self.workaround)
        return out


@dataclass(frozen=True)
class Plan:
    """The target stack (component -> version), the ordered steps to it, the features still blocked after
    it; `note` says what the plan could not check, `elsewhere` lists the environments that serve instead
    of this one (no install is planned then), `error` why no stack satisfies the request."""

    target: Mapping[str, str] = field(default_factory=dict)
    steps: tuple[Step, ...] = ()
    still_blocked: tuple[Blocked, ...] = ()
    note: str | None = None
    elsewhere: tuple[str, ...] | None = None
    error: str | None = None

    def to_json(self) -> PlanJSON:
        out: PlanJSON = {
            "target": dict(self.target),
            "steps": [s.to_json() for s in self.steps],
            "still_blocked": [b.to_json() for b in self.still_blocked],
        }
        if self.note is not None:
            out["note"] = self.note
        if self.elsewhere is not None:
            out["elsewhere"] = list(self.elsewhere)
        if self.error is not None:
            out["error"] = self.error
        return out
