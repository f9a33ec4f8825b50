"""Compare what a release's files say (derive_release) with what the manifests record for that release,
fact by fact, in four kinds: pins, gate values, flags (per-release presence of launch.json's flags) and
compiled architectures. Each comparison is a `Finding`; `agreement()` counts them per kind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stackcheck.facts.versions import parse_version, public, version_in

KINDS = ("pins", "gates", "flags", "archs")


@dataclass
class Finding:
    kind: str  # pins | gates | flags | archs
    key: str  # dependency, gate id, flag, variant
    status: str  # same | differs | derived-only | shipped-only | new
    derived: Any = None
    shipped: Any = None
    where: str | None = None  # the file and line derive read it at
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "key": self.key, "status": self.status}
        for name in ("derived", "shipped", "where", "note"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out


@dataclass
class Comparison:
    package: str
    version: str
    origin: str
    known: bool  # the manifests have this release
    findings: list[Finding] = field(default_factory=list)

    def agreement(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {k: {} for k in KINDS}
        for f in self.findings:
            out[f.kind][f.status] = out[f.kind].get(f.status, 0) + 1
        return out

    @property
    def differences(self) -> list[Finding]:
        return [f for f in self.findings if f.status not in ("same",)]


def shipped_release(manifests: Any, package: str, version: str) -> dict[str, Any] | None:
    target = public(version)
    for rel in manifests.releases(package):
        rv = parse_version(str(rel.get("version", "")))
        if rv is not None and target is not None and rv == target:
            return dict(rel)
    return None


def _spec_equal(a: str, b: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(a) == SpecifierSet(b)
    except InvalidSpecifier:
        return a.replace(" ", "") == b.replace(" ", "")


def _compare_pins(derived: Mapping[str, Any], rel: dict[str, Any] | None, out: list[Finding]) -> None:
    got = derived.get("requires") or {}
    lines = derived.get("lines") or {}
    file = derived.get("file")
    if rel is None:
        for dep, spec in sorted(got.items()):
            out.append(Finding("pins", dep, "new", spec, None, f"{file} line {lines.get(dep)}"))
        return
    shipped = rel.get("requires") or {}
    inferred = " (the shipped entry is inferred: " + str(rel.get("note")) + ")" if rel.get("inferred") else ""
    for dep in sorted(set(got) | set(shipped)):
        where = f"{file} line {lines[dep]}" if dep in lines else None
        if dep in got and dep in shipped:
            status = "same" if _spec_equal(str(got[dep]), str(shipped[dep])) else "differs"
            out.append(Finding("pins", dep, status, got[dep], shipped[dep], where))
        elif dep in got:
            out.append(Finding("pins", dep, "derived-only", got[dep], None, where))
        else:
            out.append(
                Finding(
                    "pins",
                    dep,
                    "shipped-only",
                    None,
                    shipped[dep],
                    file,
                    f"the wheel declares no pin on {dep}{inferred}",
                )
            )
    for key in ("requires_python",):
        if derived.get(key) is not None or rel.get(key) is not None:
            a, b = derived.get(key), rel.get(key)
            status = "same" if a and b and _spec_equal(str(a), str(b)) else ("derived-only" if b is None else "differs")
            out.append(Finding("pins", key, status, a, b, f"{file} line {derived.get('requires_python_line')}"))
    got_x = derived.get("requires_extras") or {}
    ship_x = rel.get("requires_extras") or {}
    for dep in sorted(set(got_x) | set(ship_x)):
        a, b = sorted(got_x.get(dep) or []), sorted(ship_x.get(dep) or [])
        status = "same" if a == b else ("derived-only" if not b else "shipped-only" if not a else "differs")
        out.append(Finding("pins", f"{dep}[extras]", status, a or None, b or None, file))
    got_o = derived.get("optional_requires") or {}
    ship_o = rel.get("optional_requires") or {}
    for extra in sorted(set(got_o) | set(ship_o)):
        a, b = got_o.get(extra), ship_o.get(extra)
        status = "same" if a == b else ("derived-only" if b is None else "shipped-only" if a is None else "differs")
        out.append(Finding("pins", f"[{extra}]", status, a, b, file))


def _compare_gates(derived: Mapping[str, Any], manifests: Any, version: str, out: list[Finding]) -> None:
    from stackcheck.readers.sourcetables import compare_with_release

    for gate_id, reading in sorted(derived.items()):
        gate = manifests.source_table(gate_id) or {}
        hit = next(
            (
                r
                for r in gate.get("releases") or []
                if isinstance(r, dict) and version_in(version, str(r.get("versions")))
            ),
            None,
        )
        where = f"{reading.get('file')} line {reading.get('line')}" if reading.get("file") else None
        status = reading.get("status")
        if status == "ok":
            if hit is None:
                out.append(Finding("gates", gate_id, "derived-only", reading.get("value"), None, where))
            else:
                same = compare_with_release(reading.get("value"), hit.get("value")) == "same"
                out.append(
                    Finding(
                        "gates",
                        gate_id,
                        "same" if same else "differs",
                        reading.get("value"),
                        hit.get("value"),
                        where,
                        f"shipped range {hit.get('versions')}",
                    )
                )
        elif status == "not-found":
            if hit is None:
                out.append(
                    Finding("gates", gate_id, "same", None, None, None, "no table in this release, none recorded")
                )
            else:
                out.append(
                    Finding("gates", gate_id, "differs", None, hit.get("value"), None, str(reading.get("reason")))
                )
        else:
            out.append(
                Finding(
                    "gates",
                    gate_id,
                    "differs",
                    None,
                    hit.get("value") if hit else None,
                    None,
                    f"not read: {reading.get('reason')}",
                )
            )


def _compare_flags(derived: Mapping[str, Any], manifests: Any, version: str, out: list[Finding]) -> None:
    options = {str(o.get("flag")): o for o in manifests.launch.get("options") or [] if isinstance(o, dict)}
    for flag, entry in sorted((derived.get("options") or {}).items()):
        option = options.get(flag) or {}
        hit = next(
            (
                r
                for r in option.get("releases") or []
                if isinstance(r, dict) and version_in(version, str(r.get("versions")))
            ),
            None,
        )
        present = bool(entry.get("present"))
        where = (
            f"{entry.get('file')} line {entry.get('line')}"
            if entry.get("file")
            else "absent from the server's arguments"
        )
        if hit is None:
            out.append(
                Finding("flags", flag, "derived-only", present, None, where, "no launch.json release entry covers it")
            )
        else:
            same = bool(hit.get("present")) is present
            out.append(
                Finding(
                    "flags",
                    flag,
                    "same" if same else "differs",
                    present,
                    bool(hit.get("present")),
                    where,
                    f"shipped range {hit.get('versions')}",
                )
            )
        choices = entry.get("choices")
        known = option.get("choices")
        if isinstance(choices, list) and isinstance(known, dict):
            new = [c for c in choices if c not in known]
            if new:
                out.append(
                    Finding(
                        "flags",
                        f"{flag} choices",
                        "derived-only",
                        new,
                        None,
                        where,
                        "values the release accepts that launch.json does not map to features",
                    )
                )


def variant_of_release(derived: Mapping[str, Any], rel: dict[str, Any] | None) -> str | None:
    """The CUDA variant the derived binaries are: the version's local tag, else the PyPI build the data
    records for the release."""
    from stackcheck.facts.versions import variant_of
    from stackcheck.knowledge.loader import pypi_variant

    return variant_of(str(derived.get("version"))) or pypi_variant(rel)


def _compare_archs(derived: Mapping[str, Any], rel: dict[str, Any] | None, out: list[Finding]) -> None:
    archs = derived.get("archs") or {}
    from stackcheck.facts.archs import sort_targets

    got = sort_targets({*archs.get("sass", []), *archs.get("ptx", [])})
    aarch64 = "aarch64" in str(derived.get("origin", ""))
    key = "archs_aarch64" if aarch64 else "archs"
    if not got:
        status = "new" if rel is None else "same" if not rel.get("variants") else "differs"
        out.append(Finding("archs", "binaries", status, [], None, None, "no GPU code in the release's binaries"))
        return
    variant = variant_of_release(derived, rel)
    shipped = None
    if rel is not None:
        for v in rel.get("variants") or []:
            if isinstance(v, dict) and v.get("variant") == variant:
                shipped = v.get(key) if isinstance(v.get(key), list) else v.get("archs")
    label = f"{variant or 'variant ?'}{' aarch64' if aarch64 else ''}"
    cudart = archs.get("cudart") or []
    cuda = next(
        (
            v.get("cuda")
            for v in (rel or {}).get("variants") or []
            if isinstance(v, dict) and v.get("variant") == variant
        ),
        None,
    )
    if cudart and isinstance(cuda, str):
        major = int(cuda.split(".")[0])
        out.append(
            Finding(
                "archs",
                f"{label} CUDA major",
                "same" if cudart == [major] else "differs",
                cudart,
                major,
                "libcudart.so.N in the binaries' dynamic string tables",
                None if cudart == [major] else f"the data says the PyPI build is {variant} (CUDA {cuda})",
            )
        )
    paths = [f["path"] for f in archs.get("files") or []]
    files = ", ".join(paths[:6]) + (f" and {len(paths) - 6} more" if len(paths) > 6 else "")
    if shipped is None:
        out.append(Finding("archs", label, "derived-only" if rel else "new", got, None, files))
    else:
        same = sorted(set(shipped)) == sorted(got)
        out.append(Finding("archs", label, "same" if same else "differs", got, sort_targets(set(shipped)), files))
    # per library (variants[].libs: the stem of each shared object, the per-architecture copies together)
    libs_got: dict[str, set[str]] = {}
    for f in archs.get("files") or []:
        stem = str(f.get("path", "")).rsplit("/", 1)[-1].split(".", 1)[0]
        libs_got.setdefault(stem, set()).update([*f.get("sass", []), *f.get("ptx", [])])
    shipped_libs: dict[str, Any] = {}
    for v in (rel or {}).get("variants") or []:
        if isinstance(v, dict) and v.get("variant") == variant and isinstance(v.get("libs"), dict) and not aarch64:
            shipped_libs = v["libs"]
    for lib in sorted(set(libs_got) | set(shipped_libs)) if shipped_libs else []:
        a = sort_targets(libs_got.get(lib, set()))
        b = shipped_libs.get(lib)
        if not isinstance(b, list):
            out.append(Finding("archs", f"{label} lib {lib}", "derived-only", a, None, None))
        else:
            status = "same" if sorted(a) == sorted(set(b)) else "differs"
            out.append(Finding("archs", f"{label} lib {lib}", status, a, sort_targets(set(b)), None))


def compare(derived: Mapping[str, Any], manifests: Any) -> Comparison:
    package, version = str(derived.get("package")), str(derived.get("version"))
    rel = shipped_release(manifests, package, version)
    cmp = Comparison(package, version, str(derived.get("origin")), rel is not None)
    if "pins" in derived:
        _compare_pins(derived["pins"], rel, cmp.findings)
    if "gates" in derived:
        _compare_gates(derived["gates"], manifests, version, cmp.findings)
    if "flags" in derived:
        _compare_flags(derived["flags"], manifests, version, cmp.findings)
    if "archs" in derived:
        _compare_archs(derived, rel, cmp.findings)
    if not cmp.known:
        for f in cmp.findings:
            if f.status in ("derived-only",):
                f.status = "new"
    return cmp
