"""imend6: util-linux flock(1) read as its sys-utils/flock.c reads its words (runners.read_flock), not as a shell's -c.

flock takes options only before the lock file (getopt_long "+sexnoFuw:E:hV?", its long options by a unique prefix),
then runs either the one word after exactly `-c` or `--command` through `$SHELL -c`, or the program and its
arguments; one word alone is a file descriptor to lock (nothing runs), -h / -V print and exit, and a usage error
exits 64 before anything runs. Before:
- the shell-string reader of SGLang's arguments (gate._shell_cut) read `flock FILE -c STRING` but not `--command
  STRING`: a launch string with `$X` in it had its words after `$X` judged as if the shell passed them as written;
- `flock -c STRING FILE` (invalid option), `flock FILE -c STRING extra` / `-c -- STRING` ('requires exactly one
  command argument'), `flock -h ...` were read as running the launch, and `flock FILE -lc STRING` / `-n -c STRING`
  (flock execvp's the word `-lc` / `-n` as a program) as a shell running it: each judged as if the launch started.
The command lines are written here (no upstream file)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

TEXT = "python -m sglang.launch_server --model-path /m --tp 2"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load().launch


@pytest.mark.parametrize("spelling", ["-c", "--command"])
def test_the_shell_string_reader_reads_flocks_command_string(spelling: str, mapping: Any) -> None:
    # fails before for --command: the words after $X (which the shell expands: any words) were kept as written
    line = ["flock", "-w", "5", "/tmp/l", spelling, TEXT + " $X --dp 2"]
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server"
    assert gate._shell_cut(d.command, list(d.sglang_args)) == ["--model-path", "/m", "--tp", "2"]


@pytest.mark.parametrize(
    ("words", "kind", "at"),
    [
        (["/tmp/l", "-c", TEXT], "string", 3),
        (["-x", "-w", "5", "/tmp/l", "--command", TEXT], "string", 6),
        (["-w5", "-E", "3", "--", "/tmp/l", "-c", TEXT], "string", 7),
        (["--timeout=5", "--nb", "--conf", "9", "/tmp/l", "-c", TEXT], "string", 7),
        (["--wait", "5", "--fcntl", "--start", "0", "/tmp/l", "-c", TEXT], "string", 8),
        (["-s", "/tmp/l", "python", "-m", "sglang.launch_server"], "argv", 3),
        (["/tmp/l", "-lc", TEXT], "argv", 2),  # (a program named -lc)
        (["/tmp/l", "--command=" + TEXT], "argv", 2),
        (["/tmp/l", "-n", "-c", TEXT], "argv", 2),  # (options only before the file)
        (["9"], "none", None),
        (["-h", "/tmp/l", "-c", TEXT], "none", None),
        (["--vers", "/tmp/l", "-c", TEXT], "none", None),
        (["-c", TEXT, "/tmp/l"], "refused", None),
        (["/tmp/l", "-c", TEXT, "extra"], "refused", None),
        (["/tmp/l", "-c", "--", TEXT], "refused", None),
        (["/tmp/l", "-c"], "refused", None),  # (-c without its string)
        (["--n", "/tmp/l", "-c", TEXT], "refused", None),  # (--nonblocking, --nb and --no-fork: ambiguous)
        (["--ver", "/tmp/l", "-c", TEXT], "refused", None),  # (--verbose, --version)
        (["-F", "-o", "/tmp/l", "-c", TEXT], "refused", None),
        (["--shared=1", "/tmp/l", "-c", TEXT], "refused", None),
        (["-w"], "refused", None),
        ([], "refused", None),
    ],
)
def test_read_flock(words: list[str], kind: str, at: int | None) -> None:
    from stackcheck.launch.runners import read_flock

    got = read_flock(["flock", *words], 0)
    assert (got.kind, got.at) == (kind, at), got


@pytest.mark.parametrize(
    ("words", "status"),
    [
        (["-c", TEXT, "/tmp/l"], "blocked"),
        (["/tmp/l", "-c", TEXT, "--dp", "2"], "blocked"),
        (["/tmp/l", "-c", "--", TEXT], "blocked"),
        (["-h", "python", "-m", "sglang.launch_server", "--tp", "2"], "blocked"),
        (["/tmp/l", "-lc", TEXT], "unknown"),
        (["/tmp/l", "--command=" + TEXT], "unknown"),
        (["/tmp/l", "-n", "-c", TEXT], "unknown"),
    ],
)
def test_a_flock_that_does_not_run_the_launch_is_never_judged_as_running_it(
    words: list[str], status: str, mapping: Any
) -> None:
    # fails before: read as `launch-server` with no flock problem (the launch judged as if it started)
    d = gate.derive(["nohup", "flock", *words], mapping, {})
    assert d.entrypoint != "launch-server", d.entrypoint
    assert ("flock", status) in [(p.subject, p.status) for p in d.problems], d.problems


@pytest.mark.parametrize(
    "words",
    [["/tmp/l", "-c", TEXT], ["-n", "-E", "3", "/tmp/l", "--command", TEXT],
     ["/tmp/l", "python", "-m", "sglang.launch_server", "--model-path", "/m", "--tp", "2"]],
)  # fmt: skip
def test_the_forms_flock_runs_are_still_read(words: list[str], mapping: Any) -> None:
    d = gate.derive(["flock", *words], mapping, {})
    assert d.entrypoint == "launch-server" and d.sglang_args[-2:] == ["--tp", "2"], (d.entrypoint, d.sglang_args)
    assert not [p for p in d.problems if p.subject == "flock"]


@pytest.mark.parametrize("runner", [["flock", "/tmp/l", "-c"], ["bash", "-c"], ["flock", "/tmp/l", "bash", "-c"]])
def test_a_string_whose_last_word_is_named_flock_is_no_flock(runner: list[str], mapping: Any) -> None:
    d = gate.derive([*runner, TEXT + " --served-model-name /x/flock"], mapping, {})
    assert d.entrypoint == "launch-server" and d.sglang_args[-2:] == ["--served-model-name", "/x/flock"], d.sglang_args
    assert not [p for p in d.problems if p.subject == "flock"]
