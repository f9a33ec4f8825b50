"""imend12: coreutils timeout's DURATION is a floating number (GNU src/timeout.c parse_duration: xstrtod with
cl_strtod, then at most one of s m h d), so `timeout 1.5e3 python -m sglang.launch_server ...` runs the server for
1500 s; the gate's reader took only digits with a fraction and left it unknown. The forms GNU and both uutils
duration readers take alike are read now (an exponent, `inf` / `infinity`: no limit); the ones they disagree on
stay unknown (hexadecimal, `INF`, a sign, blanks, a value below the smallest double). (imend14: `infm` and m / h / d
past 2^64 s are no limit now, as GNU and uutils since 0.0.13 read them: test_imend14_timeout_inf_suffix.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import _timeout_seconds, read_timeout

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


def _problems(line: list[str], mapping: Any) -> list[Any]:
    d = gate.derive(line, mapping, {})
    assert d.entrypoint == "launch-server" and d.launch.get("tp") == 2, line
    return list(d.problems)


@pytest.mark.parametrize(
    ("duration", "seconds"),
    [("1.5e3", 1500.0), ("1e3", 1000.0), ("1E2s", 100.0), ("2.5e-1m", 15.0), ("5.e1", 50.0), (".5e2", 50.0),
     ("1e+2h", 360000.0), ("5.", 5.0), (".5", 0.5), ("1.5m", 90.0)],
)  # fmt: skip
def test_a_duration_with_an_exponent_is_read_as_parse_duration_reads_it(duration: str, seconds: float) -> None:
    assert _timeout_seconds(duration) == seconds  # fails before: None (no exponent read)


def test_timeout_with_an_exponent_is_placed_like_its_decimal(mapping: Any) -> None:
    # fails before: ("timeout", "unknown"): its DURATION `1.5e3` is not read as one
    problems = _problems(["timeout", "1.5e3", *LAUNCH], mapping)
    assert [p for p in problems if p.status != "note"] == []
    assert [p.message for p in problems if p.subject == "timeout"] == [
        p.message for p in _problems(["timeout", "1500", *LAUNCH], mapping) if p.subject == "timeout"
    ]


@pytest.mark.parametrize("duration", ["inf", "infinity", "infs", "1e400", "0e5"])
def test_an_infinite_or_zero_duration_sets_no_limit_and_no_note(duration: str, mapping: Any) -> None:
    problems = _problems(["timeout", "-k", "inf", duration, *LAUNCH], mapping)
    assert [p for p in problems if p.subject == "timeout"] == [], duration  # fails before: unknown
    assert read_timeout(["timeout", duration, "x"], 0)[:3] == (2, None, 0.0)


@pytest.mark.parametrize(
    "duration",
    ["0x10", "0x1p2", "INF", "Infinity", "+5", " 5", "5 ", "1,5", "1e", "nan", "1e-400", "1S", "0x"],
)
def test_a_form_the_readers_disagree_on_or_refuse_stays_unknown(duration: str, mapping: Any) -> None:
    got = [(p.subject, p.status) for p in _problems(["timeout", duration, *LAUNCH], mapping)]
    assert ("timeout", "unknown") in got, (duration, got)


def test_a_kill_after_of_inf_sends_no_kill() -> None:
    assert read_timeout(["timeout", "-k", "infinity", "5", "x"], 0).kill_after is None
    assert read_timeout(["timeout", "-k", "1e1", "5", "x"], 0).kill_after == 10.0
