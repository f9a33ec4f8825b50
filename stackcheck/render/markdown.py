"""Markdown, for a bug report or a pull-request comment."""

from __future__ import annotations

from typing import Any

from stackcheck.render.text import MARK, box_lines, check_rows, feature_rows, plan_lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: dict[str, Any]) -> str:
    out = ["## stackcheck report", ""]
    out.extend(f"- {_cell(line)}" for line in box_lines(report))
    if "features" in report:
        out += ["", "### Features", "", "| | feature | status | why |", "|---|---|---|---|"]
        for status, fid, effect, text in feature_rows(report):
            eff = f" ({effect})" if effect else ""
            out.append(f"| {MARK.get(status, '?')} | `{fid}` | {status}{eff} | {_cell(text)} |")
    if "checks" in report:
        out += ["", "### Stack checks", "", "| | check | status | why |", "|---|---|---|---|"]
        for status, cid, text in check_rows(report):
            out.append(f"| {MARK.get(status, '?')} | `{cid}` | {status} | {_cell(text)} |")
    if "plan" in report:
        out += ["", "### Plan", "", "```"]
        out.extend(line[2:] if line.startswith("  ") else line for line in plan_lines(report))
        out.append("```")
    out.append("")
    return "\n".join(out)
