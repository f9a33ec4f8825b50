"""The one JSON writer: every JSON document stackcheck writes (the report, the gate's decision, triage,
fleet, explain, diff, recommend, the facts after a plan) goes through `json_document`, so they share one
set of choices:

- two-space indent (`compact`: one line, for the gate's decision on stderr), keys in the document's order;
- UTF-8 text (`ensure_ascii=False`) whose characters that a terminal or a JavaScript parser would act on
  (C1 controls, DEL, lone surrogates from undecodable bytes, bidi overrides, U+2028/U+2029) are written as
  `\\uNNNN` escapes: the same JSON value, always encodable (stackcheck.redact.json_text decides which);
- no NaN or Infinity (not JSON: a bug upstream of the writer raises here rather than writing one);
- a value JSON has no type for is written as its text.

Where the text goes (standard output, or a file replaced atomically) is the command line's business
(stackcheck.commands.arguments.emit, stackcheck.atomic.write_atomic)."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.redact import json_safe, json_text

if TYPE_CHECKING:
    from typing import Any


def json_document(value: Any, *, compact: bool = False) -> str:
    """The document as JSON text, ending with a newline. Indented, it is written by
    stackcheck.render.jsonindent (the text json.dumps writes, faster)."""
    if compact:
        return json_text(value, allow_nan=False, default=str) + "\n"
    from stackcheck.render.jsonindent import dumps_indented

    return json_safe(dumps_indented(value, default=str)) + "\n"
