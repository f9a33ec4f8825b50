"""A probe's result and the one-line form of an exception: what the NVML reader needs of the probe interface
(stackcheck.probes.interface re-exports both), kept apart so that the forked NVML reader (stackcheck.probes.
nvml_early), which imports stackcheck.probes.nvml_read beside the driver's start, does not import the interface's
context, file view and command runner it never uses (~8 M instructions of the child's, 2-core box, callgrind)."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any, Literal

if TYPE_CHECKING:
    ProbeStatus = Literal["ok", "partial", "failed", "skipped"]
else:  # (typing is not imported at run time)
    ProbeStatus = str


class ProbeResult(NamedTuple):
    """What a probe found: top-level facts sections, a status and, unless ok, a one-line reason."""

    facts: dict[str, Any]
    status: ProbeStatus = "ok"
    reason: str | None = None


def one_line(exc: BaseException) -> str:
    """An exception as one line: "ClassName: first line of its message"."""
    try:
        text = str(exc)
    except Exception:
        text = ""
    first = text.strip().splitlines()[0] if text.strip() else ""
    name = type(exc).__name__
    return f"{name}: {first}" if first else name
