"""`stackcheck audit`: facts, per-feature verdicts, stack checks and the plan.

Exit 0 when the stack is consistent, 1 when a stack check failed; blocked optional features alone do not
fail the audit (`stackcheck gate` handles required features)."""

from __future__ import annotations

from stackcheck.commands.arguments import (
    add_facts_options,
    add_output_options,
    emit,
    format_choice,
    options_from,
    render_options,
)
from stackcheck.errors import EXIT_FINDING, EXIT_OK, UsageError
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.render import REPORT_FORMATS

if TYPE_CHECKING:
    import argparse  # (annotations only: the fast path's audit imports no argparse)
    from collections.abc import Callable
    from typing import Any

#: how an image's containers are started (facts.image.started_by; stackcheck/image/require.py STARTED_BY holds what
#: each runs and its sources: the same names, kept here so that parsing the command line imports no image code)
STARTED_BY_CHOICES = ("docker-gpus", "nvidia-runtime", "cdi-device")


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_facts_options(p)
    add_started_by(p)
    add_output_options(p, REPORT_FORMATS, sources=True)


def add_started_by(p: argparse.ArgumentParser) -> None:
    """--started-by: how the audited image's containers are started on the host (audit and gate)."""
    p.add_argument(
        "--started-by",
        choices=STARTED_BY_CHOICES,
        metavar="HOW",
        help="with --image (or a facts document's image): how its containers start, which decides what checks "
        "NVIDIA_REQUIRE_*: docker-gpus (docker run --gpus, compose deploy.resources.reservations.devices) | "
        "nvidia-runtime (--runtime=nvidia, compose runtime: nvidia, default-runtime nvidia) | cdi-device "
        "(--device nvidia.com/gpu=..., Kubernetes CDI)",
    )


def started_by_gather(args: argparse.Namespace, gather: Callable[[], Any]) -> Callable[[], Any] | None:
    """`gather` (the facts, the probes' outcomes, the host block) with facts.image.started_by set from --started-by;
    None when the option is not given. Without an image to audit it is a usage error, before anything is probed;
    a facts document without an image section, when the facts are read."""
    how = getattr(args, "started_by", None)
    if how is None:
        return None
    if not getattr(args, "image", None) and not getattr(args, "facts", None):
        raise UsageError("--started-by: no image is audited (give --image, or --facts with an image section)")

    def gathered() -> Any:
        facts, outcomes, host = gather()
        image = facts.get("image")
        if not isinstance(image, dict):
            raise UsageError(
                "--started-by: the facts hold no image section (give --image, or a facts document with one)"
            )
        image["started_by"] = how
        return facts, outcomes, host

    return gathered


#: what report.launch_dir.from says of an audit of this host
LAUNCH_DIR_FROM = (
    "the audit's own working directory: a server started from another directory reads a relative or empty "
    "LD_LIBRARY_PATH or PATH element from there (gate --cwd DIR judges a launch from DIR)"
)


def run(args: argparse.Namespace) -> int:
    from stackcheck.assembly.pipeline import audit_report
    from stackcheck.knowledge.sources import normalize

    fmt = format_choice(args)
    opts = options_from(args)
    if not (opts.facts_file or opts.image or opts.root):
        # an audit of this host reads a relative or empty LD_LIBRARY_PATH / PATH element (`/usr/local/cuda/lib64:`, a
        # common trailing ':') from its own working directory, as a gate of this host does (igap45): the server is
        # taken to start where the audit runs; before, every CUDA library such an element could change was unknown
        # on such a box. The report says so (launch_dir); --facts, --image and --root never take it.
        import os

        try:
            opts.launch_dir = os.getcwd()
        except OSError:  # (a working directory removed under the audit: not known)
            opts.launch_dir = None

    def also() -> None:  # (in build_report's loading thread, while the probes wait on the driver)
        _prepare(fmt)

    from stackcheck.assembly.pipeline import gather

    gathered = started_by_gather(args, lambda: gather(opts))
    report, manifests = audit_report(opts, gathered=gathered, also=None if opts.facts_file else also)
    report = normalize(report, manifests.sources)  # every `source` as [{id, title, url}]
    if opts.launch_dir and not opts.facts_file:
        report["launch_dir"] = {"path": opts.launch_dir, "from": LAUNCH_DIR_FROM}
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
