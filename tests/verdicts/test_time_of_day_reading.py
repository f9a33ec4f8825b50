"""engine._time_of_day (collected_day's reading of the time after the day, by string methods: a plan's first run no
longer compiles engine._TIME_OF_DAY) answers as the pattern's fullmatch did, over generated times with every field
in and out of its range, Unicode digits, both letters' cases, separators and stray characters; and collected_day
gives the day the pattern's reading gave."""

from __future__ import annotations

import random
import re
from typing import Any, cast

from stackcheck.verdicts import engine
from stackcheck.verdicts.context import Context

_PIECES = ["T", "t", " ", "0", "1", "2", "3", "5", "6", "9", "00", "23", "24", "59", "60", ":", ".", "Z", "z", "+",
           "-", "\u0661", "\u00b2", "x", "\n", "05:30", "12:00", ":45", ".5", ""]  # fmt: skip


def _times(seed: int, n: int = 60000) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.5:  # near the shape: each field drawn from values in and out of range
            out.append(
                rng.choice(["T", "T", "t", " ", "_"])
                + rng.choice(["00", "09", "19", "20", "23", "21", "24", "30", "2", "\u0661\u0662"])
                + rng.choice([":", ":", ":", "-"])
                + rng.choice(["00", "05", "59", "45", "60", "6", "5\u0669"])
                + rng.choice(["", "", ":00", ":59", ":60", ":5", ":"])
                + rng.choice(["", "", ".", ".0", ".123", ".1x", "..1"])
                + rng.choice(["Z", "z", "+", "-", "+", "-", ""])
                + rng.choice(["00", "05", "14", "23", "24", "3", ""])
                + rng.choice([":", ":", "", "x"])
                + rng.choice(["00", "30", "45", "59", "60", "7", ""])
                + rng.choice(["", "", "", "", "Z", "\n", " "])
            )
        else:
            out.append("".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 9))))
    return out


def _reference(text: str) -> tuple[int, int, int] | None:
    t = re.fullmatch(engine._TIME_OF_DAY, text)
    if t is None:
        return None
    if t.group(6) is None:
        return int(t.group(1)), int(t.group(2)), 0
    offset = int(t.group(7)) * 60 + int(t.group(8))
    return int(t.group(1)), int(t.group(2)), offset if t.group(6) == "+" else -offset


def test_time_of_day_is_the_pattern() -> None:
    read = offsets = 0
    for text in _times(14):
        expected = _reference(text)
        assert engine._time_of_day(text) == expected, repr(text)
        read += expected is not None
        offsets += expected is not None and expected[2] != 0
    assert read > 150 and offsets > 100


def test_collected_day_reads_the_offset() -> None:
    def day(value: str) -> str | None:
        return engine.collected_day(
            Context(facts={"collected_at": value}, manifests=cast(Any, None), launch={})
        )  # it reads the facts only

    assert day("2026-03-01T21:30:00-05:00") == "2026-03-02"
    assert day("2026-03-01T09:00+09:00") == "2026-03-01"
    assert day("2026-03-01T08:59+0900") == "2026-02-28"
    assert day("2024-03-01t00:30:15.25+01:00") == "2024-02-29"
    assert day("2026-12-31 23:59:59Z") == "2026-12-31"
    assert day("2026-12-31T23:00-01:00") == "2027-01-01"
    assert day("2026-03-01T24:00Z") is None
    assert day("2026-03-01") == "2026-03-01"
