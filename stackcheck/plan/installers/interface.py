"""The installers' interface: an installer takes the component's target (a `Choice` of the target stack)
and returns the text of its step: the commands that install it, the warnings around them, and the
alternatives to its last command. Text only: stackcheck never runs them.

Commands are shell lines a user copies as they are: every value from the manifests or the box is quoted
(`q`), and a command is never written inside a warning's prose."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Protocol

from stackcheck.plan.model import Alternative
from stackcheck.plan.solver import Box, Choice, Stack
from stackcheck.verdicts.context import Context


@dataclass(frozen=True)
class Install:
    """A step's commands, its warnings, and the alternatives to its last command."""

    commands: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    alternatives: tuple[Alternative, ...] = ()


class Installer(Protocol):
    """How one component is installed: the box's context, the component's target, the box as it is and
    the whole target stack (a package's extras come from SGLang's pins) in, the step's text out."""

    def __call__(self, ctx: Context, choice: Choice, box: Box, stack: Stack, /) -> Install: ...


def q(text: str) -> str:
    """One shell word."""
    return shlex.quote(text)


def os_family(ctx: Context) -> str:
    """The system package manager's family: "debian" (apt), "rhel" (dnf), or "other"."""
    os_text = str((ctx.facts.get("system") or {}).get("os") or "").lower()
    if "ubuntu" in os_text or "debian" in os_text:
        return "debian"
    if any(x in os_text for x in ("red hat", "rhel", "rocky", "alma", "centos", "fedora", "oracle")):
        return "rhel"
    return "other"
