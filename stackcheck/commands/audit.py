"""`stackcheck audit`: facts, per-feature verdicts, stack checks and the plan.

Exit 0 when the stack is consistent, 1 when a stack check failed; blocked optional features alone do not
fail the audit (`stackcheck gate` handles required features)."""

from __future__ import annotations

import argparse

from stackcheck.commands.arguments import (
    add_facts_options,
    add_output_options,
    emit,
    format_choice,
    options_from,
    render_options,
)
from stackcheck.errors import EXIT_FINDING, EXIT_OK
from stackcheck.render import REPORT_FORMATS


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_facts_options(p)
    add_output_options(p, REPORT_FORMATS, sources=True)


def run(args: argparse.Namespace) -> int:
    from stackcheck.assembly.pipeline import build_report
    from stackcheck.knowledge.sources import normalize

    fmt = format_choice(args)
    report, ctx = build_report(options_from(args), plan_cache=True)
    report = normalize(report, ctx.manifests.sources)  # every `source` as [{id, title, url}]
    emit(REPORT_FORMATS[fmt](report, render_options(args)), args)
    return EXIT_OK if report["summary"]["consistent"] else EXIT_FINDING
