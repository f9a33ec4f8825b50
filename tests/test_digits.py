"""stackcheck.digits.whole_number, the one reader of a word of digits as a whole number (irev59 gathered the
bounded int() readers that igap26, irev56 and irev57 had each written inline)."""

from __future__ import annotations

import sys

import pytest

from stackcheck.digits import whole_number

LONG = "9" * 5000


@pytest.mark.parametrize(
    ("text", "kwargs", "want"),
    [
        ("12", {}, 12),
        ("007", {}, 7),
        ("999999999", {}, 999_999_999),
        ("1234567890", {}, None),  # a tenth digit: beyond the default bound
        ("1234567890", {"max_digits": 18}, 1_234_567_890),
        ("\u0661\u0662", {}, 12),  # Arabic-Indic digits: decimal digits int() reads
        ("\u0661\u0662", {"ascii_only": True}, None),
        ("\u00b2", {}, None),  # a digit to str.isdigit, no decimal digit: int() refuses it
        ("", {}, None),
        (" 1", {}, None),
        ("+1", {}, None),
        ("-1", {}, None),
        ("1_0", {}, None),
        ("1.0", {}, None),
        ("12345", {"max_digits": 4}, None),
        (LONG, {"max_digits": None}, None),  # more digits than int() reads: None, not ValueError
        ("9" * 20, {"max_digits": None}, 10**20 - 1),
    ],
)
def test_whole_number(text: str, kwargs: dict[str, object], want: int | None) -> None:
    assert whole_number(text, **kwargs) == want  # type: ignore[arg-type]


def test_no_bound_follows_what_int_reads() -> None:
    limit = sys.get_int_max_str_digits()
    assert limit and whole_number("1" * limit, None) is not None and whole_number("1" * (limit + 1), None) is None
