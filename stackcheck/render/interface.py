"""The renderer family's interface: a renderer takes one finished document and the options the command line
asked for, and returns a string; only the command line writes it (standard output or --output).

Every document has a registry of its formats in stackcheck.render (`REPORT_FORMATS`, `GATE_FORMATS`, ...),
a `Final` dict of format name -> Renderer that mypy checks against this protocol; the command line builds
its --format choices from the registry's keys."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:  # the protocol is read by the type checker only (typing is not imported at run time)
    from typing import Any, Final, Protocol, TypeVar

    D_contra = TypeVar("D_contra", contravariant=True)

    class Renderer(Protocol[D_contra]):
        """One format of one document: the document and the options in, the text out (never written here)."""

        def __call__(self, document: D_contra, options: RenderOptions, /) -> str: ...


class RenderOptions:
    """What the command line asks of a renderer; each renderer reads the options it has a use for and
    ignores the others. (A plain class: a dataclass costs start-up time.)"""

    __slots__ = ("color", "compact", "sources", "verbose", "warnings_only", "width")

    def __init__(
        self,
        *,
        color: bool = False,
        width: int | None = None,
        sources: bool = False,
        verbose: bool = False,
        warnings_only: bool = False,
        compact: bool = False,
    ) -> None:
        #: ANSI colour (the text format on a terminal)
        self.color: Final = color
        #: columns of the human formats; None: $COLUMNS, else the terminal's, no wrapping when piped
        self.width: Final = width
        #: list every cited source with its title and address
        self.sources: Final = sources
        #: the gate decision: also the note that lists the server flags the gate does not read
        self.verbose: Final = verbose
        #: the gate decision on stderr before the server starts: only its warnings
        self.warnings_only: Final = warnings_only
        #: JSON on one line (the gate's decision on stderr before the server starts)
        self.compact: Final = compact


def source_text(source: Any) -> str:
    """A manifest source as one short line: an id, a title, or repo/path@ref."""
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        return "; ".join(source_text(s) for s in source) if source else "no source"
    if isinstance(source, dict):
        if source.get("repo"):
            return f"{source['repo']}/{source.get('path', '')}@{source.get('ref', '')}".rstrip("@/")
        if source.get("title"):
            return str(source["title"]) + (f" <{source['url']}>" if source.get("url") else "")
        if source.get("url"):
            return str(source["url"])
    return "no source"


def value_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "[" + ", ".join(value_text(v) for v in value) + "]"
    if value is None:
        return "unknown"
    return str(value)
