"""The argument parser of the command line (split from cli.py so that argparse, with re and gettext, is
imported after NVML has been started: see stackcheck.probes.nvml_early)."""

from __future__ import annotations

import argparse
import importlib
import sys

from stackcheck import __version__
from stackcheck.errors import EXIT_BAD_INPUT, StackcheckError, UsageError
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

EPILOG = """exit codes:
  0  success: the stack is consistent (audit), every required feature is ok (gate), a plan exists (plan),
     the log or the reports were read (triage, fleet)
  1  a finding: a stack check failed (audit), a required feature is not ok (gate), no stack satisfies the
     request (plan), an input was skipped with --strict (fleet), a feature that was ok is not (diff)
  2  usage error or bad input (arguments, manifest, facts file, log file)
  3  a probe failed and --strict was given
  4  internal error (a bug in stackcheck: please report it), or a dependency missing
  gate with a command: once the server runs, its own status (126/127: it could not be executed / found)
"""


def _version_text() -> str:
    try:
        from stackcheck.knowledge.loader import load

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
        from stackcheck.atomic import write_stdout

        write_stdout(_version_text() + "\n")
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors never show a secret or a control character: a mistyped command line
    (`stackcheck recommend --api-key sk-...` without the `--`) is quoted back masked (stackcheck.redact)."""

    def parse_args(self, args: Any = None, namespace: Any = None) -> Any:
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            from stackcheck.redact import redact_argv

            self.error(f"unrecognized arguments: {' '.join(redact_argv(extras))}")
        return parsed

    def error(self, message: str) -> None:  # type: ignore[override]
        from stackcheck.redact import message_safe

        self.print_usage(sys.stderr)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message_safe(message)}\n")


def _columns() -> int:
    """shutil.get_terminal_size().columns, without importing shutil (with bz2, lzma and fnmatch: ~2 ms of
    every start): argparse makes a formatter for every add_argument, and its default asks shutil."""
    import os

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's RawDescriptionHelpFormatter at the same width, found without shutil."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)


def build_parser(
    commands: Mapping[str, tuple[str, str]], only: str | None = None, full: bool = False
) -> argparse.ArgumentParser:
    """The parser of the verbs in `commands` (verb -> (module, one-line help): stackcheck.cli.COMMANDS,
    passed in so that this module does not import the command line back). With `only`, the parser of that
    verb (its own arguments, no other verb's); with only=None every verb's subparser without its arguments
    (the top-level help and usage errors need only the names and one-line helps, and importing every cmd
    module to fill them in cost ~30 ms); full=True: every verb with its arguments (the tests compare each
    verb's --help with it)."""
    parser = _Parser(
        prog="stackcheck",
        description="Audit a GPU box before it serves large language models.",
        epilog=EPILOG,
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, (module, help_text) in commands.items():
        if not (full or only is None or only == name):
            continue
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=EPILOG, formatter_class=_Formatter)
        if full or only == name:
            importlib.import_module(module).add_arguments(p)
    return parser


def gate_separator(parser: argparse.ArgumentParser, rest: list[str]) -> None:
    """`stackcheck gate python -m sglang.launch_server ...` (no `--`): the gate's own usage, then the
    command line with the `--` where it belongs (secret values masked), exit 2."""
    from stackcheck.commands.gate import corrected_argv

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["gate"]
    fixed = corrected_argv(rest, sub)
    if fixed is None:
        return
    import shlex

    from stackcheck.redact import redact_argv

    sub.print_usage(sys.stderr)
    shown = shlex.join(["stackcheck", "gate", *redact_argv(fixed)])
    raise UsageError(f"gate: the server command goes after --, as in: {shown}")
