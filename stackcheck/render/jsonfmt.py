"""The JSON format: the report itself, stable keys, sorted for diffing."""

from __future__ import annotations

from typing import Any

from stackcheck.redact import json_text


def render_json(report: dict[str, Any]) -> str:
    """The report as JSON; controls, lone surrogates and bidi overrides from the box are \\u escapes."""
    return json_text(report, indent=2, allow_nan=False) + "\n"
