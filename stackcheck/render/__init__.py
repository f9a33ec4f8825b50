"""Output formats. RENDERERS maps a --format name to a function(report, color=..., **options) -> str.

Options a renderer may take (others ignore them): `width` (columns of the text format; default: $COLUMNS or
the terminal's, no wrapping when piped) and `sources` (list every cited source with its title and address).
FORMAT_ALIASES maps an old format name to its current one (stackcheck.options.format_choice warns).

The human formats (text, markdown) render a copy of the report whose strings went through
`stackcheck.redact.safe_tree`: text from the box (GPU names, tool errors, versions, host names) never
brings a control character or an escape sequence to a terminal; JSON escapes them (`redact.json_text`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _text(report: dict[str, Any], *, color: bool = False, **options: Any) -> str:
    from stackcheck.redact import safe_tree
    from stackcheck.render.text import render_table

    return render_table(
        safe_tree(report), color=color, width=options.get("width"), sources=bool(options.get("sources"))
    )


def _json(report: dict[str, Any], *, color: bool = False, **options: Any) -> str:
    from stackcheck.render.jsonfmt import render_json

    return render_json(report)


def _markdown(report: dict[str, Any], *, color: bool = False, **options: Any) -> str:
    from stackcheck.redact import safe_tree
    from stackcheck.render.markdown import render_markdown

    return render_markdown(safe_tree(report), sources=bool(options.get("sources")))


def _prometheus(report: dict[str, Any], *, color: bool = False, **options: Any) -> str:
    from stackcheck.render.prometheus import render_prometheus

    return render_prometheus(report)


def _nfd(report: dict[str, Any], *, color: bool = False, **options: Any) -> str:
    from stackcheck.render.nfd import render_nfd

    return render_nfd(report)


RENDERERS: dict[str, Callable[..., str]] = {
    "text": _text,
    "json": _json,
    "markdown": _markdown,
    "prometheus": _prometheus,
    "nfd": _nfd,
}

#: old format names still accepted, with a deprecation note on stderr
FORMAT_ALIASES: dict[str, str] = {"table": "text"}
