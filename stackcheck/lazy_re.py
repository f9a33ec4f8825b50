"""Regular expressions compiled on first use: a module's patterns compiled at import cost every start that
imports it (a plan or audit from saved facts uses few of them), ~0.1-0.3 ms each."""

from __future__ import annotations

import re

from stackcheck.lean_typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from typing import Any


class _Pattern:
    """A stand-in for `re.compile(pattern, flags)` that compiles on the first attribute read."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(*self._args)
        return getattr(compiled, name)


def lazy(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled on first use, typed as the compiled pattern it stands for."""
    return cast("re.Pattern[str]", _Pattern(pattern, flags))


def lazy_bytes(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]:
    """lazy() of a bytes pattern."""
    return cast("re.Pattern[bytes]", _Pattern(pattern, flags))  # type: ignore[arg-type]


def compile_all(module: Any) -> None:
    """Every lazy pattern a module holds at its top level compiled now (the gate and a probed audit do it in their
    loading thread, while the probes wait on the driver, for the patterns their output needs after the facts)."""
    for value in list(vars(module).values()):
        if isinstance(value, _Pattern):
            value.pattern  # noqa: B018 - the first attribute read compiles it
