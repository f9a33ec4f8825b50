"""`json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False, default=str)`, the same text, faster.

With an indent, the standard library writes JSON through its pure-Python encoder (the C one takes no indent
before Python 3.14): a generator per container and a chain of `yield from` per value, ~4 ms of a report's
~5 ms of writing. This writer walks the value once, appending to one list: the same separators (`,` and
`: `, a newline and two spaces per level, `[]` and `{}` when empty), the same spelling of every value (the
C string escaper, int.__repr__ and float.__repr__ as json uses them, `true`/`false`/`null`), the same key
conversions (a float, bool, None or int key as its JSON text; any other key a TypeError), the same errors
(NaN and the infinities a ValueError, a container inside itself "Circular reference detected") and `default`
(str) for a value JSON has no type for. tests/render/test_jsonindent.py holds it equal to json.dumps on
every report of the case folders and on generated values."""

from __future__ import annotations

import math
from collections.abc import Callable

try:  # (json.encoder's own encode_basestring where the C accelerator is: importing json costs ~5 M instructions)
    from _json import encode_basestring
except ImportError:
    from json.encoder import encode_basestring

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

INDENT = "  "


def _float(value: float) -> str:
    if math.isnan(value) or math.isinf(value):
        raise ValueError("Out of range float values are not JSON compliant: " + repr(value))
    return float.__repr__(value)


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, float):
        return _float(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int):
        return int.__repr__(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {key.__class__.__name__}")


def dumps_indented(value: Any, default: Callable[[Any], Any] = str) -> str:
    """The JSON text of `value` as json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False,
    default=default) writes it."""
    parts: list[str] = []
    append = parts.append
    esc = encode_basestring
    seen: set[int] = set()

    def scalar(o: Any) -> str | None:
        """The text of a value that is not a container (None for a list, tuple, dict or other)."""
        t = type(o)
        if t is str:
            return esc(o)
        if o is None:
            return "null"
        if o is True:
            return "true"
        if o is False:
            return "false"
        if t is int:
            return int.__repr__(o)
        if t is float:
            return _float(o)
        if isinstance(o, str):
            return esc(o)
        if isinstance(o, int):
            return int.__repr__(o)
        if isinstance(o, float):
            return _float(o)
        return None

    def member(prefix: str, v: Any, inner: str) -> None:
        """One member of a container: `prefix` (its separator, and a dict's key) then the value."""
        t = type(v)
        if t is str:
            append(prefix + esc(v))
        elif t is dict or t is list:
            append(prefix)
            container(v, inner)
        else:
            text = scalar(v)
            if text is not None:
                append(prefix + text)
            else:
                append(prefix)
                other(v, inner)

    def container(o: Any, newline: str) -> None:
        """A list, tuple or dict; `newline` is the newline and indent of its level."""
        ident = id(o)
        if ident in seen:
            raise ValueError("Circular reference detected")
        is_dict = isinstance(o, dict)
        if not o:
            append("{}" if is_dict else "[]")
            return
        seen.add(ident)
        inner = newline + INDENT
        sep = ("{" if is_dict else "[") + inner
        if is_dict:
            for k, v in o.items():
                member(sep + esc(k if type(k) is str else _key(k)) + ": ", v, inner)
                sep = "," + inner
        else:
            for v in o:
                member(sep, v, inner)
                sep = "," + inner
        append(newline + ("}" if is_dict else "]"))
        seen.discard(ident)

    def other(o: Any, newline: str) -> None:
        """A value that is no JSON scalar: a container (of a subclass, or a tuple), else `default`'s value."""
        if isinstance(o, list | tuple | dict):
            container(o, newline)
            return
        ident = id(o)
        if ident in seen:
            raise ValueError("Circular reference detected")
        seen.add(ident)
        o = default(o)
        text = scalar(o)
        if text is not None:
            append(text)
        else:
            other(o, newline)
        seen.discard(ident)

    text = scalar(value)
    if text is not None:
        return text
    other(value, "\n")
    return "".join(parts)
