"""`stackcheck probe`: the facts, nothing judged."""

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
from stackcheck.render import PROBE_FORMATS


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_facts_options(p, assume=False)
    add_output_options(p, PROBE_FORMATS)


def run(args: argparse.Namespace) -> int:
    from stackcheck.assembly.pipeline import gather
    from stackcheck.documents.report import base_report
    from stackcheck.knowledge.loader import load

    opts = options_from(args)
    manifests = load(opts.manifests_dirs)
    facts, outcomes, host = gather(opts)
    report = base_report(facts, outcomes, manifests, host)
    emit(PROBE_FORMATS[format_choice(args)](report, render_options(args)), args)
    return 0
