"""A small JSON Schema checker for the subset our own report schema uses, so that reading a facts file does
not import jsonschema (about 100 ms of start-up on the H200 machine) when the file is well-formed.

It answers only "valid or not"; when the answer is "not valid", or when the schema uses a keyword it does
not know, the caller falls back to jsonschema for the exact message. tests/facts/test_minischema.py checks that it
agrees with jsonschema on generated documents.
"""

from __future__ import annotations

import re

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}
_KNOWN = {
    "$schema",
    "$id",
    "$defs",
    "$ref",
    "title",
    "description",
    "type",
    "properties",
    "items",
    "additionalProperties",
    "enum",
    "const",
    "anyOf",
    "pattern",
    "required",
}


class Unsupported(Exception):
    """The schema uses a keyword this checker does not implement."""


def _is_integer(value: Any) -> bool:
    """JSON Schema 2020-12: an integer is a number with a zero fractional part, so 0.0 is one (as jq writes it)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, float) and value.is_integer()


def _type_ok(value: Any, name: str) -> bool:
    if name == "integer":
        return _is_integer(value)
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    expected = _TYPES.get(name)
    if expected is None:
        raise Unsupported(f"type {name}")
    return isinstance(value, expected)


def _equal(a: Any, b: Any) -> bool:
    # JSON Schema equality: 1 and True differ, 1 and 1.0 are equal
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return bool(a == b)


def is_valid(value: Any, schema: Any, root: dict[str, Any]) -> bool:
    """True if `value` is valid against `schema` (with local $refs into `root`). Raises Unsupported."""
    if schema is True or schema == {}:
        return True
    if schema is False:
        return False
    if not isinstance(schema, dict):
        raise Unsupported("schema is not an object")
    unknown = set(schema) - _KNOWN
    if unknown:
        raise Unsupported(", ".join(sorted(unknown)))
    if "$ref" in schema:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            raise Unsupported(f"$ref {ref}")
        target: Any = root
        for part in ref[2:].split("/"):
            target = target[part]
        if not is_valid(value, target, root):
            return False
    if "type" in schema:
        names = schema["type"]
        if isinstance(names, list):
            if not any(_type_ok(value, n) for n in names):
                return False
        elif not _type_ok(value, names):  # (one type, most nodes: no generator for it, ~20% of a facts file's check)
            return False
    if "const" in schema and not _equal(value, schema["const"]):
        return False
    if "enum" in schema and not any(_equal(value, e) for e in schema["enum"]):
        return False
    if "pattern" in schema and isinstance(value, str) and not re.search(schema["pattern"], value):
        return False
    if "anyOf" in schema and not any(is_valid(value, s, root) for s in schema["anyOf"]):
        return False
    if isinstance(value, dict):
        for key in schema.get("required") or []:
            if key not in value:
                return False
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if key in props:
                if not is_valid(item, props[key], root):
                    return False
            elif not is_valid(item, extra, root):
                return False
    if isinstance(value, list) and "items" in schema:
        return all(is_valid(item, schema["items"], root) for item in value)
    return True


def _allows_integer_only(schema: dict[str, Any]) -> bool:
    names = schema.get("type")
    names = names if isinstance(names, list) else [names]
    return "integer" in names and "number" not in names


def normalise_integers(value: Any, schema: Any, root: dict[str, Any]) -> Any:
    """`value` (already valid against `schema`) with every float that stands where the schema says integer
    turned into an int (0.0 -> 0), so the code that needs a GPU index or a count gets an int. Containers are
    changed in place; the (possibly new) value is returned."""
    if not isinstance(schema, dict):
        return value
    if "$ref" in schema and isinstance(schema["$ref"], str) and schema["$ref"].startswith("#/"):
        target: Any = root
        for part in schema["$ref"][2:].split("/"):
            target = target[part]
        value = normalise_integers(value, target, root)
    if isinstance(value, float) and value.is_integer() and _allows_integer_only(schema):
        return int(value)
    if "anyOf" in schema:
        for branch in schema["anyOf"]:
            try:
                if is_valid(value, branch, root):
                    # the branch first, then this schema's own properties (an anyOf that only names the keys
                    # required beside them, as facts.image does, must not end the walk)
                    value = normalise_integers(value, branch, root)
                    break
            except Unsupported:
                continue
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            value[key] = normalise_integers(item, props.get(key, extra), root)
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            value[i] = normalise_integers(item, schema["items"], root)
    return value
