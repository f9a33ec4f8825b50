"""iallow2: coreutils timeout before a launch was read by a loose chain walk: an option it does not know (`timeout -x
5 ...`, `--foo`), a DURATION or -k / -s value it refuses (`timeout abc ...`, `-s FOO`), all exit 125 before anything
runs, were passed and the launch allowed; and the timeout that ends the server after its DURATION was not said. Now
runners.read_timeout reads its words as getopt_long "+fk:ps:v" and parse_duration read them (anything else unknown),
`timeout 5 -- ...` is unknown (GNU runs `--`, exit 127; uutils runs the command), and a placed timeout with a
DURATION above 0 is a note naming the duration, the signal and whom it reaches."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import read_timeout

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(line: list[str], mapping: Any) -> list[Any]:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, line
    return list(d.problems)


@pytest.mark.parametrize(
    "prefix",
    [["timeout", "-x", "5"], ["timeout", "--foo", "5"], ["timeout", "abc"], ["timeout", "5 "], ["timeout", "nan"],
     ["timeout", "-s", "FOO", "5"], ["timeout", "-k", "abc", "5"], ["timeout", "--preserve-status=1", "5"],
     ["timeout", "5", "--"], ["timeout", "-s", "KILL", "5", "--"], ["nice", "timeout", "-x", "5"]],
)  # fmt: skip
def test_a_timeout_form_it_refuses_or_reads_otherwise_is_unknown(prefix: list[str], mapping: Any) -> None:
    # fails before: allowed (the chain walk skipped any -word and took any word as the DURATION)
    got = [(p.subject, p.status) for p in _problems([*prefix, *LAUNCH], mapping) if p.status != "note"]
    assert ("timeout", "unknown") in got, (prefix, got)


@pytest.mark.parametrize(
    ("prefix", "words"),
    [(["timeout", "5"], ("5 s", "TERM", "process group")),
     (["timeout", "-s", "KILL", "3600"], ("60 min", "KILL")),
     (["timeout", "--foreground", "-k", "10", "2h"], ("2 h", "TERM", "--foreground", "KILL 10 s later")),
     (["timeout", "-vk5", "--sig=sigint", "1.5m"], ("90 s", "INT", "KILL 5 s later")),
     (["timeout", "--", "30"], ("30 s",)), (["nohup", "timeout", "--fo", "1d"], ("24 h", "--foreground"))],
)  # fmt: skip
def test_a_placed_timeout_is_judged_with_a_note_of_its_end(prefix: list[str], words: Any, mapping: Any) -> None:
    problems = _problems([*prefix, *LAUNCH], mapping)
    assert [p for p in problems if p.status != "note"] == [], prefix
    notes = [p.message for p in problems if p.subject == "timeout"]
    assert len(notes) == 1 and all(w in notes[0] for w in words), notes  # fails before: no note


def test_a_zero_duration_sets_no_limit_and_no_note(mapping: Any) -> None:
    assert not [p for p in _problems(["timeout", "0", *LAUNCH], mapping) if p.subject == "timeout"]


def test_the_reader_places_the_command_after_the_duration() -> None:
    assert read_timeout(["timeout", "-s", "9", "--kill-after=1m", "5", "x", "y"], 0)[:5] == (5, None, 5.0, "9", 60.0)
    assert read_timeout(["timeout", "5"], 0).command is None
    assert read_timeout(["timeout", "--help", "5", "x"], 0).command is None


def test_an_assignment_after_a_timeout_is_still_blocked(mapping: Any) -> None:
    got = [(p.subject, p.status) for p in _problems(["timeout", "-s", "KILL", "5", "A=1", *LAUNCH], mapping)]
    assert ("A=", "blocked") in got, got
