"""The command line: parse into options, build the parts, run the core, return an int.

Each verb lives in its own module (cmd_<verb>.py) with `add_arguments(parser)` and `run(args) -> int`."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from stackcheck import __version__
from stackcheck.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, StackcheckError

# verb -> (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "audit": ("stackcheck.cmd_audit", "probe this box (or read --facts) and say which serving features work"),
    "probe": ("stackcheck.cmd_probe", "print the facts about this box: driver, GPUs, toolkits, packages, system"),
    "plan": ("stackcheck.cmd_plan", "ordered upgrade steps with commands, and what each unblocks"),
    "recommend": ("stackcheck.cmd_recommend", "the launch that works and is fastest here: plan, command line, why"),
    "gate": ("stackcheck.cmd_gate", "refuse to start a server whose features are blocked, else exec it"),
    "explain": ("stackcheck.cmd_explain", "what a feature needs on an architecture, release by release"),
    "triage": ("stackcheck.cmd_triage", "find the root cause of a crash in a server log"),
    "fleet": ("stackcheck.cmd_fleet", "summarise many saved reports: stacks, drift, upgrade waves"),
    "manifests": ("stackcheck.cmd_manifests", "validate manifest files (shipped or your own)"),
}

EPILOG = """exit codes:
  0  success: the stack is consistent (audit), every required feature is ok (gate), a plan exists (plan),
     the log or the reports were read (triage, fleet)
  1  a finding: a stack check failed (audit), a required feature is not ok (gate), no stack satisfies the
     request (plan), an input was skipped with --strict (fleet)
  2  usage error or bad input (arguments, manifest, facts file, log file)
  3  a probe failed and --strict was given
  4  internal error (a bug in stackcheck: please report it)
  gate with a command: once the server runs, its own status (126/127: it could not be executed / found)
"""


def _version_text() -> str:
    try:
        from stackcheck.manifest_loader import load

        m = load([], env={})
        data = f"manifests {m.data_version} (data of {m.date})"
    except StackcheckError as exc:
        data = f"manifests unreadable: {exc.message}"
    return f"stackcheck {__version__}, {data}"


class _VersionAction(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: object) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, help="show the tool and manifest data versions")

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        print(_version_text())
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stackcheck",
        description="Audit a GPU box before it serves large language models.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in COMMANDS.items():
        p = sub.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if only is None or only == name:
            importlib.import_module(module).add_arguments(p)
    return parser


def main_inner(argv: Sequence[str]) -> int:
    argv = list(argv)
    verb = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(verb if verb in COMMANDS else None)
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    module = importlib.import_module(COMMANDS[args.command][0])
    return int(module.run(args))


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return main_inner(sys.argv[1:] if argv is None else argv)
    except StackcheckError as exc:
        print(f"stackcheck: error: {exc.message}", file=sys.stderr)
        for extra in getattr(exc, "problems", [])[1:]:
            print(f"stackcheck: error: {extra}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("stackcheck: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: one line, exit 4, never a traceback by default
        import os

        print(f"stackcheck: internal error: {type(exc).__name__}: {exc}".splitlines()[0], file=sys.stderr)
        print("stackcheck: this is a bug; rerun with STACKCHECK_DEBUG=1 for the traceback", file=sys.stderr)
        if os.environ.get("STACKCHECK_DEBUG"):
            import traceback

            traceback.print_exc()
        return EXIT_INTERNAL
