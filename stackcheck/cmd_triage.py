"""`stackcheck triage LOGFILE`: the root cause of a crashed server, from its log.

Exit codes: 0 when the log was read (whether or not an error was found), 2 when it cannot be read.
"""

from __future__ import annotations

import argparse
import sys

from stackcheck.triage import render_json, render_text, triage_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("log", help="the server log to read; '-' reads standard input")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--facts", metavar="FILE", default=None, help="a saved report or facts file (accepted; not used yet)"
    )


def run(args: argparse.Namespace) -> int:
    result = triage_file(args.log)
    out = render_json(result) if args.format == "json" else render_text(result)
    sys.stdout.write(out)
    return 0
