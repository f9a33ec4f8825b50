"""The result of one preflight check (from the core), and small helpers shared by the checks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.verdicts.check_result import STATUSES, CheckResult

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.verdicts.check_result import Status

#: CheckResult and Status live in the core (stackcheck/verdicts/check_result.py, which the package checks the audit
#: judges too return); the gate's checks take them from here
__all__ = ["STATUSES", "CheckResult", "Status", "gib", "int_option", "option", "truthy", "worst"]


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
