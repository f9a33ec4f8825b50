"""Options shared by several verbs, and writing a command's output."""

from __future__ import annotations

import argparse
import os
import sys

from stackcheck.pipeline import Options


def add_facts_options(p: argparse.ArgumentParser, assume: bool = True) -> None:
    p.add_argument(
        "--facts", metavar="FILE", help="read a saved report or facts document instead of probing ('-' for stdin)"
    )
    p.add_argument(
        "--manifests",
        metavar="DIR",
        action="append",
        default=[],
        help="add or override manifest entries from DIR (repeatable; also $STACKCHECK_MANIFESTS)",
    )
    p.add_argument("--strict", action="store_true", help="exit 3 when a probe fails or times out")
    p.add_argument(
        "--deep", action="store_true", help="also read the CUDA architectures compiled into the installed binaries"
    )
    p.add_argument(
        "--timeout", type=float, default=8.0, metavar="SECONDS", help="time budget for the probes (default 8)"
    )
    if assume:
        p.add_argument("--assume-gpu", metavar="CC[xN]", help="evaluate for GPUs that are not here, e.g. 12.0x8")
        p.add_argument(
            "--assume-driver", metavar="VERSION", help="evaluate for a driver that is not here, e.g. 580.95.05"
        )
        p.add_argument(
            "--assume-interconnect",
            metavar="KIND",
            help="nvswitch (NVLink through NVSwitch) | nvlink | pcie-switch | pcie-host-bridge | cross-socket | pcie",
        )


def add_output_options(p: argparse.ArgumentParser, formats: list[str]) -> None:
    p.add_argument(
        "--format",
        choices=formats,
        default=None,
        help=f"output format (default: table on a terminal, else table as plain text); one of {', '.join(formats)}",
    )
    p.add_argument(
        "--output", metavar="FILE", help="write to FILE atomically (temporary file, then rename) instead of stdout"
    )


def options_from(args: argparse.Namespace) -> Options:
    return Options(
        facts_file=getattr(args, "facts", None),
        manifests_dirs=list(getattr(args, "manifests", []) or []),
        assume_gpu=getattr(args, "assume_gpu", None),
        assume_driver=getattr(args, "assume_driver", None),
        assume_interconnect=getattr(args, "assume_interconnect", None),
        strict=bool(getattr(args, "strict", False)),
        deep=bool(getattr(args, "deep", False)),
        timeout_s=float(getattr(args, "timeout", 8.0) or 8.0),
    )


def use_color(args: argparse.Namespace) -> bool:
    if getattr(args, "output", None) or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def emit(text: str, args: argparse.Namespace) -> None:
    """The report goes to stdout (or --output, atomically); diagnostics go to stderr."""
    out = getattr(args, "output", None)
    if out:
        from stackcheck.atomic import write_atomic

        write_atomic(out, text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
