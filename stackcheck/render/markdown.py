"""Markdown, for a bug report or a pull-request comment.

Text from the box is inert here: table cells escape `|` and HTML (`<`, `>`, `&`: a rendered comment shows
a GPU name of `<img src=x onerror=...>` as text), and the plan's code fence is longer than any run of
backticks inside it, so no line can close it early."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from stackcheck.knowledge.sources import collect
from stackcheck.render.text import MARK, box_lines, check_rows, feature_rows, plan_lines

if TYPE_CHECKING:
    from stackcheck.documents.types import Report


def _cell(text: str) -> str:
    return html_text(text).replace("|", "\\|").replace("[", "\\[").replace("]", "\\]").replace("\n", " ")


def html_text(text: str) -> str:
    """`&`, `<` and `>` as entities: Markdown renderers pass raw HTML through."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fence_for(lines: list[str]) -> str:
    """A backtick fence longer than any backtick run in the lines it encloses."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def render_markdown(report: Report, sources: bool = False) -> str:
    out = ["## stackcheck report", ""]
    out.extend(f"- {_cell(line)}" for line in box_lines(report))
    if "features" in report:
        out += ["", "### Features", "", "| | feature | status | what to do · why |", "|---|---|---|---|"]
        for status, fid, effect, text in feature_rows(report):
            eff = f" ({effect})" if effect else ""
            out.append(f"| {MARK.get(status, '?')} | `{_cell(fid)}` | {status}{eff} | {_cell(text)} |")
    if "checks" in report:
        out += ["", "### Stack checks", "", "| | check | status | why |", "|---|---|---|---|"]
        for status, cid, effect, text in check_rows(report):
            eff = f" ({effect})" if effect else ""
            out.append(f"| {MARK.get(status, '?')} | `{_cell(cid)}` | {status}{eff} | {_cell(text)} |")
    if "plan" in report:
        lines = [line[2:] if line.startswith("  ") else line for line in plan_lines(report)]
        fence = fence_for(lines)
        out += ["", "### Plan", "", fence, *lines, fence]
    if sources:
        found = collect(report)
        if found:
            out += ["", "### Sources", ""]
            for ref in found.values():
                url = str(ref.get("url") or "").replace("(", "%28").replace(")", "%29").replace(" ", "%20")
                link = f"[{_cell(ref['title'])}]({url})" if url else _cell(ref["title"])
                out.append(f"- `{ref['id']}`: {link}")
    out.append("")
    return "\n".join(out)
