"""irobust10: iallow2's value readers of the runners before the launch on hostile values. `sudo -C` / `--close-from`
and `timeout -s` with a number of over 4,300 digits raised ValueError out of int() (Python's limit on integer
strings): a traceback, exit 4. timeout's DURATION regex split a run of digits every way before failing on the word's
last character: 20,000 digits and an `x` took 7 s. Each is now read bounded: the long number is refused as sudo and
timeout refuse it (unknown), the DURATION read in linear time."""

from __future__ import annotations

import time
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.runners import _sudo_close_from, _timeout_seconds, _timeout_signal

LAUNCH = ["python3", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def mapping() -> Any:
    return load([], env={}).launch


@pytest.mark.parametrize(
    ("prefix", "subject"),
    [(["sudo", "-C", "1" * 5000], "sudo"), (["sudo", "--close-from=" + "9" * 5000], "sudo"),
     (["timeout", "-s", "1" * 5000, "5"], "timeout"), (["timeout", "--signal=" + "2" * 4400, "5"], "timeout")],
)  # fmt: skip
def test_a_huge_number_is_refused_not_a_crash(prefix: list[str], subject: str, mapping: Any) -> None:
    d = gate.derive([*prefix, *LAUNCH], mapping, {})  # fails before: ValueError (int() of over 4,300 digits)
    assert (subject, "unknown") in [(p.subject, p.status) for p in d.problems]


def test_numbers_as_the_programs_read_them() -> None:
    assert _sudo_close_from("3") is None and _sudo_close_from("0003") is None and _sudo_close_from("2147483647") is None
    assert _sudo_close_from("2") is not None and _sudo_close_from("2147483648") is not None
    assert _timeout_signal("9") == "9" and _timeout_signal("009") == "009" and _timeout_signal("64") == "64"
    assert _timeout_signal("65") is None and _timeout_signal("0" * 5000 + "9") is not None


def test_a_long_duration_is_read_in_linear_time() -> None:
    start = time.process_time()
    assert _timeout_seconds("1" * 20_000 + "x") is None
    assert time.process_time() - start < 0.5  # fails before: ~7 s
    assert _timeout_seconds("1.5m") == 90.0 and _timeout_seconds("5.") == 5.0 and _timeout_seconds(".5s") == 0.5
    assert _timeout_seconds("2d") == 172800.0 and _timeout_seconds("1.2.3") is None and _timeout_seconds("") is None


@pytest.mark.parametrize("value", ["1" * 5000, "0" * 5000 + "300", "-" + "9" * 4400])
def test_tinis_exit_status_of_many_digits_is_refused_not_a_crash(value: str, mapping: Any) -> None:
    d = gate.derive(["tini", "-e", value, "--", *LAUNCH], mapping, {})  # fails before: ValueError out of int()
    assert ("tini", "unknown") in [(p.subject, p.status) for p in d.problems]


def test_tinis_exit_statuses_as_strtol_reads_them() -> None:
    from stackcheck.launch.runners import _tini_status

    assert _tini_status("0") is None and _tini_status("255") is None and _tini_status(" 007") is None
    assert _tini_status("-0") is None and _tini_status("0" * 5000 + "143") is None and _tini_status("") is None
    assert _tini_status("256") is not None and _tini_status("-1") is not None and _tini_status("x") is not None
