"""Full validation of manifests: JSON Schema (draft 2020-12) first, then what a schema cannot say
(ids unique, version specifiers valid, references that resolve). Every problem is collected and reported
as "FILE: $.json.path: message"; nothing stops at the first."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from stackcheck.facts.versions import parse_specifier, parse_version
from stackcheck.knowledge.package_data import MANIFEST_FILES, schema_texts
from stackcheck.verdicts.fact_paths import fact_path_documented


def json_path(parts: Iterable[Any]) -> str:
    """$.a.b[0]; a key with a newline or another control character is written escaped, so that the message
    it is part of stays one line (a facts file's package named "\\n")."""
    out = "$"
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            key = str(p)
            if not key.isprintable():
                from stackcheck.redact import terminal_safe

                key = terminal_safe(key, newlines=False)
            out += f".{key}"
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


def _unknown_rule(rid: Any, own: set[Any], origin: str, path: list[Any]) -> list[str]:
    """A reference to one of the item's own rules (workaround.for_rules, quantify.rules, quantify.earlier.rule)
    that names none of them; `path` starts with the list ("features"/"checks")."""
    if isinstance(rid, str) and rid not in own:
        return [f"{origin}: {json_path(path)}: no rule {rid!r} in this {str(path[0])[:-1]}"]
    return []


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

    components_doc = full.get("components.json")
    component_packages = components_doc.get("packages") if isinstance(components_doc, dict) else None
    package_keys = set(component_packages) if isinstance(component_packages, dict) else set()

    launch_doc = full.get("launch.json")
    launch_flags = set()
    if isinstance(launch_doc, dict):
        launch_flags = {_h(o.get("flag")) for o in launch_doc.get("options") or [] if isinstance(o, dict)}

    def check_required_by(rb: Any, origin: str, path: list[Any]) -> None:
        """A required_by's source ids, feature ids and the flags its launch conditions name."""
        if not isinstance(rb, dict):
            return
        check_source(rb.get("source"), origin, [*path, "source"])
        for j, fid in enumerate(rb.get("features") or [] if isinstance(rb.get("features"), list) else []):
            if feature_ids and _h(fid) not in feature_ids:
                problems.append(f"{origin}: {json_path([*path, 'features', j])}: unknown feature {fid!r}")
        stack = [
            (c, [*path, "when", j])
            for j, c in enumerate(rb.get("when") or [] if isinstance(rb.get("when"), list) else [])
        ]
        while stack:
            cond, cpath = stack.pop()
            if not isinstance(cond, dict):
                continue
            for j, sub in enumerate(cond.get("any") or [] if isinstance(cond.get("any"), list) else []):
                stack.append((sub, [*cpath, "any", j]))
            for key in ("flag", "option"):
                if key in cond and launch_flags and _h(cond[key]) not in launch_flags:
                    problems.append(f"{origin}: {json_path([*cpath, key])}: {cond[key]!r} is not a flag of launch.json")

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
                check_required_by(item.get("required_by"), origin, [list_key, i, "required_by"])
                for j, rule in enumerate(item.get("rules") or []):
                    if not isinstance(rule, dict):
                        continue
                    base = [list_key, i, "rules", j]
                    check_source(rule.get("source"), origin, [*base, "source"])
                    if "required_by" in rule:
                        if list_key != "checks":
                            problems.append(
                                f"{origin}: {json_path([*base, 'required_by'])}: only a check's rules may have "
                                "their own required_by (a feature is required as a whole)"
                            )
                        check_required_by(rule.get("required_by"), origin, [*base, "required_by"])
                    rule_ids = [r.get("id") for r in item.get("rules") or [] if isinstance(r, dict)]
                    if rule_ids.count(rule.get("id")) > 1:
                        problems.append(f"{origin}: {json_path([*base, 'id'])}: duplicate rule id {rule.get('id')!r}")
                    for part in ("when", "require"):
                        for pred, ppath in _walk_rules(rule.get(part), [*base, part]):
                            _check_pred(pred, ppath, origin, gate_ids, problems)
                            _check_fact_paths(pred, ppath, origin, problems)
                own = {r.get("id") for r in item.get("rules") or [] if isinstance(r, dict)}

                workaround = item.get("workaround")
                if isinstance(workaround, dict) and isinstance(workaround.get("for_rules"), list):
                    for j, rid in enumerate(workaround["for_rules"]):
                        problems += _unknown_rule(rid, own, origin, [list_key, i, "workaround", "for_rules", j])
                quantify = item.get("quantify")
                if isinstance(quantify, dict):
                    check_source(quantify.get("source"), origin, [list_key, i, "quantify", "source"])
                    pkg = quantify.get("package")
                    if isinstance(pkg, str) and package_keys and pkg not in package_keys:
                        # the sweep reads that package's releases: an unknown one would never run, without a word
                        problems.append(
                            f"{origin}: {json_path([list_key, i, 'quantify', 'package'])}: {pkg!r} is not a "
                            "package of components.json"
                        )
                    for j, rid in enumerate(quantify.get("rules") or []):
                        problems += _unknown_rule(rid, own, origin, [list_key, i, "quantify", "rules", j])
                    earlier = quantify.get("earlier")
                    if isinstance(earlier, dict):
                        check_source(earlier.get("source"), origin, [list_key, i, "quantify", "earlier", "source"])
                        rule_path = [list_key, i, "quantify", "earlier", "rule"]
                        problems += _unknown_rule(earlier.get("rule"), own, origin, rule_path)
                        # a misspelt fact in `when` would leave `earlier` unknown on every box, without a word
                        for pred, ppath in _walk_rules(
                            earlier.get("when"), [list_key, i, "quantify", "earlier", "when"]
                        ):
                            _check_pred(pred, ppath, origin, gate_ids, problems)
                            _check_fact_paths(pred, ppath, origin, problems)
                if list_key == "features":
                    _check_path(item, i, origin, gate_ids, problems, check_source)
                for j, rel in enumerate(item.get("releases") or []):
                    if isinstance(rel, dict) and isinstance(rel.get("versions"), str):
                        if parse_specifier(rel["versions"]) is None:
                            problems.append(
                                f"{origin}: {json_path([list_key, i, 'releases', j, 'versions'])}: "
                                f"invalid version specifier {rel['versions']!r}"
                            )
                if list_key == "checks":
                    problems += _library_loads_problems(item, origin, [list_key, i, "extension", "library_loads"])
                if list_key == "signatures" and item.get("feature") and feature_ids:
                    if _h(item["feature"]) not in feature_ids:
                        problems.append(f"{origin}: $.signatures[{i}].feature: unknown feature {item['feature']!r}")
                if list_key == "signatures" and item.get("check") and check_ids:
                    if _h(item["check"]) not in check_ids:
                        problems.append(f"{origin}: $.signatures[{i}].check: unknown check {item['check']!r}")
                if list_key == "signatures" and isinstance(item.get("caused_by"), list):
                    for k, cause in enumerate(item["caused_by"]):
                        if not isinstance(cause, dict):
                            continue
                        for key, ids, what in (("feature", feature_ids, "feature"), ("check", check_ids, "check")):
                            if cause.get(key) and ids and _h(cause[key]) not in ids:
                                problems.append(
                                    f"{origin}: $.signatures[{i}].caused_by[{k}].{key}: unknown {what} {cause[key]!r}"
                                )
                if list_key == "signatures" and isinstance(item.get("pattern"), str):
                    import re

                    try:
                        re.compile(item["pattern"])
                    except re.error as exc:
                        problems.append(f"{origin}: $.signatures[{i}].pattern: invalid regular expression: {exc}")
        if name == "gates.json":
            problems.extend(_gate_overlaps(doc, origin, full))
        if name == "recommend.json":
            problems.extend(_recommend_problems(doc, origin, feature_ids, gate_ids))
            for key in ("decisions", "never"):
                for i, item in enumerate(doc.get(key) or []):
                    if not isinstance(item, dict):
                        continue
                    for field in ("source", "evidence"):
                        _each_source(item.get(field), origin, [key, i, field], check_source)
                    for j, opt in enumerate(item.get("options") or []):
                        if isinstance(opt, dict):
                            path = [key, i, "options", j]
                            _each_source(opt.get("source"), origin, [*path, "source"], check_source)
                            gain = opt.get("gain")
                            if isinstance(gain, dict):
                                _each_source(gain.get("source"), origin, [*path, "gain", "source"], check_source)
        if name == "preflight.json":
            problems.extend(_preflight_problems(doc, origin, feature_ids))
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
    rules_of = {
        _h(f.get("id")): {_h(r.get("id")) for r in f.get("rules") or [] if isinstance(r, dict)}
        for f in get_list("features.json", "features")
        if isinstance(f, dict)
    }
    for name, key in (("launch.json", "options"), ("preflight.json", "model")):
        if name in docs and isinstance(full.get(name), dict):
            problems += _scoped_rule_problems(full[name].get(key), docs[name][0], [key], rules_of)
    if "launch.json" in docs and isinstance(launch_doc, dict) and isinstance(launch_doc.get("release_flags"), dict):
        sglang = component_packages.get("sglang") if isinstance(component_packages, dict) else None
        known_releases = (
            {str(r.get("version")) for r in sglang.get("releases") or [] if isinstance(r, dict)}
            if isinstance(sglang, dict)
            else None
        )
        problems += _release_flag_problems(launch_doc["release_flags"], docs["launch.json"][0], known_releases)
    return problems


def _scoped_rule_problems(node: Any, origin: str, path: list[Any], rules_of: Mapping[Any, set[Any]]) -> list[str]:
    """A requirement that needs a feature for some of its rules (`{feature, when, rules}`, launch.json's options
    and preflight.json's model quantization) names rules the feature has."""
    out: list[str] = []
    if isinstance(node, dict):
        named = node.get("rules")
        if isinstance(node.get("feature"), str) and isinstance(named, list) and rules_of:
            own = rules_of.get(_h(node["feature"]), set())
            for j, rid in enumerate(named):
                if _h(rid) not in own:
                    out.append(f"{origin}: {json_path([*path, 'rules', j])}: {node['feature']} has no rule {rid!r}")
        for k, v in node.items():
            out += _scoped_rule_problems(v, origin, [*path, k], rules_of)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _scoped_rule_problems(v, origin, [*path, i], rules_of)
    return out


def _release_flag_problems(table: Mapping[str, Any], origin: str, known: set[str] | None) -> list[str]:
    """launch.json release_flags: its releases are SGLang releases of components.json, in order, and every run
    of a flag names two of them, the first no later than the last."""
    out: list[str] = []
    releases = [str(r) for r in table.get("releases") or []]
    base = ["release_flags"]
    for i, r in enumerate(releases):
        if known is not None and r not in known:
            out.append(
                f"{origin}: {json_path([*base, 'releases', i])}: {r} is not an sglang release of components.json"
            )
    parsed = [parse_version(r) for r in releases]
    if all(v is not None for v in parsed) and parsed != sorted(parsed):  # type: ignore[type-var]
        out.append(f"{origin}: {json_path([*base, 'releases'])}: not oldest first")
    at = {r: i for i, r in enumerate(releases)}
    flags = table.get("flags")
    where: list[tuple[list[Any], Any]] = [
        (["flags", flag], spans) for flag, spans in (flags.items() if isinstance(flags, dict) else [])
    ]
    where.append((["plugins"], table.get("plugins")))
    for path, spans in where:
        for j, span in enumerate(spans if isinstance(spans, list) else []):
            first, _, last = str(span).partition("-")
            last = last or first
            if first not in at or last not in at or at[first] > at[last]:
                out.append(f"{origin}: {json_path([*base, *path, j])}: {span!r} is not a run of the listed releases")
    return out


def _each_source(value: Any, origin: str, path: list[Any], check: Any) -> None:
    for k, src in enumerate(value if isinstance(value, list) else [value]):
        check(src, origin, [*path, k] if isinstance(value, list) else path)


def _recommend_problems(doc: dict[str, Any], origin: str, feature_ids: set[Any], gate_ids: set[Any]) -> list[str]:
    """recommend.json: unique ids, features and gates that exist, `chosen` predicates that name an earlier
    decision and one of its options, valid release specifiers."""
    out: list[str] = []
    options_of: dict[Any, set[Any]] = {}

    def check_preds(pred: Any, path: list[Any], earlier: dict[Any, set[Any]]) -> None:
        for p, ppath in _walk_rules(pred, path):
            _check_pred(p, ppath, origin, gate_ids, out)
            if "verdict" in p and feature_ids and _h(p["verdict"]) not in feature_ids:
                out.append(f"{origin}: {json_path([*ppath, 'verdict'])}: unknown feature {p['verdict']!r}")
            if "chosen" in p:
                known = earlier.get(_h(p["chosen"]))
                if known is None:
                    out.append(f"{origin}: {json_path([*ppath, 'chosen'])}: {p['chosen']!r} is not an earlier decision")
                else:
                    for k, opt in enumerate(p.get("in") or []):
                        if _h(opt) not in known:
                            out.append(f"{origin}: {json_path([*ppath, 'in', k])}: {p['chosen']} has no option {opt!r}")

    for key in ("decisions", "never"):
        seen: dict[Any, int] = {}
        for i, item in enumerate(doc.get(key) or []):
            if not isinstance(item, dict):
                continue
            base = [key, i]
            ident = _h(item.get("id"))
            if ident in seen:
                out.append(
                    f"{origin}: {json_path([*base, 'id'])}: duplicate id {item.get('id')!r} "
                    f"(first at $.{key}[{seen[ident]}])"
                )
            seen.setdefault(ident, i)
            if item.get("feature") and feature_ids and _h(item["feature"]) not in feature_ids:
                out.append(f"{origin}: {json_path([*base, 'feature'])}: unknown feature {item['feature']!r}")
            for part in ("applies", "when"):
                check_preds(item.get(part), [*base, part], options_of)
            opt_seen: set[Any] = set()
            for j, opt in enumerate(item.get("options") or []):
                if not isinstance(opt, dict):
                    continue
                opath = [*base, "options", j]
                if _h(opt.get("id")) in opt_seen:
                    out.append(f"{origin}: {json_path([*opath, 'id'])}: duplicate option id {opt.get('id')!r}")
                opt_seen.add(_h(opt.get("id")))
                if opt.get("feature") and feature_ids and _h(opt["feature"]) not in feature_ids:
                    out.append(f"{origin}: {json_path([*opath, 'feature'])}: unknown feature {opt['feature']!r}")
                for part in ("scope", "when"):
                    check_preds(opt.get(part), [*opath, part], options_of)
                for pkg, spec in (opt.get("releases") or {}).items():
                    if isinstance(spec, str) and parse_specifier(spec) is None:
                        out.append(
                            f"{origin}: {json_path([*opath, 'releases', pkg])}: invalid version specifier {spec!r}"
                        )
            if key == "decisions":
                options_of[ident] = opt_seen
    return out


def _library_loads_problems(check: Mapping[str, Any], origin: str, path: list[Any]) -> list[str]:
    """A check's extension.library_loads (torchao_gate.fbgemm_loading): its module one of the extension's modules,
    and every row's range a version specifier (a misspelt range would leave the library unjudged without a word)."""
    ext = check.get("extension")
    table = ext.get("library_loads") if isinstance(ext, dict) else None
    if not isinstance(table, dict):
        return []
    out: list[str] = []
    modules = ext.get("modules") if isinstance(ext, dict) else None
    if isinstance(modules, list) and table.get("module") not in modules:
        out.append(f"{origin}: {json_path([*path, 'module'])}: {table.get('module')!r} is not one of the modules")
    for j, row in enumerate(table.get("releases") or []):
        versions = row.get("versions") if isinstance(row, dict) else None
        if isinstance(versions, str) and parse_specifier(versions) is None:
            where = json_path([*path, "releases", j, "versions"])
            out.append(f"{origin}: {where}: invalid version specifier {versions!r}")
    return out


def _preflight_problems(doc: dict[str, Any], origin: str, feature_ids: set[Any]) -> list[str]:
    """preflight.json: the features a model format needs exist, version ranges parse, and a memory tier
    list is ordered (the first tier whose below_mb is above the GPU's memory applies; the last has none)."""
    out: list[str] = []
    model: dict[str, Any] = doc["model"] if isinstance(doc.get("model"), dict) else {}
    for i, q in enumerate(model.get("quantization") or []):
        for j, req in enumerate(q.get("requires") or [] if isinstance(q, dict) else []):
            feature = req.get("feature") if isinstance(req, dict) else req
            if feature_ids and _h(feature) not in feature_ids:
                out.append(f"{origin}: $.model.quantization[{i}].requires[{j}]: unknown feature {feature!r}")
    ranges = [(f"modelopt_algos[{i}]", r) for i, r in enumerate(model.get("modelopt_algos") or [])]
    named = model.get("modelopt_quant_method")
    kept = named.get("kept") if isinstance(named, dict) else None
    mapped = kept.get("mapped_architectures") if isinstance(kept, dict) else None
    ranges += [(f"modelopt_quant_method.kept.mapped_architectures[{i}]", r) for i, r in enumerate(mapped or [])]
    for where, entry in [*ranges, ("modelopt_quant_method", named)]:
        versions = entry.get("versions") if isinstance(entry, dict) else None
        if isinstance(versions, str) and parse_specifier(versions) is None:
            out.append(f"{origin}: $.model.{where}.versions: invalid version specifier {versions!r}")
    memory: dict[str, Any] = doc["memory"] if isinstance(doc.get("memory"), dict) else {}
    layout: dict[str, Any] = doc["gpu_layout"] if isinstance(doc.get("gpu_layout"), dict) else {}
    ranged = [("memory", "default_mem_fraction", memory), ("gpu_layout", "dp_offset", layout)]
    for section, key, holder in ranged:
        for i, entry in enumerate(holder.get(key) or []):
            if not isinstance(entry, dict):
                continue
            versions = entry.get("versions")
            if isinstance(versions, str) and parse_specifier(versions) is None:
                out.append(f"{origin}: $.{section}.{key}[{i}].versions: invalid version specifier {versions!r}")
            tiers = [t for t in entry.get("tiers") or [] if isinstance(t, dict)]
            bounds = [t.get("below_mb") for t in tiers]
            if tiers and (bounds[-1] is not None or any(b is None for b in bounds[:-1])):
                out.append(f"{origin}: $.{section}.{key}[{i}].tiers: only the last tier has no below_mb")
            numbers = [b for b in bounds if isinstance(b, int | float)]
            if numbers != sorted(numbers):
                out.append(f"{origin}: $.{section}.{key}[{i}].tiers: below_mb must increase")
    return out


def _gate_overlaps(doc: dict[str, Any], origin: str, full: Mapping[str, Any]) -> list[str]:
    """Two release ranges of one gate that both admit a release the manifests know contradict each other
    (which value holds for that release?). Checked against every known release of the gate's package."""
    from stackcheck.facts.versions import version_in

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


def _check_fact_paths(pred: dict[str, Any], path: list[Any], origin: str, problems: list[str]) -> None:
    """A rule's fact paths (and a `{"fact": ...}` value) are ones the evaluation context resolves
    (stackcheck.verdicts.fact_paths, the table of manifests/README.md): a misspelt path would leave the rule
    unknown on every box."""
    for where, side in ((path, pred), ([*path, "value"], pred.get("value"))):
        fact = side.get("fact") if isinstance(side, dict) else None
        if isinstance(fact, str) and not fact_path_documented(fact):
            problems.append(
                f"{origin}: {json_path([*where, 'fact'])}: unknown fact path {fact!r} (manifests/README.md lists them)"
            )


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
        from stackcheck.knowledge.package_data import shipped_texts

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
