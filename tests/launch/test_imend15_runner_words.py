"""imend15: the scan for a launch written inside one word (gate._launch_in_one_word, irobust11) never reads a word a
known runner before it owns (runners.runner_words: its own words, its options and their values, its positional
words), in place of irobust11's special case (no unknown where a problem before it was blocked). A job's name
(`srun -J '...'`) or a prompt (`sudo -p '...'`) holding launch-looking text runs nothing, so it is no launch in one
word; a flock that refuses its words owns them all (its blocked problem alone, not two); a program no runner reads
(tmux) still runs its string its own way: unknown, naming that program."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import runner_words

LAUNCH = "python -m sglang.launch_server --model-path m --tp 2"
IN_ONE_WORD = "the launch is written inside one word"


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(argv: list[str], mapping: Any) -> list[tuple[str, str, str]]:
    d = gate.derive(argv, mapping, {})
    return [(p.subject, p.status, p.message) for p in d.problems if p.status != "note"]


def test_a_refusing_flock_gives_one_problem_not_two(mapping: Any) -> None:
    got = _problems(["flock", "-w", "abc", "F", "-c", LAUNCH], mapping)
    assert [(s, st) for s, st, _ in got] == [("flock", "blocked")], got
    assert runner_words(["flock", "-w", "abc", "F", "-c", LAUNCH]) == frozenset(range(6))


def test_tmux_still_runs_its_string_its_own_way(mapping: Any) -> None:
    got = _problems(["tmux", "new-session", "-d", LAUNCH], mapping)
    assert [(s, st) for s, st, _ in got] == [("tmux", "unknown")] and IN_ONE_WORD in got[0][2], got
    assert runner_words(["tmux", "new-session", "-d", LAUNCH]) == frozenset()


@pytest.mark.parametrize(
    "prefix",
    [["srun", "-J", LAUNCH], ["srun", f"--job-name={LAUNCH}"], ["sudo", "-p", LAUNCH, "-u", "bob"],
     ["nice", "-n", "5", "srun", "--comment", LAUNCH]],
    ids=["srun-J", "srun-job-name", "sudo-p", "nice-srun-comment"],
)  # fmt: skip
def test_a_runners_option_value_is_no_launch_in_one_word(prefix: list[str], mapping: Any) -> None:
    argv = [*prefix, "./serve.sh", "--tp", "4"]
    got = _problems(argv, mapping)
    assert not [m for _, _, m in got if IN_ONE_WORD in m], got  # (fails before: unknown, the value read as a launch)
    assert argv.index("./serve.sh") not in runner_words(argv)
    assert set(range(argv.index("./serve.sh"))) == set(runner_words(argv))


def test_the_program_after_the_runners_is_the_one_named(mapping: Any) -> None:
    got = _problems(["nohup", "nice", "-n", "5", "tmux", "new-session", "-d", LAUNCH], mapping)
    assert [(s, st) for s, st, _ in got] == [("tmux", "unknown")], got  # (before: `nohup`, which runs it unchanged)
    assert "argument 3 of `tmux`" in got[0][2]


def test_a_runner_whose_reading_stops_owns_nothing_after_it(mapping: Any) -> None:
    """timeout with a signal it refuses (exit 125): its command's place is not read, so its words are read (fail
    closed): the launch-looking value keeps the launch unknown."""
    argv = ["timeout", "-s", LAUNCH, "10", "./serve.sh"]
    assert runner_words(argv) == frozenset()
    assert [st for _, st, _ in _problems(argv, mapping)] == ["unknown"]
