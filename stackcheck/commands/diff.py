"""`stackcheck diff A [B]`: what changed between two saved reports of a box, or a saved report and this box
now (B left out, or `-` on a terminal; `-` piped is a report on standard input): versions, every feature's
verdict (ok → blocked and back), the stack checks, the plan. This is how an upgrade is verified:

    stackcheck audit --format json --output before.json
    ... upgrade ...
    stackcheck diff before.json          # exit 1 when a feature that was ok is no longer ok

A saved audit is compared as it was judged; a facts-only document (`stackcheck probe`), and both sides with
--rejudge, are judged with today's manifests. Exit codes: 0 no feature lost, 1 a feature that was ok is not
(the JSON's `regressions`), 2 bad input."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import Any

from stackcheck.commands.arguments import (
    add_facts_options,
    add_output_options,
    emit,
    format_choice,
    options_from,
    render_options,
)
from stackcheck.errors import EXIT_FINDING, EXIT_OK, BadInputError
from stackcheck.render import DIFF_FORMATS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("before", metavar="A", help="a saved report (stackcheck audit --format json) or facts document")
    p.add_argument(
        "after",
        metavar="B",
        nargs="?",
        default=None,
        help="another one; left out: this box now ('-': standard input, or this box when it is a terminal)",
    )
    p.add_argument(
        "--rejudge", action="store_true", help="judge both sides' facts with today's manifests (box changes only)"
    )
    add_facts_options(p)
    add_output_options(p, DIFF_FORMATS)


def _load(path: str, args: argparse.Namespace, rejudge: bool) -> tuple[Mapping[str, Any], str, str]:
    """(report with features, checks and plan; origin; how it was judged)."""
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report
    from stackcheck.facts.model import load_report_document

    doc = load_report_document(path)
    origin = "<stdin>" if path == "-" else path
    if not rejudge and isinstance(doc.get("features"), list):
        return doc, origin, "as saved"
    opts = Options(facts_file=path if path != "-" else None, manifests_dirs=list(args.manifests or []))
    if path == "-":  # stdin is read once: judge the document already read
        import os
        import tempfile

        from stackcheck.render.jsonout import json_document

        fd, tmp = tempfile.mkstemp(suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json_document(doc))
            opts.facts_file = tmp
            report, _ = build_report(opts)
        finally:
            os.unlink(tmp)
    else:
        report, _ = build_report(opts)
    if isinstance(doc.get("host"), dict):
        report["host"] = doc["host"]
    return report, origin, "now"


def _now(args: argparse.Namespace) -> tuple[Mapping[str, Any], str, str]:
    from stackcheck.assembly.pipeline import build_report

    report, _ = build_report(options_from(args))
    return report, "this box now", "now"


def run(args: argparse.Namespace) -> int:
    from stackcheck.documents.diff import diff_reports

    fmt = format_choice(args)
    if args.before == "-" and args.after in (None, "-"):
        raise BadInputError("diff: only one side can be read from standard input")
    a, origin_a, judged_a = _load(args.before, args, args.rejudge)
    stdin_tty = sys.stdin is not None and sys.stdin.isatty()
    if args.after is None or (args.after == "-" and stdin_tty) or args.facts:
        if args.facts:
            args.after = args.facts
            b, origin_b, judged_b = _load(args.facts, args, args.rejudge)
        else:
            b, origin_b, judged_b = _now(args)
    else:
        b, origin_b, judged_b = _load(args.after, args, args.rejudge)
    doc = diff_reports(a, b, origin_a, origin_b, judged_a, judged_b)
    emit(DIFF_FORMATS[fmt](doc, render_options(args)), args)
    return EXIT_FINDING if doc["regressions"] else EXIT_OK
