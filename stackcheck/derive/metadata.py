"""A distribution's METADATA, read with the line of every header: name, version, Requires-Python, and each
Requires-Dist with its specifier, the extras it asks of the dependency, and the extra of this distribution
it sits under (from its marker). Markers other than `extra` are judged for Linux x86_64 CPython, the
platform stackcheck audits; a requirement whose marker is false there is kept aside with the marker.

Parsing uses `packaging` (imported here, not at start-up: derive is not on the audit's fast path unless a
release is newer than the data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stackcheck.derive.tree import normalise

MAX_HEADER_LINES = 20_000

#: The environment markers are judged in (extra is set per extra).
LINUX_X86_64 = {
    "os_name": "posix",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "implementation_name": "cpython",
    "python_version": "3.12",
    "python_full_version": "3.12.3",
    "implementation_version": "3.12.3",
    "platform_release": "",
    "platform_version": "",
}


class MetadataError(Exception):
    """METADATA cannot be read; one line naming the file."""


@dataclass(frozen=True)
class Requirement:
    name: str  # normalised
    specifier: str  # "" when unpinned; the text as written, normalised by packaging ("==0.7.2")
    extras: tuple[str, ...]  # extras asked of the dependency (flashinfer_python[cu13] -> ("cu13",))
    extra: str | None  # the extra of this distribution it belongs to; None: the base install
    marker: str | None  # the marker as written
    on_platform: bool  # the marker (apart from extra) holds on Linux x86_64
    line: int
    text: str


@dataclass
class Metadata:
    name: str
    version: str
    requires_python: str | None
    requires: list[Requirement] = field(default_factory=list)
    extras: list[str] = field(default_factory=list)
    lines: dict[str, int] = field(default_factory=dict)  # header -> line of its first occurrence
    problems: list[str] = field(default_factory=list)


def parse_metadata(text: str, where: str) -> Metadata:
    """Parse the headers (up to the first blank line). Raises MetadataError without Name or Version."""
    headers: list[tuple[str, str, int]] = []
    for number, line in enumerate(text.splitlines()[:MAX_HEADER_LINES], start=1):
        if not line:  # the headers end at the first empty line (a line of spaces continues a header)
            break
        if line[0] in " \t" and headers:
            name, value, at = headers[-1]
            headers[-1] = (name, f"{value} {line.strip()}", at)
            continue
        key, sep, value = line.partition(":")
        if sep:
            headers.append((key.strip(), value.strip(), number))
    first: dict[str, tuple[str, int]] = {}
    for key, value, number in headers:
        first.setdefault(key.lower(), (value, number))
    if "name" not in first or "version" not in first:
        raise MetadataError(f"{where}: no Name or Version header")
    meta = Metadata(
        name=normalise(first["name"][0]),
        version=first["version"][0],
        requires_python=first.get("requires-python", (None, 0))[0],
        lines={k: v[1] for k, v in first.items()},
    )
    meta.extras = [normalise(v) for k, v, _ in headers if k.lower() == "provides-extra"]
    for key, value, number in headers:
        if key.lower() == "requires-dist":
            try:
                meta.requires.append(_requirement(value, number, meta.extras))
            except ValueError as exc:
                meta.problems.append(f"{where} line {number}: Requires-Dist not understood: {exc}")
    return meta


def _requirement(text: str, line: int, extras: list[str]) -> Requirement:
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as PkgRequirement

    try:
        req = PkgRequirement(text)
    except InvalidRequirement as exc:
        raise ValueError(str(exc).splitlines()[0]) from None
    extra: str | None = None
    on_platform = True
    marker_text: str | None = None
    if req.marker is not None:
        marker_text = str(req.marker)
        try:
            env: dict[str, Any] = dict(LINUX_X86_64)
            env["extra"] = ""
            base = req.marker.evaluate(env)
            if not base:
                under = []
                for name in extras:
                    env["extra"] = name
                    if req.marker.evaluate(env):
                        under.append(name)
                if under:
                    extra = under[0]
                else:
                    on_platform = False
                    # which extra does it name, if any? (kept aside with the marker)
                    extra = _named_extra(marker_text, extras)
        except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName) as exc:
            raise ValueError(f"marker {marker_text!r}: {exc}") from None
    return Requirement(
        name=normalise(req.name),
        specifier=str(req.specifier),
        extras=tuple(sorted(normalise(e) for e in req.extras)),
        extra=extra,
        marker=marker_text,
        on_platform=on_platform,
        line=line,
        text=text,
    )


def _named_extra(marker: str, extras: list[str]) -> str | None:
    for name in extras:
        if f'"{name}"' in marker or f"'{name}'" in marker:
            return name
    return None


def self_extras(meta: Metadata, extra: str, seen: set[str] | None = None) -> set[str]:
    """The extras `extra` pulls in through requirements on the distribution itself (sglang[all] ->
    sglang[srt] -> ...), `extra` included."""
    seen = set() if seen is None else seen
    if extra in seen:
        return seen
    seen.add(extra)
    for req in meta.requires:
        if req.extra == extra and req.name == meta.name:
            for inner in req.extras:
                self_extras(meta, inner, seen)
    return seen
