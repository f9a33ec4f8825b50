"""Write what derive read as manifest entries: the manifests' own components.json, gates.json and
launch.json with the derived releases merged in, so the output directory is a drop-in `--manifests DIR`
(and passes `stackcheck manifests validate DIR`), and `diff` against the shipped files is the review.

How a derived fact enters the data:
- components.json: a release the data lacks gets an entry (pins, Requires-Python, extras, the variant's
  architectures), every value with its file and line; a known release keeps its hand-written entry, and a
  value derive reads differently replaces it, with the derived source added and a note naming the old value;
- gates.json and launch.json (per-release values): a version no range covers extends the newest range when
  its value is the same and the range ends at the newest release the data knows (`<=V`), else gets its own
  `==V` entry; a known version whose value differs is cut out of its range (`,!=V`) and given its own
  entry, so no two ranges claim it.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

from stackcheck.derive.compare import shipped_release, variant_of_release
from stackcheck.facts.versions import version_in

_UPPER = re.compile(r"<=\s*([0-9][A-Za-z0-9.+!_-]*)")


def _place(entries: list[dict[str, Any]], version: str, key: str, value: Any, src: Any, same: Any) -> bool:
    """Record `key: value` for `version` in a list of {"versions", key, "source"} entries; True if changed.
    `same(a, b)` compares values."""
    for entry in entries:
        if version_in(version, str(entry.get("versions"))):
            if same(entry.get(key), value):
                return False
            entry["versions"] = f"{entry['versions']},!={version}"
            entries.insert(
                entries.index(entry),
                {
                    "versions": f"=={version}",
                    key: value,
                    "source": src,
                    "note": f"derived from the release's files; the range {entry['versions']} held {entry.get(key)!r}",
                },
            )
            return True
    for entry in reversed(entries):
        spec = str(entry.get("versions"))
        upper = _UPPER.search(spec)
        if upper and same(entry.get(key), value):
            entry["versions"] = spec[: upper.start(1)] + version + spec[upper.end(1) :]
            sources = entry.get("source")
            entry["source"] = [*(sources if isinstance(sources, list) else [sources] if sources else []), src]
            return True
    entries.append({"versions": f"=={version}", key: value, "source": src})
    return True


def apply(docs: dict[str, Any], derived: Mapping[str, Any], manifests: Any) -> list[str]:
    """Merge one derived release into `docs` (components.json, gates.json, launch.json, modified in
    place); returns what changed, one line each."""
    from stackcheck.readers.sourcetables import compare_with_release

    changes: list[str] = []
    package, version = str(derived.get("package")), str(derived.get("version"))
    url = f"https://pypi.org/project/{package}/{version.split('+', 1)[0]}/"

    def src(title: str) -> dict[str, str]:
        return {"title": f"{package} {version} ({derived.get('origin')}), {title}", "url": url}

    for gate_id, reading in sorted((derived.get("gates") or {}).items()):
        if reading.get("status") != "ok":
            continue
        for gate in docs["gates.json"].get("gates") or []:
            if gate.get("id") == gate_id:
                s = src(f"{reading.get('file')} line {reading.get('line')}")
                same = lambda a, b: compare_with_release(a, b) == "same"  # noqa: E731
                if _place(gate.setdefault("releases", []), version, "value", reading.get("value"), s, same):
                    changes.append(f"gates.json {gate_id}: {version} -> {reading.get('value')!r}")
    for flag, entry in sorted(((derived.get("flags") or {}).get("options") or {}).items()):
        for option in docs["launch.json"].get("options") or []:
            if option.get("flag") == flag:
                where = (
                    f"{entry.get('file')} line {entry.get('line')}"
                    if entry.get("present")
                    else ("sglang/srt/server_args.py and arg_groups/fields/: not declared")
                )
                if _place(
                    option.setdefault("releases", []),
                    version,
                    "present",
                    bool(entry.get("present")),
                    src(where),
                    lambda a, b: bool(a) is bool(b),
                ):
                    changes.append(f"launch.json {flag}: {version} present={bool(entry.get('present'))}")
    packages = docs["components.json"].setdefault("packages", {})
    spec = packages.get(package)
    if not isinstance(spec, dict):
        return [*changes, f"components.json: {package} is not a package of the data (not written)"]
    rel = shipped_release(manifests, package, version)
    pins = derived.get("pins") or {}
    entry_new: dict[str, Any] = {"version": version}
    if pins.get("requires"):
        entry_new["requires"] = dict(pins["requires"])
    if pins.get("requires_extras"):
        entry_new["requires_extras"] = dict(pins["requires_extras"])
    if pins.get("optional_requires"):
        entry_new["optional_requires"] = dict(pins["optional_requires"])
    if pins.get("requires_python"):
        entry_new["requires_python"] = pins["requires_python"]
    sources = list(pins.get("sources") or [])
    archs = derived.get("archs") or {}
    from stackcheck.facts.archs import sort_targets

    targets = sort_targets({*archs.get("sass", []), *archs.get("ptx", [])})
    variant = variant_of_release(derived, rel) if targets else None
    releases = spec.setdefault("releases", [])
    if rel is None:
        if targets:
            newest = releases[-1] if releases else {}
            guess = variant or newest.get("pypi_variant")
            cuda = archs.get("cudart") or []
            v: dict[str, Any] = {
                "variant": guess or "cu130",
                "archs": targets,
                "pypi": True,
                "source": src("shared objects: " + ", ".join(f["path"] for f in archs.get("files") or [])[:300]),
            }
            if not variant:
                v["inferred"] = True
                v["note"] = (
                    f"the variant name is taken from the previous release's PyPI build ({guess}); the "
                    f"binaries link libcudart major {cuda or '?'}; the architectures are read"
                )
            entry_new["pypi_variant"] = v["variant"]
            entry_new["variants"] = [v]
        entry_new["source"] = sources or src(f"{derived.get('origin')}")
        entry_new["note"] = (
            "derived from the release's own files by stackcheck manifests derive; review before shipping"
        )
        releases.append(entry_new)
        changes.append(f"components.json {package} {version}: new release entry")
        return changes
    for existing in releases:
        if existing.get("version") != rel.get("version"):
            continue
        for key in ("requires", "requires_extras", "optional_requires", "requires_python"):
            if key in entry_new and existing.get(key) != entry_new[key]:
                old = existing.get(key)
                existing[key] = entry_new[key]
                existing["source"] = [*_as_list(existing.get("source")), *sources]
                existing["note"] = f"{existing.get('note', '')} {key} derived from the wheel (was {old!r})".strip()
                changes.append(f"components.json {package} {version} {key}: {old!r} -> {entry_new[key]!r}")
        if targets and variant:
            for v in existing.get("variants") or []:
                key = "archs_aarch64" if "aarch64" in str(derived.get("origin")) else "archs"
                if v.get("variant") == variant and sorted(set(v.get(key) or [])) != sorted(targets):
                    old = v.get(key)
                    v[key] = targets
                    v["source"] = [*_as_list(v.get("source")), src("shared objects (SASS/PTX from fatbin headers)")]
                    other = "archs" if key == "archs_aarch64" else "archs_aarch64"
                    v["inferred"] = other in v  # the other platform's list was not read
                    v["note"] = f"{key} read from the wheel's binaries by stackcheck manifests derive (was {old})" + (
                        f"; {other} as before, not read" if other in v else ""
                    )
                    changes.append(f"components.json {package} {version} {variant} {key}: {old} -> {targets}")
    return changes


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def emit(derived_releases: Sequence[Mapping[str, Any]], manifests: Any) -> tuple[dict[str, Any], list[str]]:
    """The three documents with every derived release merged in, and the list of changes."""
    docs = {
        name: copy.deepcopy(manifests.docs.get(name) or {}) for name in ("components.json", "gates.json", "launch.json")
    }
    changes: list[str] = []
    for derived in derived_releases:
        changes.extend(apply(docs, derived, manifests))
    return docs, changes
