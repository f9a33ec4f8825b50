"""The installers' interface: an installer takes the component's target (a `Choice` of the target stack)
and returns the text of its step: the commands that install it, the warnings around them, and the
alternatives to its last command. Text only: stackcheck never runs them.

Commands are shell lines a user copies as they are: every value from the manifests or the box is quoted
(`q`), and a command is never written inside a warning's prose."""

from __future__ import annotations

import re

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.record import Frozen

if TYPE_CHECKING:
    from typing import Protocol

    from stackcheck.plan.model import Alternative
    from stackcheck.plan.solver import Box, Choice, Stack
    from stackcheck.verdicts.context import Context


class Install(Frozen):
    """A step's commands, its warnings, and the alternatives to its last command."""

    __slots__ = ("alternatives", "commands", "warnings")
    commands: tuple[str, ...]
    warnings: tuple[str, ...]
    alternatives: tuple[Alternative, ...]

    def __init__(
        self, commands: tuple[str, ...], warnings: tuple[str, ...] = (), alternatives: tuple[Alternative, ...] = ()
    ) -> None:
        object.__setattr__(self, "commands", commands)
        object.__setattr__(self, "warnings", warnings)
        object.__setattr__(self, "alternatives", alternatives)


if TYPE_CHECKING:

    class Installer(Protocol):
        """How one component is installed: the box's context, the component's target, the box as it is and
        the whole target stack (a package's extras come from SGLang's pins) in, the step's text out. (A type
        only: typing is not imported at run time.)"""

        def __call__(self, ctx: Context, choice: Choice, box: Box, stack: Stack, /) -> Install: ...


#: a character that makes a word need quoting in a POSIX shell (shlex.quote's set, without importing shlex)
_UNSAFE = re.compile(r"[^\w@%+=:,./-]", re.ASCII)


def q(text: str) -> str:
    """One shell word, as shlex.quote writes it: the text as it is when every character is safe, else in single
    quotes with each single quote written as '"'"'."""
    if not text:
        return "''"
    if _UNSAFE.search(text) is None:
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


def os_family(ctx: Context) -> str:
    """The system package manager's family: "debian" (apt), "rhel" (dnf), or "other"."""
    os_text = str((ctx.facts.get("system") or {}).get("os") or "").lower()
    if "ubuntu" in os_text or "debian" in os_text:
        return "debian"
    if any(x in os_text for x in ("red hat", "rhel", "rocky", "alma", "centos", "fedora", "oracle")):
        return "rhel"
    return "other"
