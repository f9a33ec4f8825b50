"""jit._version_strings (issue 21, iperf32) finds GCC's version strings in a driver's .rodata from its dots instead of
trying the pattern at every NUL: it must give exactly what _GCC_VERSION_STRING.finditer gives (the same spans and
groups, in the same order) on any bytes, which these generated strings check (NUL-delimited runs of digits, dots,
spaces, brackets and letters, with version-like strings, a snapshot's date and a vendor's suffix put in)."""

from __future__ import annotations

import random

from stackcheck.probes.jit import _GCC_VERSION_STRING, _version_strings

PIECES = (
    b"\0", b"\0", b"\0\0\0", b".", b"..", b"1", b"12", b"123", b"12345", b" ", b"(", b")", b"[", b"]", b"a", b"gcc",
    b"12.2.0", b"2.1.0", b"13.3.0", b"1.2.3.4", b"15.0.1 20250315", b" (experimental)", b" (Red Hat 11.4.1-3)",
    b" [revision abc]", b"99999.1.1", b"1.22222.3", b"x.1.2", b"%s.%d",
)  # fmt: skip


def _same(data: bytes) -> None:
    want = [(m.span(), m.groups()) for m in _GCC_VERSION_STRING.finditer(data)]
    got = [(m.span(), m.groups()) for m in _version_strings(data)]
    assert got == want, data


def test_the_same_matches_as_the_whole_search_on_generated_strings() -> None:
    rng = random.Random(20261206)
    found = 0
    for _ in range(4000):
        data = b"".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))
        _same(data)
        found += len(_version_strings(data))
    assert found > 100  # (the strings do hold matches: an answer of none everywhere would pass the comparison)


def test_edges() -> None:
    for data in (
        b"",
        b"12.2.0\0",  # no NUL before it: no match
        b"\x0012.2.0",  # no NUL after it: no match
        b"\x0012.2.0\0",
        b"\x0012.2.0\x0013.3.0\0",  # adjacent strings share their NUL
        b"\x001.2.3.4\x005.6.7\0",
        b"\x0012345.2.0\x0012.2.0\0",  # five digits, then a real one
        b"\x0015.0.1 20250315 (experimental) [trunk r1]\0",
        b"\x00.1.2\x001.2.3\0",
        b"\0" * 6 + b"1.2.3\0",
    ):
        _same(data)
    assert [m.group(1) for m in _version_strings(b"\x0012.2.0\x00x\x0013.3.0\0")] == [b"12", b"13"]
