"""Checking a facts document read with --facts against the report schema's `facts` definition, so that
bad input gets one clear line with the JSON path, never a crash deep in the engine.

A well-formed document is accepted by stackcheck.facts.minischema without importing jsonschema (start-up speed);
only a document it rejects is run through jsonschema, for the exact message and path."""

from __future__ import annotations

from functools import lru_cache

from stackcheck.errors import BadInputError
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any


@lru_cache(maxsize=1)
def report_schema() -> dict[str, Any]:
    from stackcheck import lean_json  # (json.loads's answer without importing the json package: ~1 ms of a first plan)
    from stackcheck.knowledge.package_data import schema_text

    schema: dict[str, Any] = lean_json.loads(schema_text("report.schema.json"))
    return schema


def check_facts(facts: Any, origin: str) -> None:
    """Raise BadInputError unless `facts` is valid; once valid, integral floats where the schema says
    integer (`"index": 0.0`, as jq arithmetic writes it) become ints, in place."""
    from stackcheck.facts.minischema import Unsupported, is_valid, normalise_integers

    schema = report_schema()
    try:
        if is_valid(facts, schema["$defs"]["facts"], schema):
            normalise_integers(facts, schema["$defs"]["facts"], schema)
            _check_candidates(facts, origin)
            return
    except Unsupported:
        pass
    from jsonschema import Draft202012Validator

    from stackcheck.knowledge.validate import _registry, json_path

    registry, _ = _registry()
    ref = {"$ref": "https://stackcheck.dev/schemas/report.schema.json#/$defs/facts"}
    validator = Draft202012Validator(ref, registry=registry)
    errors = sorted(validator.iter_errors(facts), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        e = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BadInputError(f"{origin}: {json_path(['facts', *e.absolute_path])}: {e.message[:200]}{more}")
    normalise_integers(facts, schema["$defs"]["facts"], schema)
    _check_candidates(facts, origin)


def _check_candidates(facts: Any, origin: str) -> None:
    """Every `packages.NAME.candidates` entry is a version (PEP 440): a sweep that cannot read one would
    ignore the whole list without a word (stackcheck.verdicts.engine.package_candidates)."""
    packages = facts.get("packages") if isinstance(facts, dict) else None
    if not isinstance(packages, dict):
        return
    for name, entry in packages.items():
        values = entry.get("candidates") if isinstance(entry, dict) else None
        if not isinstance(values, list):
            continue
        from stackcheck.facts.versions import parse_version

        for i, value in enumerate(values):
            if parse_version(value) is None:
                where = f"$.facts.packages.{name}.candidates[{i}]"
                raise BadInputError(f"{origin}: {where}: {str(value)[:80]!r} is not a version (PEP 440: 0.6.12)")
