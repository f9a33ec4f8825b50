"""Full validation of manifests: JSON Schema (draft 2020-12) first, then what a schema cannot say
(ids unique, version specifiers valid, references that resolve). Every problem is collected and reported
as "FILE: $.json.path: message"; nothing stops at the first."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from stackcheck.manifest_loader import MANIFEST_FILES, schema_texts
from stackcheck.versions import parse_specifier, parse_version


def json_path(parts: Iterable[Any]) -> str:
    out = "$"
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


@lru_cache(maxsize=1)
def _registry() -> tuple[Any, dict[str, Any]]:
    from referencing import Registry, Resource

    schemas = {name: json.loads(text) for name, text in schema_texts().items()}
    resources = []
    for name, schema in schemas.items():
        res = Resource.from_contents(schema)
        resources.append((name, res))
        if isinstance(schema, dict) and "$id" in schema:
            resources.append((schema["$id"], res))
    return Registry().with_resources(resources), schemas


def schema_problems(schema_name: str, doc: Any, origin: str) -> list[str]:
    from jsonschema import Draft202012Validator

    registry, schemas = _registry()
    schema = schemas.get(schema_name)
    if schema is None:
        return [f"{origin}: no schema {schema_name} shipped with stackcheck"]
    validator = Draft202012Validator(schema, registry=registry)
    problems = []
    for err in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path))):
        best = err
        if err.context:
            from jsonschema.exceptions import best_match

            best = best_match(err.context) or err
        msg = best.message if len(best.message) < 300 else best.message[:297] + "..."
        problems.append(f"{origin}: {json_path(best.absolute_path)}: {msg}")
    return problems


def check_schemas_against_metaschema() -> list[str]:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    problems = []
    for name, text in schema_texts().items():
        try:
            Draft202012Validator.check_schema(json.loads(text))
        except SchemaError as exc:
            problems.append(f"schemas/{name}: {json_path(exc.absolute_path)}: {exc.message}")
    return problems


def _h(value: Any) -> Any:
    """A hashable stand-in for any JSON value (ids of a malformed document may be lists or objects)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _walk_rules(pred: Any, path: list[Any]) -> Iterable[tuple[dict[str, Any], list[Any]]]:
    if not isinstance(pred, dict):
        return
    yield pred, path
    for key in ("all", "any"):
        if isinstance(pred.get(key), list):
            for i, sub in enumerate(pred[key]):
                yield from _walk_rules(sub, [*path, key, i])
    if isinstance(pred.get("not"), dict):
        yield from _walk_rules(pred["not"], [*path, "not"])


def semantic_problems(docs: Mapping[str, tuple[str, Any]], known: Mapping[str, Any] | None = None) -> list[str]:
    """Checks a schema cannot express. `known` holds the full merged documents (for references from a
    partial user directory into the shipped set)."""
    problems: list[str] = []
    full = dict(known or {})
    for name, (_, doc) in docs.items():
        full.setdefault(name, doc)

    def get_list(name: str, key: str) -> list[Any]:
        d = full.get(name)
        return d.get(key, []) if isinstance(d, dict) and isinstance(d.get(key), list) else []

    gate_ids = {_h(g.get("id")) for g in get_list("gates.json", "gates") if isinstance(g, dict)}
    feature_ids = {_h(f.get("id")) for f in get_list("features.json", "features") if isinstance(f, dict)}
    check_ids = {_h(c.get("id")) for c in get_list("checks.json", "checks") if isinstance(c, dict)}
    sources_doc = full.get("sources.json")
    source_ids = set(sources_doc.get("sources", {})) if isinstance(sources_doc, dict) else set()

    def check_source(value: Any, origin: str, path: list[Any]) -> None:
        if isinstance(value, str) and source_ids and value not in source_ids:
            problems.append(f"{origin}: {json_path(path)}: unknown source id {value!r}")

    for name, (origin, doc) in docs.items():
        if not isinstance(doc, dict):
            continue
        for list_key in ("features", "checks", "gates", "signatures", "architectures"):
            items = doc.get(list_key)
            if not isinstance(items, list):
                continue
            seen: dict[Any, int] = {}
            for i, item in enumerate(items):
                if not isinstance(item, dict):
                    continue
                key = _h(item.get("id"))
                if key in seen:
                    problems.append(
                        f"{origin}: $.{list_key}[{i}].id: duplicate id {item.get('id')!r} "
                        f"(first at $.{list_key}[{seen[key]}])"
                    )
                else:
                    seen[key] = i
                check_source(item.get("source"), origin, [list_key, i, "source"])
                for j, rule in enumerate(item.get("rules") or []):
                    if not isinstance(rule, dict):
                        continue
                    base = [list_key, i, "rules", j]
                    check_source(rule.get("source"), origin, [*base, "source"])
                    rule_ids = [r.get("id") for r in item.get("rules") or [] if isinstance(r, dict)]
                    if rule_ids.count(rule.get("id")) > 1:
                        problems.append(f"{origin}: {json_path([*base, 'id'])}: duplicate rule id {rule.get('id')!r}")
                    for part in ("when", "require"):
                        for pred, ppath in _walk_rules(rule.get(part), [*base, part]):
                            _check_pred(pred, ppath, origin, gate_ids, problems)
                if list_key == "features":
                    _check_path(item, i, origin, gate_ids, problems, check_source)
                for j, rel in enumerate(item.get("releases") or []):
                    if isinstance(rel, dict) and isinstance(rel.get("versions"), str):
                        if parse_specifier(rel["versions"]) is None:
                            problems.append(
                                f"{origin}: {json_path([list_key, i, 'releases', j, 'versions'])}: "
                                f"invalid version specifier {rel['versions']!r}"
                            )
                if list_key == "signatures" and item.get("feature") and feature_ids:
                    if _h(item["feature"]) not in feature_ids:
                        problems.append(f"{origin}: $.signatures[{i}].feature: unknown feature {item['feature']!r}")
                if list_key == "signatures" and item.get("check") and check_ids:
                    if _h(item["check"]) not in check_ids:
                        problems.append(f"{origin}: $.signatures[{i}].check: unknown check {item['check']!r}")
                if list_key == "signatures" and isinstance(item.get("pattern"), str):
                    import re

                    try:
                        re.compile(item["pattern"])
                    except re.error as exc:
                        problems.append(f"{origin}: $.signatures[{i}].pattern: invalid regular expression: {exc}")
        if name == "gates.json":
            problems.extend(_gate_overlaps(doc, origin, full))
        if name == "components.json":
            pkgs = doc.get("packages")
            if isinstance(pkgs, dict):
                for pkg, spec in pkgs.items():
                    if not isinstance(spec, dict):
                        continue
                    versions_seen: set[str] = set()
                    for i, rel in enumerate(spec.get("releases") or []):
                        if not isinstance(rel, dict):
                            continue
                        path = ["packages", pkg, "releases", i]
                        ver = rel.get("version")
                        if isinstance(ver, str):
                            if parse_version(ver) is None:
                                problems.append(f"{origin}: {json_path([*path, 'version'])}: invalid version {ver!r}")
                            if ver in versions_seen:
                                problems.append(f"{origin}: {json_path([*path, 'version'])}: duplicate release {ver}")
                            versions_seen.add(ver)
                        check_source(rel.get("source"), origin, [*path, "source"])
                        req = rel.get("requires")
                        if isinstance(req, dict):
                            for dep, spec_text in req.items():
                                if isinstance(spec_text, str) and parse_specifier(spec_text) is None:
                                    problems.append(
                                        f"{origin}: {json_path([*path, 'requires', dep])}: "
                                        f"invalid version specifier {spec_text!r}"
                                    )
    return problems


def _gate_overlaps(doc: dict[str, Any], origin: str, full: Mapping[str, Any]) -> list[str]:
    """Two release ranges of one gate that both admit a release the manifests know contradict each other
    (which value holds for that release?). Checked against every known release of the gate's package."""
    from stackcheck.versions import version_in

    comps = full.get("components.json")
    pkgs = comps.get("packages") if isinstance(comps, dict) else None
    out = []
    for i, gate in enumerate(doc.get("gates") or []):
        if not isinstance(gate, dict) or not isinstance(pkgs, dict):
            continue
        spec = pkgs.get(gate.get("package"))
        releases = [r.get("version") for r in (spec.get("releases") or [])] if isinstance(spec, dict) else []
        ranges = [(j, r.get("versions")) for j, r in enumerate(gate.get("releases") or []) if isinstance(r, dict)]
        for version in (v for v in releases if isinstance(v, str)):
            hits = [j for j, rng in ranges if isinstance(rng, str) and version_in(version, rng)]
            if len(hits) > 1:
                out.append(
                    f"{origin}: $.gates[{i}].releases[{hits[1]}].versions: overlaps $.gates[{i}].releases[{hits[0]}]"
                    f" for {gate.get('package')} {version}: two values for one release"
                )
                break
    return out


def _check_path(
    feature: dict[str, Any],
    index: int,
    origin: str,
    gate_ids: set[Any],
    problems: list[str],
    check_source: Any,
) -> None:
    """A feature's path hops: their rules exist in the feature, their gates in gates.json, their versions parse."""
    path = feature.get("path")
    if not isinstance(path, list):
        return
    rule_ids = {_h(r.get("id")) for r in feature.get("rules") or [] if isinstance(r, dict)}
    for j, hop in enumerate(path):
        if not isinstance(hop, dict):
            continue
        base = ["features", index, "path", j]
        check_source(hop.get("source"), origin, [*base, "source"])
        for k, rule in enumerate(hop.get("rules") or []):
            if _h(rule) not in rule_ids:
                problems.append(f"{origin}: {json_path([*base, 'rules', k])}: no rule {rule!r} in this feature")
        if "gate" in hop and gate_ids and _h(hop["gate"]) not in gate_ids:
            problems.append(f"{origin}: {json_path([*base, 'gate'])}: unknown gate {hop['gate']!r}")
        versions = hop.get("versions")
        if isinstance(versions, str) and parse_specifier(versions) is None:
            problems.append(f"{origin}: {json_path([*base, 'versions'])}: invalid version specifier {versions!r}")


def _check_pred(pred: dict[str, Any], path: list[Any], origin: str, gate_ids: set[Any], problems: list[str]) -> None:
    for side in (pred, pred.get("value")):
        if isinstance(side, dict) and "gate" in side and gate_ids and _h(side["gate"]) not in gate_ids:
            problems.append(f"{origin}: {json_path(path)}: unknown gate {side['gate']!r}")
    if pred.get("op") == "version" and isinstance(pred.get("value"), str):
        if parse_specifier(pred["value"]) is None:
            problems.append(f"{origin}: {json_path([*path, 'value'])}: invalid version specifier {pred['value']!r}")


def validate_documents(docs: Mapping[str, tuple[str, Any]], partial: bool = False) -> list[str]:
    """Schema + semantic validation of parsed manifest documents (file name -> (origin, document)).
    With `partial`, references may point into the shipped set."""
    problems: list[str] = []
    for name, (origin, doc) in docs.items():
        schema = MANIFEST_FILES.get(name)
        if schema is None:
            problems.append(f"{origin}: unknown manifest file")
            continue
        problems.extend(schema_problems(schema, doc, origin))
    known: dict[str, Any] = {}
    if partial:
        from stackcheck.manifest_loader import shipped_texts

        for name, (_, text) in shipped_texts().items():
            try:
                known[name] = json.loads(text)
            except ValueError:
                continue
    try:
        problems.extend(semantic_problems(docs, known))
    except Exception as exc:  # a document of an unexpected shape: its schema problems are reported above
        if not problems:
            problems.append(f"semantic checks failed on an unexpected document shape: {type(exc).__name__}: {exc}")
    return problems
