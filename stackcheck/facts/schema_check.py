"""Checking a facts document read with --facts against the report schema's `facts` definition, so that
bad input gets one clear line with the JSON path, never a crash deep in the engine.

A well-formed document is accepted by stackcheck.facts.minischema without importing jsonschema (start-up speed);
only a document it rejects is run through jsonschema, for the exact message and path.

A document found valid is remembered between runs (issue 21: the check was ~8.5 M instructions of every `--facts`
verb, `plan --want` included, on the write-up box): the BLAKE2b digest of its text (facts.model.read_document's,
given only where masking left the parsed document as it was) joins a short list kept in the user cache
(knowledge/prepared.py's directory and files: `facts-valid-TAG.marshal`, private and atomic, a corrupt or foreign
file a miss), under a key naming the report schema's file and the modules that read, mask and check the text
(their stamps, paths.code_stamp: an edit of any is a new key). A later run of the same text skips the check. Only
a document the built-in checker accepted on its own and in which no integral float stands anywhere (the only
thing the check changes: "index": 0.0 -> 0, as jq writes it) is remembered, so skipping the check leaves the
document exactly as checking it would; an invalid document is never remembered (its error is worded every run).
STACKCHECK_PLAN_CACHE=0 turns it off with the other caches."""

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


def check_facts(facts: Any, origin: str, digest: str | None = None) -> None:
    """Raise BadInputError unless `facts` is valid; once valid, integral floats where the schema says
    integer (`"index": 0.0`, as jq arithmetic writes it) become ints, in place. `digest`: the digest of the text
    `facts` was read from as it is (facts.model.text_digest), to skip the check of a text found valid before (see
    the module's text); None checks every time."""
    kept = _kept(digest) if digest is not None else None
    if kept is not None and digest in kept[2]:
        return
    from stackcheck.facts.minischema import Unsupported, is_valid, normalise_integers

    schema = report_schema()
    try:
        if is_valid(facts, schema["$defs"]["facts"], schema):
            as_it_is = kept is not None and not _integral_float(facts)  # (before normalise_integers changes any)
            normalise_integers(facts, schema["$defs"]["facts"], schema)
            _check_candidates(facts, origin)
            if as_it_is and kept is not None and digest is not None:
                _remember(kept, digest)
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


#: the name of the kept list of valid texts' digests (knowledge/prepared.py's directory), and its length at most
KEPT_NAME = "facts-valid"
KEPT_MAX = 64
#: the modules whose code makes a text's facts and judges them (stackcheck/ relative), beside the report schema
_KEPT_READERS = (
    "facts/schema_check.py",
    "facts/minischema.py",
    "facts/model.py",
    "facts/versions.py",
    "facts/pep440.py",
    "lean_json.py",
    "redact.py",
)


def _kept(digest: str) -> tuple[str, str, list[str]] | None:
    """(directory, key, the digests kept under this run's key: [] where none) of the valid texts, or None where
    nothing can be kept: the caches turned off, no cache directory, the schema not a file of the package."""
    import os

    from stackcheck.knowledge import prepared
    from stackcheck.knowledge.package_data import _package_dir

    where = prepared.directory()
    schemas = _package_dir("schemas")
    if where is None or schemas is None:
        return None
    package = os.path.dirname(schemas)
    readers = (os.path.join(schemas, "report.schema.json"), *(os.path.join(package, r) for r in _KEPT_READERS))
    key = prepared.key_of(KEPT_NAME, "", *readers)
    doc = prepared.load(where, KEPT_NAME, key)
    digests = doc.get("digests") if doc is not None else None
    if type(digests) is not list or not all(type(d) is str for d in digests):
        digests = []
    return where, key, digests


def _remember(kept: tuple[str, str, list[str]], digest: str) -> None:
    """Add `digest` to the kept list (the oldest dropped past KEPT_MAX) and write it (a failure: nothing kept)."""
    from stackcheck.knowledge import prepared

    where, key, digests = kept
    prepared.keep(where, KEPT_NAME, key, {"digests": [*[d for d in digests if d != digest], digest][-KEPT_MAX:]})


def _integral_float(value: Any) -> bool:
    """Whether an integral float (0.0, 2.0) stands anywhere in `value` (a parsed JSON document)."""
    if type(value) is float:
        return value.is_integer()
    if type(value) is dict:
        return any(_integral_float(v) for v in value.values())
    if type(value) is list:
        return any(_integral_float(v) for v in value)
    return False
