"""imend14: the runners' options that print and exit, or refuse, without running the command (`nice --help`,
`stdbuf --version`, `taskset -h`, `chrt -V`, `ionice -h`, `setsid -V`, `time --help`, `strace -V`, numactl's
`--version` and its shared-memory options) were read as plain options and the launch after them judged as the one
that runs (allowed). Now unknown, "runs no command", with the runner named: RUNNERS' no_command / no_command_long,
one rule in read_runner. Their ordinary options are read as before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import RUNNERS, read_runner

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]

PRINT_AND_EXIT = [
    ["nice", "--help"],
    ["nice", "--version"],
    ["nice", "--vers"],  # (getopt_long's unique prefix)
    ["nice", "-n", "5", "--help"],
    ["stdbuf", "--help"],
    ["stdbuf", "-oL", "--version"],
    ["taskset", "-h"],
    ["taskset", "-V"],
    ["taskset", "--help"],
    ["taskset", "-aV"],  # (in a cluster)
    ["chrt", "-h"],
    ["chrt", "-V"],
    ["chrt", "--version"],
    ["chrt", "-f", "-h"],
    ["ionice", "-h"],
    ["ionice", "-V"],
    ["ionice", "-c", "2", "--help"],
    ["setsid", "-h"],
    ["setsid", "-V"],
    ["setsid", "--version"],
    ["setsid", "-fh"],
    ["time", "--help"],
    ["time", "-V"],
    ["time", "--version"],
    ["time", "-pV"],
    ["numactl", "--version"],
    ["numactl", "-V"],  # (--verify: needs a shared-memory segment, else usage and exit 1)
    ["numactl", "--verify"],
    ["numactl", "-S", "key"],
    ["numactl", "--file", "/dev/shm/x"],
    ["numactl", "--length", "1g"],
    ["numactl", "-o", "0"],
    ["numactl", "--huge"],
    ["numactl", "-d"],
    ["numactl", "--touch"],
    ["numactl", "--cpunodebind=0", "--show"],
    ["strace", "-h"],
    ["strace", "-V"],
    ["strace", "--help"],
    ["strace", "-f", "--version"],
]

RUNS_IT = [
    ["nice", "-n", "5"],
    ["nice", "--adjustment=5"],
    ["stdbuf", "-oL", "-eL"],
    ["taskset", "-c", "0-7"],
    ["taskset", "--cpu-list", "0-7"],
    ["chrt", "-f", "50"],
    ["chrt", "--rr", "10"],
    ["ionice", "-c", "2", "-n", "0"],
    ["ionice", "-t", "-c", "3"],
    ["setsid", "-f"],
    ["setsid", "--wait"],
    ["time", "-p"],
    ["time", "-v", "-o", "out.txt"],
    ["numactl", "--cpunodebind=0", "--membind=0"],
    ["numactl", "-N", "0", "-l"],
    ["numactl", "--interleave=all"],
    ["numactl", "-C", "0-7", "-t"],
    ["strace", "-f", "-o", "trace.txt"],
]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _unknown(words: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*words, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", words
    return [p.message for p in d.problems if p.subject == words[0] and p.status in ("unknown", "blocked")]


@pytest.mark.parametrize("words", PRINT_AND_EXIT)
def test_a_runner_that_prints_and_exits_is_unknown(words: list[str], mapping: Any) -> None:
    # fails before (all but numactl -S / --file / -d / --touch / --show and --version, unknown before by other
    # readings): no problem of the runner's, the launch after it allowed
    got = _unknown(words, mapping)
    assert len(got) == 1 and "runs no command" in got[0] and f"`{words[0]}`" in got[0], (words, got)


@pytest.mark.parametrize("words", PRINT_AND_EXIT)
def test_read_runner_places_no_command(words: list[str]) -> None:
    reading = read_runner([*words, *LAUNCH], 0)
    assert reading.command is None and reading.unsure is None, (words, reading)


@pytest.mark.parametrize("words", RUNS_IT)
def test_the_ordinary_options_are_read_as_before(words: list[str], mapping: Any) -> None:
    assert _unknown(words, mapping) == [], words
    assert read_runner([*words, *LAUNCH], 0).command == len(words), words


@pytest.mark.parametrize("program", sorted(RUNNERS))
def test_no_print_and_exit_option_is_also_listed_as_plain(program: str) -> None:
    # (a no-command option that is also a value one is read as no command first: strace -p PID, its value a pid)
    spec = RUNNERS[program]
    assert not set(spec.short_plain) & set(spec.no_command), program
    assert not spec.long_plain & spec.no_command_long, program
    assert not set(spec.short_plain) & set(spec.short_value), program
