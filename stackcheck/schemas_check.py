"""Checking a facts document read with --facts against the report schema's `facts` definition, so that
bad input gets one clear line with the JSON path, never a crash deep in the engine."""

from __future__ import annotations

from typing import Any

from stackcheck.errors import BadInputError


def check_facts(facts: Any, origin: str) -> None:
    from jsonschema import Draft202012Validator

    from stackcheck.validate import _registry, json_path

    registry, schemas = _registry()
    schema = {"$ref": "https://stackcheck.dev/schemas/report.schema.json#/$defs/facts"}
    validator = Draft202012Validator(schema, registry=registry)
    errors = sorted(validator.iter_errors(facts), key=lambda e: list(map(str, e.absolute_path)))
    if errors:
        e = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise BadInputError(f"{origin}: {json_path(['facts', *e.absolute_path])}: {e.message[:200]}{more}")
    _ = schemas
