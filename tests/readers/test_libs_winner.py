"""loader_winner (the second hop's search, which stops at the first copy that loads) names the same winner and
step as resolve_needed's full search, over every combination of search steps, copies present and copies of
another machine."""

from __future__ import annotations

import itertools

from stackcheck.readers import libs
from stackcheck.readers.elf import EM_AARCH64, EM_X86_64


def _cases() -> list[tuple[libs.ObjectInfo, dict[str, str], list[libs.CacheEntry]]]:
    out = []
    for rpath, runpath, ldpath, cached in itertools.product(
        (None, "$ORIGIN/../a:/opt/b"), (None, "$ORIGIN"), ("", "/env/x:/env/y"), (False, True)
    ):
        obj = libs.ObjectInfo("/site/pkg/lib/libx.so", ["libdep.so.1"], rpath, runpath, EM_X86_64)
        cache = [
            libs.CacheEntry("libdep.so.1", "/cache/arm/libdep.so.1", libs.FLAG_ELF_LIBC6 | libs.FLAG_AARCH64_LIB64),
            libs.CacheEntry("libdep.so.1", "/cache/x86/libdep.so.1", libs.FLAG_ELF_LIBC6 | libs.FLAG_X8664_LIB64),
            libs.CacheEntry("libother.so", "/cache/x86/libother.so", libs.FLAG_ELF_LIBC6 | libs.FLAG_X8664_LIB64),
        ]
        out.append((obj, {"LD_LIBRARY_PATH": ldpath}, cache if cached else []))
    return out


PLACES = [
    "/site/pkg/a/libdep.so.1",
    "/opt/b/libdep.so.1",
    "/env/x/libdep.so.1",
    "/env/y/libdep.so.1",
    "/site/pkg/lib/libdep.so.1",
    "/cache/arm/libdep.so.1",
    "/cache/x86/libdep.so.1",
    "/lib/x86_64-linux-gnu/libdep.so.1",
    "/usr/lib64/libdep.so.1",
    "/site/pkg/lib/sub/libdep.so.1",
]


def test_loader_winner_is_resolve_needed_winner() -> None:
    checked = found = 0
    vias: set[str] = set()
    for obj, env, cache in _cases():
        for mask in range(0, 1 << len(PLACES), 7):  # a spread of which copies exist
            present = {p for i, p in enumerate(PLACES) if mask >> i & 1}
            foreign = {p for i, p in enumerate(PLACES) if mask >> (i + 3) & 1 and i % 2}  # built for aarch64

            def is_file(path: str, present: set[str] = present) -> bool:
                return path in present

            def compatible(path: str, machine: int, foreign: set[str] = foreign) -> bool:
                return (EM_AARCH64 if path in foreign else EM_X86_64) == machine

            for needed in ("libdep.so.1", "sub/libdep.so.1", "libmissing.so"):
                res = libs.resolve_needed(obj, needed, env, cache, is_file=is_file, compatible=compatible)
                got = libs.loader_winner(obj, needed, env, cache, is_file=is_file, compatible=compatible)
                want = None if res["winner"] is None else (res["winner"], res["via"])
                assert got == want, (obj, env, cache, sorted(present), sorted(foreign), needed)
                checked += 1
                found += want is not None
                vias.add(str(res["via"]) if want else "")
    assert checked > 1000 and found > 500
    assert vias >= {"rpath", "LD_LIBRARY_PATH", "runpath", "ld.so.cache", "default", "path", ""}
