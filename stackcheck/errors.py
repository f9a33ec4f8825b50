"""Every error stackcheck raises on purpose, each with its exit code.

`cli.main()` catches `StackcheckError` and exits with `exit_code`; anything else is an internal error
(exit 4). Exit codes, documented in `--help` and the README:

0  success: the stack is consistent (audit), every required feature ok (gate)
1  a finding: a stack check failed (audit), a required feature is not ok (gate)
2  usage error or bad input (bad arguments, manifest, facts file, log file)
3  a probe failed and --strict was given
4  internal error (a bug in stackcheck), or a dependency of stackcheck that cannot be imported
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FINDING = 1
EXIT_BAD_INPUT = 2
EXIT_PROBE_FAILED = 3
EXIT_INTERNAL = 4


class StackcheckError(Exception):
    """Base of the errors that end a run with a one-line message."""

    exit_code = EXIT_INTERNAL

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(StackcheckError):
    """Bad command-line arguments."""

    exit_code = EXIT_BAD_INPUT


class BadInputError(StackcheckError):
    """A file given to stackcheck cannot be used: the message names the file and the place in it."""

    exit_code = EXIT_BAD_INPUT


class ManifestError(BadInputError):
    """One or more manifest files are invalid; `problems` lists every one ("file: $.path: message")."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        head = problems[0] if problems else "invalid manifests"
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(head + more)


class OutputError(StackcheckError):
    """An output file could not be written; the old file, if any, is left in place."""

    exit_code = EXIT_BAD_INPUT


class ProbeFailedError(StackcheckError):
    """A probe failed and --strict was given."""

    exit_code = EXIT_PROBE_FAILED
