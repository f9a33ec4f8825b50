"""`stackcheck probe`: the facts, nothing judged."""

from __future__ import annotations

import argparse

from stackcheck.options import (
    add_facts_options,
    add_output_options,
    emit,
    format_choice,
    options_from,
    use_color,
)

FORMATS = ["text", "json", "markdown"]


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_facts_options(p, assume=False)
    add_output_options(p, FORMATS)


def run(args: argparse.Namespace) -> int:
    from stackcheck.manifest_loader import load
    from stackcheck.pipeline import gather
    from stackcheck.render import RENDERERS
    from stackcheck.report import base_report

    opts = options_from(args)
    manifests = load(opts.manifests_dirs)
    facts, outcomes, host = gather(opts)
    report = base_report(facts, outcomes, manifests, host)
    emit(RENDERERS[format_choice(args)](report, color=use_color(args)), args)
    return 0
