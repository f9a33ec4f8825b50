"""The fleet summary for a reader (`stackcheck fleet`): text, Markdown, and CSV (one row per host).

Host names, versions and ids come from files: every one goes through `field_safe` (no control character
reaches a terminal), Markdown cells escape `|`, brackets and HTML, and a CSV cell that a spreadsheet would
read as a formula gets a leading apostrophe."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stackcheck.documents.fleet import CSV_COLUMNS, STACK_FIELDS, Fleet, host_rows
from stackcheck.redact import field_safe, shown_field

if TYPE_CHECKING:
    from stackcheck.documents.types import FleetDrift, FleetGpuModel, FleetStackRow, FleetStep, FleetSummary

EXAMPLES = 8  # host names shown per group in the text and markdown formats


def _change_lines(summary: FleetSummary) -> list[str]:
    if "changes" not in summary:
        return []
    since = summary["since"]
    changes = summary["changes"]
    out = ["", f"changed since {', '.join(_clean(p) for p in since['inputs'])} ({since['hosts']} hosts then): "
           f"{len(changes)} host(s)"]  # fmt: skip
    for c in changes:
        when = f"{_clean(c['before'])} → {_clean(c['after'])}"
        if c.get("only_in"):
            out.append(f"  {_clean(c['hostname'])}: {'gone' if c['only_in'] == 'before' else 'new'} ({when})")
            continue
        lost = f"; no longer ok: {', '.join(c['regressions'])}" if c["regressions"] else ""
        out.append(f"  {_clean(c['hostname'])} ({when}){lost}")
        for f in c["features"]:
            out.append(f"    {_clean(f['id'])}: {_verdict_text(f['before'])} → {_verdict_text(f['after'])}")
    return out


def _verdict_text(v: Any) -> str:
    if not isinstance(v, dict):
        return "absent"
    return _clean(v.get("status")) + (f" ({_clean(v['effect'])})" if v.get("effect") else "")


# --- text helpers ------------------------------------------------------------------------------------


def _clean(value: Any) -> str:
    """Host names and versions come from files: no control characters in the terminal output."""
    return field_safe("-" if value is None else value)


def _model(entry: FleetGpuModel | FleetStackRow | FleetDrift) -> str:
    cc = entry.get("compute_capability")
    return _clean(entry["model"]) + (f" (cc {_clean(cc)})" if cc else "")


def _stack_text(stack: Mapping[str, Any]) -> str:
    return " · ".join(f"{f} {_clean(stack.get(f))}" for f in STACK_FIELDS)


def _hosts_text(names: list[str], count: int) -> str:
    shown = ", ".join(_clean(n) for n in names[:EXAMPLES])
    return shown + (f" (+{count - EXAMPLES} more)" if count > EXAMPLES else "")


def _status_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{s} {n}" for s, n in counts.items())


def _step_text(step: FleetStep) -> str:
    return f"{_clean(step['component'])} {_clean(step['from'] or 'not installed')} → {_clean(step['to'])}"


def _inputs_line(summary: FleetSummary) -> str:
    i = summary["inputs"]
    return (
        f"stackcheck fleet: {i['hosts']} hosts from {i['reports']} reports ({i['documents']} documents read)"
        f" · {i['duplicates_dropped']} older duplicate report(s) dropped · {i['bad']} bad input(s) skipped"
    )


def render_text(summary: FleetSummary) -> str:
    out = [_inputs_line(summary), "", "gpu models (hosts, gpus)"]
    for m in summary["gpu_models"]:
        out.append(f"  {m['hosts']:>7} hosts {m['gpus']:>8} gpus  {_model(m)}")
    out += ["", "stacks per gpu model (* the most common one for the model)"]
    last = None
    for s in summary["stacks"]:
        key = (s["model"], s["compute_capability"])
        if key != last:
            out.append(f"  {_model(s)}")
            last = key
        out.append(f"    {'*' if s['common'] else ' '} {s['hosts']:>7}  {_stack_text(s)}")
    out += ["", "features (hosts per status; effects of the blocked)"]
    for f in summary["features"]:
        eff = f"  [{_status_text(f['blocked_effects'])}]" if f["blocked_effects"] else ""
        out.append(f"  {_clean(f['feature']):<30} {_status_text(f['hosts'])}{eff}")
    out += ["", "stack checks (hosts per status)"]
    for c in summary["checks"]:
        out.append(f"  {_clean(c['check']):<30} {_status_text(c['hosts'])}")
    out.append(f"  consistent: {_status_text(summary['consistent'])}")
    out += ["", "drift (hosts whose stack differs from the most common one for their gpu model)"]
    if not summary["drift"]:
        out.append("  none")
    for d in summary["drift"]:
        diffs = ", ".join(
            f"{f} {_clean(d['stack'][f])} (common {_clean(d['common_stack'][f])})" for f in d["differs_in"]
        )
        out.append(f"  {_model(d)}: {d['count']} host(s): {diffs}")
        out.append(f"    {_hosts_text(d['hosts'], d['count'])}")
    out += ["", "upgrade waves (hosts with the same plan steps)"]
    if not summary["waves"]:
        out.append("  none: no report carries plan steps")
    for w in summary["waves"]:
        out.append(f"  wave {w['wave']}: {w['count']} host(s): " + "; ".join(_step_text(s) for s in w["steps"]))
        out.append(f"    {_hosts_text(w['hosts'], w['count'])}")
    if summary["duplicates"]:
        out += ["", "duplicates (a host reported more than once: the newest report is kept)"]
        for dup in summary["duplicates"][:50]:
            dropped = ", ".join(f"{_clean(x['input'])} ({_clean(x['collected_at'])})" for x in dup["dropped"])
            kept = dup["kept"]
            out.append(
                f"  {_clean(dup['hostname'])}: kept {_clean(kept['input'])} ({_clean(kept['collected_at'])});"
                f" dropped {dropped}"
            )
        if len(summary["duplicates"]) > 50:
            out.append(f"  … and {len(summary['duplicates']) - 50} more hosts (see --format json or csv)")
    out += _change_lines(summary)
    if summary["bad"]:
        out += ["", "bad inputs (skipped)"]
        for b in summary["bad"][:50]:
            out.append(f"  {_clean(b['input'])}: {_clean(b['reason'])}")
        if len(summary["bad"]) > 50:
            out.append(f"  … and {len(summary['bad']) - 50} more (see --format json or csv)")
    return "\n".join(out) + "\n"


def _cell(value: Any) -> str:
    """A Markdown table cell: no controls, no raw HTML, no column break."""
    text = _clean(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("|", "\\|").replace("[", "\\[").replace("]", "\\]")


def render_markdown(summary: FleetSummary) -> str:
    out = ["## stackcheck fleet", "", _cell(_inputs_line(summary)), "", "### GPU models", ""]
    out += ["| model | cc | hosts | gpus |", "|---|---|---:|---:|"]
    for m in summary["gpu_models"]:
        out.append(f"| {_cell(m['model'])} | {_cell(m['compute_capability'])} | {m['hosts']} | {m['gpus']} |")
    out += ["", "### Stacks", "", "| model | " + " | ".join(STACK_FIELDS) + " | hosts | common |"]
    out.append("|---|" + "---|" * len(STACK_FIELDS) + "---:|---|")
    for s in summary["stacks"]:
        cells = " | ".join(_cell(s[f]) for f in STACK_FIELDS)
        out.append(f"| {_cell(_model(s))} | {cells} | {s['hosts']} | {'yes' if s['common'] else ''} |")
    out += ["", "### Features", "", "| feature | hosts per status | blocked effects |", "|---|---|---|"]
    for f in summary["features"]:
        out.append(
            f"| `{_cell(f['feature'])}` | {_cell(_status_text(f['hosts']))}"
            f" | {_cell(_status_text(f['blocked_effects']))} |"
        )
    out += ["", "### Stack checks", "", "| check | hosts per status |", "|---|---|"]
    for c in summary["checks"]:
        out.append(f"| `{_cell(c['check'])}` | {_cell(_status_text(c['hosts']))} |")
    out += ["", f"Consistent: {_cell(_status_text(summary['consistent']))}", "", "### Drift", ""]
    if not summary["drift"]:
        out.append("None.")
    else:
        out += ["| model | differs in | hosts | examples |", "|---|---|---:|---|"]
        for d in summary["drift"]:
            diffs = ", ".join(f"{f} {d['stack'][f]} (common {d['common_stack'][f]})" for f in d["differs_in"])
            examples = _cell(_hosts_text(d["hosts"], d["count"]))
            out.append(f"| {_cell(_model(d))} | {_cell(diffs)} | {d['count']} | {examples} |")
    out += ["", "### Upgrade waves", ""]
    if not summary["waves"]:
        out.append("None: no report carries plan steps.")
    else:
        out += ["| wave | steps | hosts | examples |", "|---:|---|---:|---|"]
        for w in summary["waves"]:
            steps = "; ".join(_step_text(s) for s in w["steps"])
            examples = _cell(_hosts_text(w["hosts"], w["count"]))
            out.append(f"| {w['wave']} | {_cell(steps)} | {w['count']} | {examples} |")
    if summary["duplicates"]:
        out += ["", "### Duplicates", "", "| host | kept | dropped |", "|---|---|---|"]
        for dup in summary["duplicates"]:
            dropped = ", ".join(f"{x['input']} ({x['collected_at']})" for x in dup["dropped"])
            kept = f"{dup['kept']['input']} ({dup['kept']['collected_at']})"
            out.append(f"| {_cell(dup['hostname'])} | {_cell(kept)} | {_cell(dropped)} |")
    if "changes" in summary:
        out += ["", "### Changed since", ""]
        out += ["| host | when | feature | before | after |", "|---|---|---|---|---|"]
        for ch in summary["changes"]:
            when = _cell(f"{ch['before']} → {ch['after']}")
            if ch.get("only_in"):
                what = "gone" if ch["only_in"] == "before" else "new"
                out.append(f"| {_cell(ch['hostname'])} | {when} | ({what}) | | |")
            for fc in ch["features"]:
                lost = " **(was ok)**" if fc.get("regression") else ""
                out.append(
                    f"| {_cell(ch['hostname'])} | {when} | `{_cell(fc['id'])}`{lost} | {_verdict_text(fc['before'])}"
                    f" | {_verdict_text(fc['after'])} |"
                )
    if summary["bad"]:
        out += ["", "### Bad inputs (skipped)", "", "| input | reason |", "|---|---|"]
        for b in summary["bad"]:
            out.append(f"| {_cell(b['input'])} | {_cell(b['reason'])} |")
    out.append("")
    return "\n".join(out)


#: a cell that starts with one of these is a formula to a spreadsheet (CSV injection): it gets a leading "'"
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")


def csv_cell(value: Any) -> str:
    """A CSV cell from a report: recognisable secrets masked, controls shown as escapes, and a leading formula
    character neutralised by a leading apostrophe (as OWASP advises), so opening the file in a spreadsheet
    runs nothing."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return str(value)
    text = str(value)
    if text.startswith(FORMULA_START):
        text = "'" + text
    return shown_field(text)


def render_csv(fleet: Fleet, summary: FleetSummary) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, extrasaction="raise", lineterminator="\n")
    writer.writeheader()
    # a fleet's cells repeat (versions, statuses, waves): each distinct text is masked and escaped once (10,000
    # hosts: masking every cell took ~0.4 s more than escaping alone)
    cells: dict[Any, str] = {}
    for row in host_rows(fleet, summary):
        shown = {}
        for k, v in row.items():
            key = (type(v), v) if isinstance(v, str | int | float | bool) or v is None else None
            cell = cells.get(key) if key is not None else None
            if cell is None:
                cell = csv_cell(v)
                if key is not None:
                    cells[key] = cell
            shown[k] = cell
        writer.writerow(shown)
    return buf.getvalue()
