"""Words of digits read as whole numbers without an exception: the one reader for numbers in text from a facts file,
the command line, the environment, the box's files or an image's layers.

Two words that look like numbers make int() raise ValueError: a digit that is no decimal digit ('²', '³': str.isdigit
takes them, int() does not; irev56), and more digits than sys.get_int_max_str_digits() (4,300 by default: a word of
5,000 nines passes str.isdecimal(), and int() refuses it for its length; igap26, irev57). Each ended a command in an
internal error (exit 4, no decision) where the word should have been read as no number. `whole_number` answers None
for both, so the caller says unknown, gives a reason or a one-line usage error.
"""

from __future__ import annotations

#: the most digits read where no other bound is given: any count, index, major or minor version stackcheck reads
#: fits, and int() never refuses so few
MAX_DIGITS = 9


def whole_number(text: str, max_digits: int | None = MAX_DIGITS, *, ascii_only: bool = False) -> int | None:
    """int(text) where `text` is decimal digits only (str.isdecimal: the ASCII digits and the other decimal digits
    int() reads, '٣' among them; no sign, no space, no '_') and at most `max_digits` of them; None otherwise.
    `ascii_only`: only 0-9 (where the number's reader, Go's strconv or a C parser, takes no other digit).
    `max_digits` None: as many as int() reads (sys.get_int_max_str_digits()), as argparse's type=int does."""
    if not text.isdecimal() or (ascii_only and not text.isascii()):
        return None
    if max_digits is not None:
        return int(text) if len(text) <= max_digits else None
    try:
        return int(text)
    except ValueError:  # more digits than int() reads
        return None
