"""Python source parsed to an AST, one parse at a time in the process.

CPython 3.11 and 3.12 keep the AST converter's recursion depth in the interpreter's `_ast` state, which every
thread shares; two threads parsing at once can fail with "SystemError: AST constructor recursion depth mismatch
(before=36, after=25)" (CPython issue gh-106905 and its PR 106906; seen in this project's CI, where the derive
and source-table probes, each in its own thread, parse SGLang's sources at the same time, and the derived probe
came back partial). Every parse stackcheck makes goes through here, under one lock. The `ast` module itself is
not imported (~3 ms of a start): the C module's node classes are what `ast.parse` returns too."""

from __future__ import annotations

import _ast
from _thread import allocate_lock

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_LOCK = allocate_lock()


def parse(text: str, filename: str = "<unknown>") -> _ast.Module:
    """What `ast.parse(text, filename)` gives, parsed while no other thread of stackcheck parses."""
    with _LOCK:
        tree = compile(text, filename, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    assert isinstance(tree, _ast.Module)  # what "exec" mode gives
    return tree


def literal_eval(text: str) -> Any:
    """What `ast.literal_eval(text)` gives (a literal read, never evaluated), its parse under the same lock."""
    import ast

    with _LOCK:
        tree = compile(text.lstrip(" \t"), "<unknown>", "eval", _ast.PyCF_ONLY_AST, dont_inherit=True)
    return ast.literal_eval(tree)
