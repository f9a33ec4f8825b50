"""irobust12: `nice -n ADJUST` before the launch. GNU coreutils' nice reads ADJUST with xstrtol in base 10 and exits
125 ("invalid adjustment") on anything else (`1e3`, `0x5`, `5k`, `1.5`, ``), so the launch never starts; the gate read
any word as the value and judged the launch behind it (allowed). Such a value is now unknown, as timeout's DURATION is
(imend12); decimal integers with an optional sign run the launch as before (a value with blanks or over 9 digits, which
GNU and uutils may read apart, is unknown too)."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _nice_status(prefix: list[str], mapping: Any) -> list[str]:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    return [p.status for p in d.problems if p.subject == "nice"]


@pytest.mark.parametrize(
    "prefix",
    [["nice", "-n", "1e3"], ["nice", "-n", "0x5"], ["nice", "-n5k"], ["nice", "--adjustment=1.5"],
     ["nice", "--adjustment", ""], ["nice", "-n", "5 "], ["nice", "-n", "9" * 5000]],
)  # fmt: skip
def test_an_adjustment_nice_refuses_is_unknown(prefix: list[str], mapping: Any) -> None:
    assert _nice_status(prefix, mapping) == ["unknown"]  # (fails before: [], the launch judged)


@pytest.mark.parametrize(
    "prefix", [["nice", "-n", "5"], ["nice", "-n", "+5"], ["nice", "-n-3"], ["nice", "--adjustment=19"], ["nice", "-5"],
               ["nice"], ["nice", "-n", "007"]],
)  # fmt: skip
def test_an_adjustment_nice_takes_runs_the_launch(prefix: list[str], mapping: Any) -> None:
    assert _nice_status(prefix, mapping) == []


# stdbuf and ionice: the same reading (coreutils stdbuf exits 125, util-linux ionice 1, before running the command)
@pytest.mark.parametrize(
    ("prefix", "subject"),
    [(["stdbuf", "-oX"], "stdbuf"), (["stdbuf", "-o", "1Q"], "stdbuf"), (["stdbuf", "-i", "L"], "stdbuf"),
     (["stdbuf", "--error=big"], "stdbuf"), (["ionice", "-c", "abc"], "ionice"),
     (["ionice", "-c2", "-n", "x"], "ionice"), (["ionice", "--class=rt"], "ionice")],
)  # fmt: skip
def test_a_buffering_mode_or_io_class_refused_is_unknown(prefix: list[str], subject: str, mapping: Any) -> None:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert (subject, "unknown") in [(p.subject, p.status) for p in d.problems]  # (fails before: judged)


@pytest.mark.parametrize(
    "prefix",
    [["stdbuf", "-oL"], ["stdbuf", "-o", "0", "-e", "4KiB"], ["stdbuf", "-i", "64K"], ["ionice", "-c", "2", "-n", "7"],
     ["ionice", "-c", "Best-Effort"], ["ionice", "--class=idle"], ["ionice", "-c3"]],
)  # fmt: skip
def test_a_mode_or_class_taken_runs_the_launch(prefix: list[str], mapping: Any) -> None:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert [p for p in d.problems if p.subject == prefix[0]] == []


# taskset's MASK / CPU list and chrt's priority: util-linux exits 1 on one it refuses, before running the command
@pytest.mark.parametrize(
    ("prefix", "subject"),
    [(["taskset", "0"], "taskset"), (["taskset", "0xZZ"], "taskset"), (["taskset", "-c", "abc"], "taskset"),
     (["taskset", "--cpu-list", "1-"], "taskset"), (["chrt", "-f", "0"], "chrt"), (["chrt", "-f", "1000"], "chrt"),
     (["chrt", "-o", "5"], "chrt"), (["chrt", "150"], "chrt")],
)  # fmt: skip
def test_a_mask_or_priority_refused_is_unknown(prefix: list[str], subject: str, mapping: Any) -> None:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert (subject, "unknown") in [(p.subject, p.status) for p in d.problems]  # (fails before: judged)


@pytest.mark.parametrize(
    "prefix",
    [["taskset", "0x1"], ["taskset", "ff"], ["taskset", "-c", "0-3:2,8"], ["taskset", "-ac", "0,2"],
     ["chrt", "-f", "99"], ["chrt", "5"], ["chrt", "-o", "0"], ["chrt", "--batch", "0"], ["chrt", "-r", "50"]],
)  # fmt: skip
def test_a_mask_or_priority_taken_runs_the_launch(prefix: list[str], mapping: Any) -> None:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})
    assert [p for p in d.problems if p.subject == prefix[0]] == []
