"""Derive what a release's own files say: the facts the manifests record per release, each with the file
and line it was read from.

`derive_release(release, manifests)` returns a JSON-compatible dict:

    {"package", "version", "origin", "kind",
     "pins":  {"requires", "requires_extras", "optional_requires", "requires_python", "sources", "untracked"},
     "gates": {gate_id: {"status", "value", "file", "line", "reason"}},
     "flags": {"declared": [every flag and alias], "options": {launch.json flag: {"present", "file", "line",
               "choices"?}}, "files": [...]},
     "archs": {"sass", "ptx", "cudart", "files", ...},
     "torch_cuda": "13.0",                      (torch: torch/version.py)
     "undecided": [features needing hand-written knowledge],
     "problems": [what could not be read, one line each]}

Which facts are read depends on the package (KINDS); `want` narrows them (the audit asks only for what a
verdict needs)."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from typing import Any

from stackcheck.derive.tree import Release, TreeError, normalise
from stackcheck.facts.model import KERNEL_MODULE, KERNEL_PACKAGES
from stackcheck.pyast import parse

KINDS: dict[str, tuple[str, ...]] = {
    "sglang": ("pins", "gates", "flags"),
    "flashinfer-python": ("pins", "gates"),
    "flashinfer-cubin": ("pins", "archs"),
    "flashinfer-jit-cache": ("pins", "archs"),
    **dict.fromkeys(KERNEL_PACKAGES, ("pins", "archs")),
    "sgl-deep-gemm": ("pins", "archs"),
    "torch": ("pins", "archs", "torch_cuda"),
}

#: The binaries that are the package's own code, as the binary probe reads them (stackcheck.readers.binaries
#: PACKAGE_GLOBS): under its import directory. Libraries a wheel bundles beside it (sgl-kernel's lib/mscclpp*,
#: _mscclpp*.so) are listed in the result but not counted in the package's architectures.
BINARY_PREFIXES: dict[str, tuple[str, ...]] = {
    "torch": ("torch/lib/",),
    **dict.fromkeys(KERNEL_PACKAGES, (f"{KERNEL_MODULE}/",)),
    "flashinfer-cubin": ("flashinfer_cubin/",),
    "flashinfer-jit-cache": ("flashinfer_jit_cache/",),
    "sgl-deep-gemm": ("deep_gemm/",),
}


def pypi_url(name: str, version: str) -> str:
    return f"https://pypi.org/project/{name}/{version.split('+', 1)[0]}/"


def source(release: Release, file: str, line: int | None, what: str | None = None) -> dict[str, str]:
    """A source naming the release, the file and the line (a sources.json source_document)."""
    kind = "wheel" if release.tree.kind == "wheel" else "installed files"
    where = f"{file} line {line}" if line else file
    title = f"{release.name} {release.version} {kind} ({release.origin}), {where}"
    if what:
        title += f": {what}"
    return {"title": title, "url": pypi_url(release.name, release.version)}


# -- pins ---------------------------------------------------------------------------------------------


def tracked_dependencies(manifests: Any, package: str) -> set[str]:
    """The dependencies whose pins the manifests record for `package`: every name in any of its releases'
    `requires`, and the packages components.json describes."""
    tracked = set((manifests.components.get("packages") or {}).keys())
    for rel in manifests.releases(package):
        tracked.update((rel.get("requires") or {}).keys())
        for extra in (rel.get("optional_requires") or {}).values():
            if isinstance(extra, dict):
                tracked.update(extra.keys())
    tracked.discard(package)
    return tracked


def derive_pins(release: Release, meta: Any, tracked: set[str]) -> dict[str, Any]:
    from stackcheck.derive.metadata import self_extras

    file = f"{release.dist_info}/METADATA"
    documented = self_extras(meta, "all") if "all" in meta.extras else set()
    requires: dict[str, str] = {}
    extras_of: dict[str, list[str]] = {}
    sources: list[dict[str, str]] = []
    lines: dict[str, int] = {}
    notes: list[str] = []
    untracked: list[str] = []
    optional: dict[str, dict[str, str]] = {}
    base_or_documented = [
        r for r in meta.requires if r.name != meta.name and r.on_platform and (r.extra is None or r.extra in documented)
    ]
    # the base install first, then the extras `name[all]` pulls in (SGLang <= 0.5.3 kept its pins under `srt`)
    for req in sorted(base_or_documented, key=lambda r: (r.extra is not None, r.line)):
        if not req.specifier:
            continue
        if req.name not in tracked:
            untracked.append(f"{req.name}{req.specifier} (line {req.line})")
            continue
        if req.name in requires:
            continue
        requires[req.name] = req.specifier
        lines[req.name] = req.line
        if req.extras:
            extras_of[req.name] = list(req.extras)
        under = f" under the extra {req.extra!r}, pulled by {meta.name}[all]" if req.extra else ""
        sources.append(source(release, file, req.line, f"Requires-Dist {req.text}{under}"))
        if req.extra:
            notes.append(f"{req.name}{req.specifier} sits under the {req.extra!r} extra (pulled by {meta.name}[all])")
    for req in meta.requires:
        if req.extra is None or req.extra in documented or not req.on_platform or req.name == meta.name:
            continue
        if req.name in tracked and req.specifier and requires.get(req.name) != req.specifier:
            optional.setdefault(req.extra, {})[req.name] = req.specifier
            sources.append(source(release, file, req.line, f"Requires-Dist {req.text}"))
    out: dict[str, Any] = {
        "file": file,
        "requires": requires,
        "lines": lines,
        "sources": sources,
    }
    if extras_of:
        out["requires_extras"] = extras_of
    if optional:
        out["optional_requires"] = optional
    if meta.requires_python:
        out["requires_python"] = meta.requires_python
        out["requires_python_line"] = meta.lines.get("requires-python")
    if untracked:
        out["untracked"] = untracked
    if notes:
        out["notes"] = notes
    return out


# -- gates --------------------------------------------------------------------------------------------


def _locate(text: str, spec: Mapping[str, Any]) -> int | None:
    """The line a table was read at: the assignment or use of its symbol, or the keyword in its function."""
    names: list[str] = []
    for key in ("symbol", "keyword", "function"):
        raw = spec.get(key)
        names.extend([raw] if isinstance(raw, str) else [x for x in raw or [] if isinstance(x, str)])
    patterns = []
    kind = spec.get("read")
    for name in names:
        word = re.escape(name)
        if kind in ("dict_keys", "class_attr_dict_keys"):
            patterns.append(re.compile(rf"^\s*{word}\s*(:[^=]*)?=[^=]"))
        elif kind == "subscript_style":
            patterns.append(re.compile(rf"{word}\s*(\[|\.get\()"))
        elif kind == "call_keyword_list" and name == spec.get("keyword"):
            patterns.append(re.compile(rf"\b{word}\s*="))
        else:
            patterns.append(re.compile(rf"\b{word}\b"))
    message = spec.get("message")
    if isinstance(message, str) and message:  # guard_list, cpp_check_ints: the check's own message
        patterns.insert(0, re.compile(re.escape(message)))
    lines = text.splitlines()
    start = 0
    function = spec.get("function")
    if isinstance(function, list) and function and isinstance(function[0], str):
        function = function[0]
    if kind in ("call_keyword_list", "guard_list") and isinstance(function, str):
        for i, line in enumerate(lines):
            if re.match(rf"\s*(async\s+)?def\s+{re.escape(function)}\b", line):
                start = i
                break
    for pattern in patterns:
        for i in range(start, len(lines)):
            if pattern.search(lines[i]):
                return i + 1
    return None


def derive_gates(release: Release, gates: list[Mapping[str, Any]]) -> dict[str, Any]:
    from stackcheck.readers.sourcetables import MAX_SOURCE_BYTES, read_table_from

    texts: dict[str, bytes] = {}

    def load(rel: str) -> bytes | None:
        if rel not in texts:
            if not release.tree.exists(rel):
                return None
            try:
                texts[rel] = release.tree.read_bytes(rel, MAX_SOURCE_BYTES)
            except TreeError as exc:
                raise OSError(str(exc)) from None
        return texts[rel]

    out: dict[str, Any] = {}
    for gate in gates:
        probe = gate.get("probe")
        if normalise(str(gate.get("package", ""))) != release.name or not isinstance(probe, Mapping):
            continue
        reading = dict(read_table_from(probe, load, release.tree.label))
        reading.pop("sha256", None)
        file = reading.get("file")
        if reading.get("status") == "ok" and isinstance(file, str) and file in texts:
            reading["line"] = _locate(texts[file].decode("utf-8", "replace"), probe)
        out[str(gate.get("id"))] = reading
    return out


# -- flags --------------------------------------------------------------------------------------------


def derive_flags(release: Release, launch: Mapping[str, Any]) -> dict[str, Any]:
    from stackcheck.derive.flags import scan_flags

    scan = scan_flags(release.tree)
    declared = sorted({name for f in scan.flags.values() for name in [f.flag, *f.aliases]})
    options: dict[str, Any] = {}
    for option in launch.get("options") or []:
        if not isinstance(option, Mapping) or not isinstance(option.get("flag"), str):
            continue
        flag = str(option["flag"])
        hit = scan.lookup(flag)
        entry: dict[str, Any] = {"present": hit is not None}
        if hit is not None:
            entry.update({"file": hit.file, "line": hit.line, "declared_as": hit.flag, "how": hit.how})
            if hit.choices is not None:
                entry["choices"] = hit.choices
            elif hit.choices_note:
                entry["choices_note"] = hit.choices_note
        options[flag] = entry
    return {"declared": declared, "options": options, "files": scan.files, "problems": scan.problems}


# -- torch --------------------------------------------------------------------------------------------


def derive_torch_cuda(release: Release) -> tuple[str | None, int | None]:
    """torch/version.py's `cuda = '13.0'` (read with ast, as the packages probe does) and its line."""
    try:
        text = release.tree.read_bytes("torch/version.py", 64 * 1024).decode("utf-8")
        tree = parse(text)
    except (TreeError, UnicodeDecodeError, SyntaxError, ValueError):
        return None, None
    for stmt in tree.body:
        target: ast.expr | None = stmt.target if isinstance(stmt, ast.AnnAssign) else None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
        value = getattr(stmt, "value", None)
        if isinstance(target, ast.Name) and target.id == "cuda" and isinstance(value, ast.Constant):
            return (value.value if isinstance(value.value, str) else None), stmt.lineno
    return None, None


# -- the whole release --------------------------------------------------------------------------------


def read_metadata(release: Release) -> Any:
    from stackcheck.derive.metadata import MetadataError, parse_metadata

    file = f"{release.dist_info}/METADATA"
    try:
        text = release.tree.read_bytes(file).decode("utf-8", "replace")
    except TreeError as exc:
        raise MetadataError(str(exc)) from None
    meta = parse_metadata(text, release.tree.where(file))
    release.name, release.version = meta.name, meta.version
    return meta


def derive_release(release: Release, manifests: Any, want: set[str] | None = None) -> dict[str, Any]:
    """Everything `release`'s files say that the manifests record (see the module docstring). Raises
    MetadataError when the METADATA cannot be read (without it the release is not known)."""
    meta = read_metadata(release)
    kinds = KINDS.get(release.name, ("pins",))
    if want is not None:
        kinds = tuple(k for k in kinds if k in want)
    out: dict[str, Any] = {
        "package": release.name,
        "version": release.version,
        "origin": release.origin,
        "kind": release.tree.kind,
        "problems": list(meta.problems),
    }
    if release.name not in KINDS:
        out["problems"].append(f"{release.name}: not a package derive knows (only its pins are read)")
    if "pins" in kinds:
        out["pins"] = derive_pins(release, meta, tracked_dependencies(manifests, release.name))
    if "gates" in kinds:
        out["gates"] = derive_gates(release, manifests.gates)
        for gate_id, reading in out["gates"].items():
            if reading.get("status") == "error":
                out["problems"].append(f"gate {gate_id}: {reading.get('status')}: {reading.get('reason')}")
    if "flags" in kinds:
        try:
            out["flags"] = derive_flags(release, manifests.launch)
            out["problems"].extend(out["flags"].pop("problems"))
        except TreeError as exc:
            out["problems"].append(f"flags not read: {exc}")
    if "archs" in kinds:
        from stackcheck.derive.kernels import is_binary_name, scan_binaries

        prefixes = BINARY_PREFIXES.get(release.name)
        names = release.tree.names()
        if prefixes:
            outside = sorted(n for n in names if is_binary_name(n) and not n.startswith(prefixes))
            names = [n for n in names if n.startswith(prefixes)]
        else:
            outside = []
        scan = scan_binaries(release.tree, names)
        out["archs"] = scan.to_json()
        if outside:
            out["archs"]["not_counted"] = outside
        out["archs"]["seconds"] = round(scan.seconds, 3)
        out["problems"].extend(f"binary not read: {e}" for e in scan.errors)
    if "torch_cuda" in kinds:
        cuda, line = derive_torch_cuda(release)
        out["torch_cuda"] = cuda
        out["torch_cuda_line"] = line
    if release.name in KINDS:
        from stackcheck.derive.decide import undecided_features

        gates = {str(g.get("id")): g for g in manifests.gates}
        out["undecided"] = [u for u in undecided_features(manifests.features, release.name, gates) if u["hand"]]
    return out
