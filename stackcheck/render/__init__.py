"""Output formats, one plug-in family: every document stackcheck writes has a registry of its formats here,
a `Final` dict of format name -> `Renderer` (render/interface.py: the document and the RenderOptions in, a
string out; only the command line writes). The command line's --format choices are the registry's keys;
`DOCUMENTS` lists every registry (tests/render/test_render_registry.py renders every format of every document).

| document | registry | modules |
|---|---|---|
| the report (`audit`) | REPORT_FORMATS | text.py, markdown.py, prometheus.py, nfd.py (one module per format) |
| the facts (`probe`) | PROBE_FORMATS | the report's text, json, markdown (a report without verdicts) |
| the plan (`plan`) | PLAN_FORMATS | the report's text, json, markdown (the box and the plan, or the whole report) |
| the gate's decision | GATE_FORMATS | gate.py |
| a triage | TRIAGE_FORMATS | triage.py |
| a fleet summary | FLEET_FORMATS | fleet.py (text, markdown, csv) |
| an explanation | EXPLAIN_FORMATS | explain.py |
| a diff | DIFF_FORMATS | diff.py (text, markdown) |
| a recommendation | RECOMMEND_FORMATS | recommend.py (text, shell) |

Every JSON format is the one JSON writer, jsonout.py. layout.py lays text out at any width (wrap without
cutting, hanging indents, shell commands one line or a `\\` continuation, ANSI colour) for every human format.
The renderers are imported when they run, not with this module (start-up time).

Every renderer here shows its document through `stackcheck.redact.public_document` (one masking for every
format of every document: a secret a probe's reason, a path or a package's metadata quotes never leaves the box).
The human formats render text from the box terminal-safe: the report's text and markdown render a copy whose
strings went through `stackcheck.redact.safe_tree` (GPU names, tool errors, versions, host names never
bring a control character or an escape sequence to a terminal); JSON escapes them (`redact.json_text`).
FORMAT_ALIASES maps an old format name to its current one (stackcheck.commands.arguments.format_choice warns)."""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.lean_typing import TYPE_CHECKING, cast
from stackcheck.render.interface import RenderOptions

if TYPE_CHECKING:
    from typing import Any, Final

    from stackcheck.documents.fleet import FleetReport
    from stackcheck.documents.types import Report
    from stackcheck.launch.triage import TriageReport
    from stackcheck.render.interface import Renderer

if TYPE_CHECKING:
    #: a JSON document as parsed: the report, the gate's decision, an explanation, a diff, a recommendation
    Document = dict[str, Any]


def _public(document: Any) -> Any:
    """The document as it may be shown (stackcheck.redact.public_document: the one masking of every format of every
    document: a secret quoted by a probe's reason, a tool's message, a path, a package's metadata is masked)."""
    from stackcheck.redact import public_document

    return public_document(document)


def _json(document: Mapping[str, Any], options: RenderOptions) -> str:
    from stackcheck.render.jsonout import json_document

    return json_document(_public(document), compact=options.compact)


# ---- the report (audit, probe, plan) ---------------------------------------------------------------------


def _report_text(report: Report, options: RenderOptions) -> str:
    from stackcheck.redact import safe_tree
    from stackcheck.render.text import render_plain

    # safe_tree copies the document with its strings made terminal-safe: the same shape
    shown = cast("Report", safe_tree(_public(report)))
    return render_plain(shown, options.width, color=options.color, sources=options.sources)


def _report_markdown(report: Report, options: RenderOptions) -> str:
    from stackcheck.redact import safe_tree
    from stackcheck.render.markdown import render_markdown

    return render_markdown(cast("Report", safe_tree(_public(report))), sources=options.sources)


def _report_prometheus(report: Report, options: RenderOptions) -> str:
    from stackcheck.render.prometheus import render_prometheus

    return render_prometheus(cast("Report", _public(report)))


def _report_nfd(report: Report, options: RenderOptions) -> str:
    from stackcheck.render.nfd import render_nfd

    return render_nfd(cast("Report", _public(report)))


REPORT_FORMATS: Final[dict[str, Renderer[Report]]] = {
    "text": _report_text,
    "json": _json,
    "markdown": _report_markdown,
    "prometheus": _report_prometheus,
    "nfd": _report_nfd,
}
#: `stackcheck probe`: the facts; the text lists them (a report without verdicts or plan)
PROBE_FORMATS: Final[dict[str, Renderer[Report]]] = {
    "text": _report_text,
    "json": _json,
    "markdown": _report_markdown,
}
#: `stackcheck plan`: the text and markdown show the box and the plan, the JSON the whole report
PLAN_FORMATS: Final[dict[str, Renderer[Report]]] = {
    "text": _report_text,
    "json": _json,
    "markdown": _report_markdown,
}


# ---- the gate's decision ---------------------------------------------------------------------------------


def _gate_text(decision: Document, options: RenderOptions) -> str:
    from stackcheck.render.gate import render_text

    return render_text(_public(decision), options.warnings_only, options.verbose, options.width)


GATE_FORMATS: Final[dict[str, Renderer[Document]]] = {"text": _gate_text, "json": _json}


# ---- triage -----------------------------------------------------------------------------------------------


def _triage_text(report: TriageReport, options: RenderOptions) -> str:
    from stackcheck.render.triage import render_report

    return render_report(report)


def _triage_json(report: TriageReport, options: RenderOptions) -> str:
    from stackcheck.render.jsonout import json_document

    return json_document(report.to_json(), compact=options.compact)


TRIAGE_FORMATS: Final[dict[str, Renderer[TriageReport]]] = {"text": _triage_text, "json": _triage_json}


# ---- fleet ------------------------------------------------------------------------------------------------


def _fleet_text(report: FleetReport, options: RenderOptions) -> str:
    from stackcheck.render.fleet import render_text

    return render_text(_fleet_summary(report))


def _fleet_json(report: FleetReport, options: RenderOptions) -> str:
    from stackcheck.render.jsonout import json_document

    return json_document(_fleet_summary(report), compact=options.compact)


def _fleet_markdown(report: FleetReport, options: RenderOptions) -> str:
    from stackcheck.render.fleet import render_markdown

    return render_markdown(_fleet_summary(report))


def _fleet_csv(report: FleetReport, options: RenderOptions) -> str:
    from stackcheck.render.fleet import render_csv

    return render_csv(report.fleet, report.summary)  # each cell masked and escaped (render.fleet.csv_cell)


def _fleet_summary(report: FleetReport) -> Any:
    """The summary as it may be shown: the host names, GPU names and versions come from files that stackcheck
    did not necessarily write, and a secret in one is masked (stackcheck.redact)."""
    return _public(report.summary)


FLEET_FORMATS: Final[dict[str, Renderer[FleetReport]]] = {
    "text": _fleet_text,
    "json": _fleet_json,
    "markdown": _fleet_markdown,
    "csv": _fleet_csv,  # one row per host
}


# ---- explain, diff, recommend -----------------------------------------------------------------------------


def _explain_text(doc: Document, options: RenderOptions) -> str:
    from stackcheck.render.explain import render_text

    return render_text(_public(doc), options.width, options.sources)


EXPLAIN_FORMATS: Final[dict[str, Renderer[Document]]] = {"text": _explain_text, "json": _json}


def _diff_text(doc: Document, options: RenderOptions) -> str:
    from stackcheck.redact import safe_tree
    from stackcheck.render.diff import render_text

    return render_text(safe_tree(_public(doc)), options.width)


def _diff_markdown(doc: Document, options: RenderOptions) -> str:
    from stackcheck.redact import safe_tree
    from stackcheck.render.diff import render_markdown

    return render_markdown(safe_tree(_public(doc)))


DIFF_FORMATS: Final[dict[str, Renderer[Document]]] = {"text": _diff_text, "json": _json, "markdown": _diff_markdown}


def _recommend_text(doc: Document, options: RenderOptions) -> str:
    from stackcheck.render.recommend import render_text

    return render_text(_public(doc))


def _recommend_shell(doc: Document, options: RenderOptions) -> str:
    from stackcheck.render.recommend import render_shell

    return render_shell(_public(doc))


RECOMMEND_FORMATS: Final[dict[str, Renderer[Document]]] = {
    "text": _recommend_text,
    "json": _json,
    "shell": _recommend_shell,  # one command per line, every argument quoted
}


#: every document and its formats
DOCUMENTS: Final[dict[str, Mapping[str, Renderer[Any]]]] = {
    "report": REPORT_FORMATS,
    "probe": PROBE_FORMATS,
    "plan": PLAN_FORMATS,
    "gate": GATE_FORMATS,
    "triage": TRIAGE_FORMATS,
    "fleet": FLEET_FORMATS,
    "explain": EXPLAIN_FORMATS,
    "diff": DIFF_FORMATS,
    "recommend": RECOMMEND_FORMATS,
}

#: old format names still accepted, with a deprecation note on stderr
FORMAT_ALIASES: Final[dict[str, str]] = {"table": "text"}
