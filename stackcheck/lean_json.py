"""`json.loads` and `json.dumps` as the hot paths of a probed audit and a served gate call them, the same answers,
without importing the json package: its three modules compile six regular expressions at import (~5 M instructions
of every process that imports them, on the interpreter lock the probes share), while the C scanner and encoder they
drive live in `_json`, which this module calls itself with the settings json's own classes give them.

What is not the plain case goes to json itself, so that nothing differs there either: `loads` of text json would
refuse at its edges (no value, extra data after it, a byte-order mark) or of bytes not plainly UTF-8 is parsed again
by json.loads, which raises its own error; `dumps` with an option other than these (`indent`, `default`, `cls`, ...)
or of a value the C encoder refuses (a type JSON has none for, a circular reference, NaN with allow_nan=False) is
json.dumps's answer or error. Errors inside a document come from the C scanner, as json.loads's do
(json.decoder.JSONDecodeError: `is_decode_error` tells one apart without importing json before one is raised), or
from json itself where the scanner cannot raise it (an error inside a string on 3.10 / 3.11 before json.decoder is
imported).
tests/test_lean_json.py holds both equal to json on listed and generated documents."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

_c: Any
try:
    import _json as _c
except ImportError:  # (an interpreter without the C accelerator: json's pure-Python classes do everything)
    _c = None

#: what JSON whitespace is (json.decoder's WHITESPACE pattern, [ \t\n\r]*)
_SPACE = " \t\n\r"
#: json.decoder's _CONSTANTS: the values of the three constants json.loads accepts by default
_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}


class _Context:
    """The attributes the C scanner reads of a json.JSONDecoder, with the values JSONDecoder() gives them."""

    __slots__ = ("object_hook", "object_pairs_hook", "parse_constant", "parse_float", "parse_int", "strict")

    def __init__(self, parse_constant: Callable[[str], Any], object_pairs_hook: Any = None) -> None:
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = object_pairs_hook
        self.parse_float = float
        self.parse_int = int
        self.parse_constant = parse_constant


#: the scanner of each (parse_constant, object_pairs_hook) in use (None: json's default)
_SCANNERS: dict[Any, Any] = {}


def _json() -> Any:
    import json

    return json


def loads(
    s: str | bytes | bytearray,
    *,
    parse_constant: Callable[[str], Any] | None = None,
    object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None,
) -> Any:
    """json.loads(s, parse_constant=parse_constant, object_pairs_hook=object_pairs_hook)."""
    if _c is None:
        return _json().loads(s, parse_constant=parse_constant, object_pairs_hook=object_pairs_hook)
    if not isinstance(s, str):
        # json.loads decodes bytes as the encoding it detects: plain UTF-8 (json.detect_encoding's answer) where the
        # first two bytes are not NUL and no byte-order mark opens it; anything else goes to json
        if not isinstance(s, (bytes, bytearray)) or len(s) < 4 or not s[0] or not s[1] or s[0] in b"\xef\xfe\xff":
            return _json().loads(s, parse_constant=parse_constant, object_pairs_hook=object_pairs_hook)
        s = s.decode("utf-8", "surrogatepass")
    key = (parse_constant, object_pairs_hook) if object_pairs_hook is not None else parse_constant
    scan = _SCANNERS.get(key)
    if scan is None:
        try:
            scan = _c.make_scanner(_Context(parse_constant or _CONSTANTS.__getitem__, object_pairs_hook))
        except (AttributeError, TypeError):  # (an interpreter whose scanner reads other settings: json's own)
            return _json().loads(s, parse_constant=parse_constant, object_pairs_hook=object_pairs_hook)
        _SCANNERS[key] = scan
    end = len(s)
    at = 0
    while at < end and s[at] in _SPACE:
        at += 1
    try:
        value, at = scan(s, at)
    except (StopIteration, SystemError):
        # (no value where one must begin, or a BOM: json's own error; SystemError: an error inside a string on
        # Python 3.10 / 3.11, whose C scanner raises JSONDecodeError only where json.decoder is already imported and
        # otherwise returns NULL with no exception set: json.loads raises the JSONDecodeError, irobust9)
        return _json().loads(s, parse_constant=parse_constant, object_pairs_hook=object_pairs_hook)
    while at < end and s[at] in _SPACE:
        at += 1
    if at != end:  # (extra data after the value: json's own error)
        return _json().loads(s, parse_constant=parse_constant, object_pairs_hook=object_pairs_hook)
    return value


def is_decode_error(exc: BaseException) -> bool:
    """Whether `exc` is a json.JSONDecodeError (json.decoder is imported only when one was raised: the C scanner
    imports it to raise one)."""
    import sys

    decoder = sys.modules.get("json.decoder")
    return decoder is not None and isinstance(exc, decoder.JSONDecodeError)


class _Refused(Exception):
    """A value the C encoder met that JSON has no type for: json.dumps says what it says of it."""


def _refuse(value: Any) -> Any:
    raise _Refused


def dumps(
    obj: Any,
    *,
    ensure_ascii: bool = True,
    allow_nan: bool = True,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
    **other: Any,
) -> str:
    """json.dumps(obj, ensure_ascii=..., allow_nan=..., separators=..., sort_keys=..., **other): other options
    (indent, default, cls, ...) are json.dumps's own."""
    if _c is None or other:
        return str(
            _json().dumps(
                obj, ensure_ascii=ensure_ascii, allow_nan=allow_nan, separators=separators, sort_keys=sort_keys, **other
            )
        )
    encode = _c.encode_basestring_ascii if ensure_ascii else _c.encode_basestring
    if isinstance(obj, str):
        return str(encode(obj))
    item, key = separators if separators is not None else (", ", ": ")
    try:
        chunks = _c.make_encoder({}, _refuse, encode, None, key, item, sort_keys, False, allow_nan)(obj, 0)
        return "".join(chunks)
    except Exception:  # json.dumps again: its answer, or its own error
        return str(
            _json().dumps(
                obj, ensure_ascii=ensure_ascii, allow_nan=allow_nan, separators=separators, sort_keys=sort_keys
            )
        )
