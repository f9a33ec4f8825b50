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
    opts = options_from(args)

    def also() -> None:  # (in build_report's loading thread, while the probes wait on the driver)
        _prepare(fmt)

    report, ctx = build_report(opts, plan_cache=True, also=None if opts.facts_file else also)
    report = normalize(report, ctx.manifests.sources)  # every `source` as [{id, title, url}]
    emit(REPORT_FORMATS[fmt](report, render_options(args)), args)
    return EXIT_OK if report["summary"]["consistent"] else EXIT_FINDING


#: the modules each report format imports when it renders (stackcheck.render), and what writes it out
_RENDERERS = {
    "json": ("stackcheck.render.jsonout", "stackcheck.render.jsonindent"),
    "text": ("stackcheck.render.text",),
    "markdown": ("stackcheck.render.markdown",),
    "prometheus": ("stackcheck.render.prometheus",),
    "nfd": ("stackcheck.render.nfd",),
}


def _prepare(fmt: str) -> None:
    """A probed audit imports its renderer and the atomic writer in build_report's loading thread, while the
    probes wait on the driver, so that nothing is imported after the facts arrive; and compiles there the patterns
    the sources' normalization uses (the ids of inline sources: five patterns, ~3 ms of CPU on the 2-core box, which
    the report's first normalization paid after the facts). A module that cannot be imported is skipped here: it
    fails again where it is used, as before."""
    from importlib import import_module

    for name in (*_RENDERERS.get(fmt, ()), "stackcheck.atomic"):
        try:
            import_module(name)
        except Exception:  # noqa: S112 - imported again, and the error raised, where it is used
            continue
    import stackcheck.knowledge.sources
    from stackcheck.lazy_re import compile_all

    compile_all(stackcheck.knowledge.sources)
