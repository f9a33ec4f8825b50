"""Renderers turn a finished report (a JSON-compatible dict) into a string; only the CLI writes."""

from __future__ import annotations

from typing import Any, Protocol


class Renderer(Protocol):
    def __call__(self, report: dict[str, Any], *, color: bool = False) -> str: ...


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
