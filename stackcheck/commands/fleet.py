"""`stackcheck fleet PATH...`: summarise many saved reports (`stackcheck audit --format json` output).

PATH is a report file, a directory (walked recursively for *.json and *.jsonl), a JSON Lines file
(*.jsonl, one report a line) or `-` for JSON Lines on standard input.

Output: hosts per GPU model and per stack (driver, torch, kernels, flashinfer, sglang), hosts per feature
status and per stack-check status, drift (hosts whose stack differs from the most common stack of their
GPU model), and the upgrade plans grouped into waves (hosts with the same step sequence). A host that
reported twice counts once, with its newest report (host.collected_at; on a tie, the later input).

Bad inputs (unreadable, truncated, binary, empty, not a stackcheck report, a newer schema_version) are
listed with their reason and skipped; every good report is still counted.

Exit codes: 0 when at least one report was read (bad inputs alone do not fail the run); 1 with --strict
when any input was skipped as bad; 2 when no report at all could be read.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from stackcheck.commands.arguments import add_output_options, emit, file_name, format_choice, render_options
from stackcheck.documents.fleet import Fleet, FleetReport, read_fleet
from stackcheck.errors import EXIT_BAD_INPUT, EXIT_FINDING, EXIT_OK, BadInputError
from stackcheck.redact import shown_field
from stackcheck.render import FLEET_FORMATS

if TYPE_CHECKING:
    from stackcheck.documents.types import FleetSince, HostChange


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="report files, directories, *.jsonl files, or '-'")
    add_output_options(p, FLEET_FORMATS)  # csv: one row per input document
    p.add_argument(
        "--since",
        metavar="PATH",
        type=file_name,
        action="append",
        default=[],
        help="an older collection (directory, file, *.jsonl; repeatable): list the hosts whose feature "
        "verdicts changed since, and those that came or went",
    )
    p.add_argument("--strict", action="store_true", help="exit 1 when any input was skipped as bad")
    p.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="worker processes for parsing (default 0: one per available CPU, at most 8; 1: no workers)",
    )


def run(args: argparse.Namespace) -> int:
    if int(args.jobs) < 0:
        from stackcheck.errors import UsageError

        raise UsageError(f"--jobs {args.jobs}: expected 0 (one per CPU) or a positive number of worker processes")
    fleet = read_fleet(args.paths, jobs=int(args.jobs))
    summary = fleet.summary()
    if not fleet.hosts:
        for bad in summary["bad"][:20]:
            print(f"stackcheck: skipped {shown_field(bad['input'])}: {shown_field(bad['reason'])}", file=sys.stderr)
        what = f"{len(fleet.bad)} input(s), none of them a readable report" if fleet.bad else "no input documents"
        raise BadInputError(f"fleet: {what}")
    if args.since:
        since, changes = since_changes(fleet, read_fleet(args.since, jobs=int(args.jobs)), args.since)
        summary["since"] = since
        summary["changes"] = changes
    emit(FLEET_FORMATS[format_choice(args)](FleetReport(fleet, summary), render_options(args)), args)
    if args.strict and fleet.bad:
        return EXIT_FINDING
    return EXIT_OK


_ = EXIT_BAD_INPUT  # documented above: raised as BadInputError


def since_changes(now: Fleet, before: Fleet, paths: list[str]) -> tuple[FleetSince, list[HostChange]]:
    """`since` (the older collection read) and `changes` (hosts whose verdicts changed, came or went)."""
    from stackcheck.documents.diff import fleet_changes

    def verdicts(fleet: Fleet) -> dict[str, Any]:
        return {name: (rec[1], list(rec[5][0])) for name, rec in fleet.hosts.items()}

    since: FleetSince = {"inputs": list(paths), "hosts": len(before.hosts), "bad": len(before.bad)}
    return since, fleet_changes(verdicts(before), verdicts(now))
