"""irev82: irobust12 read ionice's -c and -n values each alone (a number or a class name), so a class number outside
0-3 or a negative level for realtime / best-effort, which util-linux ionice hands to ioprio_set and the kernel refuses
(ionice exits 1, "ioprio_set failed: Invalid argument", before running the command), and `-c +2` / `-c -1`, which
ionice reads as a class name it does not know (exit 1), were allowed with the launch behind them judged as the one that
runs (a false pass). Now unknown, the runner named; -t / --ignore makes ionice go on, and none / idle replace the
level (run here: util-linux 2.38.1)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import read_runner

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "1"]

REFUSED = [
    ["ionice", "-c", "4"],
    ["ionice", "-c4"],
    ["ionice", "--class=7"],
    ["ionice", "--class", "9"],
    ["ionice", "-c", "2", "-n", "-1"],
    ["ionice", "-n", "-1"],  # (best-effort by default)
    ["ionice", "-c", "+2"],
    ["ionice", "-c", "-1"],
    ["ionice", "-c", "2", "-n", "3", "-c", "5"],  # (the last -c is the class)
]

RUNS = [
    ["ionice", "-c", "2", "-n", "0"],
    ["ionice", "-c", "1", "-n", "7"],
    ["ionice", "-c", "02"],
    ["ionice", "-c", "3", "-n", "99"],  # (idle: level replaced, a warning)
    ["ionice", "-c", "0", "-n", "-5"],  # (none: likewise)
    ["ionice", "-c", "idle"],
    ["ionice", "-t", "-c", "4"],
    ["ionice", "-c", "4", "-t"],
    ["ionice", "--ignore", "-c", "2", "-n", "-1"],
    ["ionice", "-tc", "9"],
    ["ionice", "-c", "2", "-n", "+3"],
]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _refusals(words: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*words, *LAUNCH], mapping, {})
    assert d.entrypoint == "launch-server", words
    return [p.message for p in d.problems if p.subject == "ionice" and p.status in ("unknown", "blocked")]


@pytest.mark.parametrize("words", REFUSED)
def test_a_class_or_level_the_kernel_refuses_is_unknown(words: list[str], mapping: Any) -> None:
    assert read_runner([*words, *LAUNCH], 0).command is None, words  # (fails before: placed)
    got = _refusals(words, mapping)
    assert len(got) == 1 and "`ionice`" in got[0], (words, got)


@pytest.mark.parametrize("words", RUNS)
def test_a_class_and_level_ionice_runs_with_are_read_as_before(words: list[str], mapping: Any) -> None:
    assert read_runner([*words, *LAUNCH], 0).command == len(words), words
    assert _refusals(words, mapping) == [], words
