"""Versions as they appear on a GPU box: PEP 440 package versions with local tags (2.9.1+cu130),
driver versions (580.159.04), CUDA versions (13.0, 13.0.88) and CUDA wheel tags (cu130).

Everything here is total: a string that cannot be read gives None, never an exception.
"""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

_CUDA_TAG = re.compile(r"^cu(\d{2,3})$")
_NUMERIC = re.compile(r"^\d+(\.\d+)*$")


@lru_cache(maxsize=4096)
def parse_version(text: str) -> Version | None:
    """A PEP 440 version, or None. '2.9.1+cu130' keeps its local tag; use `public()` to drop it."""
    if not isinstance(text, str) or len(text) > 200:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def public(text: str) -> Version | None:
    """The version without its local tag: '2.9.1+cu130' -> 2.9.1."""
    v = parse_version(text)
    if v is None:
        return None
    return Version(v.public)


def local_tag(text: str) -> str | None:
    v = parse_version(text)
    return v.local if v is not None else None


@lru_cache(maxsize=1024)
def parse_specifier(text: str) -> SpecifierSet | None:
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        return None


def version_in(version: str, spec: str) -> bool | None:
    """Does a version (local tag ignored, pre-releases admitted) satisfy a specifier set? None if unreadable."""
    v = public(version)
    s = parse_specifier(spec)
    if v is None or s is None:
        return None
    return s.contains(v, prereleases=True)


def numeric_tuple(text: object) -> tuple[int, ...] | None:
    """'580.159.04' -> (580, 159, 4); '13.0' -> (13, 0). Driver and CUDA versions are not PEP 440."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    if not _NUMERIC.match(t) or len(t) > 50:
        return None
    return tuple(int(p) for p in t.split("."))


def compare_numeric(a: str, b: str) -> int | None:
    """-1, 0 or 1 comparing dotted numeric versions, padding the shorter with zeros; None if unreadable."""
    ta, tb = numeric_tuple(a), numeric_tuple(b)
    if ta is None or tb is None:
        return None
    n = max(len(ta), len(tb))
    pa, pb = ta + (0,) * (n - len(ta)), tb + (0,) * (n - len(tb))
    return (pa > pb) - (pa < pb)


def cuda_from_tag(tag: str | None) -> str | None:
    """'cu130' -> '13.0', 'cu128' -> '12.8', 'cu92' -> '9.2'; None for 'cpu', 'rocm6.2' or garbage."""
    if not tag:
        return None
    m = _CUDA_TAG.match(tag.strip().lower())
    if not m:
        return None
    digits = m.group(1)
    return f"{int(digits[:-1])}.{digits[-1]}"


def tag_from_cuda(cuda: str | None) -> str | None:
    """'13.0' -> 'cu130'; '12.8.1' -> 'cu128'."""
    t = numeric_tuple(cuda) if cuda else None
    if t is None or len(t) < 2:
        return None
    return f"cu{t[0]}{t[1]}"


def cuda_major_minor(text: str | None) -> str | None:
    """'13.0.88' -> '13.0'."""
    t = numeric_tuple(text) if text else None
    if t is None:
        return None
    return f"{t[0]}.{t[1] if len(t) > 1 else 0}"


def variant_of(version: str | None) -> str | None:
    """The CUDA variant named by a local tag: '0.3.21+cu130' -> 'cu130', '2.9.1+cpu' -> 'cpu'."""
    if not version:
        return None
    tag = local_tag(version)
    if not tag:
        return None
    first = tag.split(".")[0]
    if _CUDA_TAG.match(first) or first == "cpu" or first.startswith("rocm"):
        return first
    return None
