"""A tiny writer of ELF64 little-endian shared objects for the tests: one PT_LOAD (file offset == address)
holding .dynsym, .dynstr, a GNU and/or System V hash table and .dynamic, with PT_DYNAMIC over the last, and
optionally symbol version records (version needs, version definitions) after it.
No section headers (the loader needs none, and the symbol reader must not either). Lets the tests build
a library that exports some names and one that needs others, without a compiler (CI has only Python)."""

from __future__ import annotations

import struct
from pathlib import Path

from stackcheck.readers.elf import gnu_hash, sysv_hash

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")
_PHDR = struct.Struct("<IIQQQQQQ")
_SYM = struct.Struct("<IBBHQQ")
_DYN = struct.Struct("<qQ")

DT_NEEDED, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT, DT_SONAME = 1, 4, 5, 6, 10, 11, 14
DT_GNU_HASH = 0x6FFFFEF5
DT_VERDEF, DT_VERDEFNUM, DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFC, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF


def build_so(
    defined: list[str] = (),  # type: ignore[assignment]
    undefined: list[str] = (),  # type: ignore[assignment]
    weak_undefined: list[str] = (),  # type: ignore[assignment]
    needed: list[str] = (),  # type: ignore[assignment]
    soname: str | None = None,
    gnu: bool = True,
    sysv: bool = False,
    nbuckets: int = 3,
    version_needs: dict[str, list[str]] | None = None,
    version_defs: list[str] | None = None,
    version_fault: str | None = None,
    rpath: str | None = None,
    runpath: str | None = None,
) -> bytes:
    """The bytes of a shared object that exports `defined` (global functions) and needs `undefined`.

    `version_needs` ({needed file: [version names]}, a name ending in "?" is weak) and `version_defs`
    (version names, the first one the base) add DT_VERNEED / DT_VERDEF records after the dynamic section;
    `rpath` / `runpath` add DT_RPATH / DT_RUNPATH strings;
    `version_fault` corrupts them: "next" (a vn_next/vd_next past the file), "record" (record version 2),
    "name" (a name past the string table), "long" (a chain of 5000 records)."""
    strtab = bytearray(b"\0")

    def add(s: str) -> int:
        off = len(strtab)
        strtab.extend(s.encode() + b"\0")
        return off

    needed_offs = [add(n) for n in needed]
    paths = []  # DT_RPATH (15), DT_RUNPATH (29)
    if rpath is not None:
        paths.append((15, add(rpath)))
    if runpath is not None:
        paths.append((29, add(runpath)))
    vneed = [
        (add(f), [(add(v.rstrip("?")), v.endswith("?"), v.rstrip("?")) for v in vs])
        for f, vs in (version_needs or {}).items()
    ]
    vdef = [(add(v), v) for v in version_defs or []]
    soname_off = add(soname) if soname else None
    # symbol 0 is null; the undefined ones come first (unhashed), then the defined ones sorted by bucket
    und = [(add(n), (1 << 4) | 2, 0) for n in undefined] + [(add(n), (2 << 4) | 2, 0) for n in weak_undefined]
    symoffset = 1 + len(und)
    names = sorted(defined, key=lambda n: gnu_hash(n.encode()) % nbuckets)
    dfn = [(add(n), (1 << 4) | 2, 1) for n in names]
    syms = [(0, 0, 0), *und, *dfn]

    header_size = _EHDR.size + 2 * _PHDR.size
    symtab_off = header_size
    symtab = b"".join(_SYM.pack(name, info, 0, shndx, 0x1000 if shndx else 0, 0) for name, info, shndx in syms)
    strtab_off = symtab_off + len(symtab)
    blob = bytearray()
    gnu_off = sysv_off = None
    pos = strtab_off + len(strtab)
    pos += -pos % 8
    if gnu:
        gnu_off = pos
        bloom_size, shift = 1, 6
        bloom = 0
        buckets = [0] * nbuckets
        chains = []
        hashes = [gnu_hash(n.encode()) for n in names]
        for i, h in enumerate(hashes):
            bloom |= 1 << (h % 64)
            bloom |= 1 << ((h >> shift) % 64)
            b = h % nbuckets
            if buckets[b] == 0:
                buckets[b] = symoffset + i
            last = i + 1 == len(hashes) or hashes[i + 1] % nbuckets != b
            chains.append((h & ~1) | (1 if last else 0))
        table = struct.pack("<IIII", nbuckets, symoffset, bloom_size, shift) + struct.pack("<Q", bloom)
        table += struct.pack(f"<{nbuckets}I", *buckets) + struct.pack(f"<{len(chains)}I", *chains)
        blob += table
        pos += len(table)
        pos += -pos % 8
        blob += b"\0" * (-len(blob) % 8)
    if sysv:
        sysv_off = pos
        nb = nbuckets
        bucket = [0] * nb
        chain = [0] * len(syms)
        for i in range(symoffset, len(syms)):
            h = sysv_hash(names[i - symoffset].encode()) % nb
            chain[i] = bucket[h]
            bucket[h] = i
        table = (
            struct.pack("<II", nb, len(syms)) + struct.pack(f"<{nb}I", *bucket) + struct.pack(f"<{len(chain)}I", *chain)
        )
        blob += table
        pos += len(table)
        pos += -pos % 8
        blob += b"\0" * (-len(blob) % 8)
    dyn = [(DT_NEEDED, off) for off in needed_offs]
    if soname_off is not None:
        dyn.append((DT_SONAME, soname_off))
    dyn += paths
    dyn += [(DT_SYMTAB, symtab_off), (DT_STRTAB, strtab_off), (DT_STRSZ, len(strtab)), (DT_SYMENT, _SYM.size)]
    if gnu_off is not None:
        dyn.append((DT_GNU_HASH, gnu_off))
    if sysv_off is not None:
        dyn.append((DT_HASH, sysv_off))
    dyn_off = pos
    nver = (2 if vneed else 0) + (2 if vdef else 0)
    ver_off = dyn_off + (len(dyn) + nver + 1) * _DYN.size
    records, tags = _version_records(ver_off, vneed, vdef, len(strtab), version_fault)
    dyn += tags
    dyn.append((0, 0))
    dynamic = b"".join(_DYN.pack(t, v) for t, v in dyn)
    assert dyn_off + len(dynamic) == ver_off
    total = ver_off + len(records)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
    ehdr = _EHDR.pack(ident, 3, 62, 1, 0, _EHDR.size, 0, 0, _EHDR.size, _PHDR.size, 2, 64, 0, 0)
    phdrs = _PHDR.pack(1, 4, 0, 0, 0, total, total, 0x1000) + _PHDR.pack(
        2, 6, dyn_off, dyn_off, dyn_off, len(dynamic), len(dynamic), 8
    )
    out = bytearray(ehdr + phdrs + symtab + strtab)
    out += b"\0" * (-len(out) % 8)
    assert len(out) == (gnu_off if gnu_off is not None else sysv_off if sysv_off is not None else dyn_off)
    out += blob
    assert len(out) == dyn_off, (len(out), dyn_off)
    out += dynamic
    out += records
    return bytes(out)


def _version_records(
    at: int,
    vneed: list[tuple[int, list[tuple[int, bool, str]]]],
    vdef: list[tuple[int, str]],
    strsz: int,
    fault: str | None,
) -> tuple[bytes, list[tuple[int, int]]]:
    """The Verneed/Vernaux and Verdef/Verdaux chains at file offset (== address) `at`, and their dynamic tags."""
    out = bytearray()
    tags: list[tuple[int, int]] = []
    index = 2
    if vneed:
        tags += [(DT_VERNEED, at), (DT_VERNEEDNUM, len(vneed))]
        for i, (file_off, versions) in enumerate(vneed):
            last = i + 1 == len(vneed)
            size = 16 + 16 * len(versions)
            vn_next = 0 if last else size
            if fault == "next" and last:
                vn_next = 1 << 30
            out += struct.pack("<HHIII", 2 if fault == "record" else 1, len(versions), file_off, 16, vn_next)
            for j, (name_off, weak, name) in enumerate(versions):
                if fault == "name":
                    name_off = strsz + 100
                nxt = 0 if j + 1 == len(versions) else 16
                out += struct.pack("<IHHII", sysv_hash(name.encode()), 2 if weak else 0, index, name_off, nxt)
                index += 1
        if fault == "long":  # the last aux points at a run of 5000 more
            out[-4:] = struct.pack("<I", 16)
            tail = struct.pack("<IHHII", 0, 0, 2, vneed[0][1][0][0], 16)
            out += tail * 4999 + struct.pack("<IHHII", 0, 0, 2, vneed[0][1][0][0], 0)
    if vdef:
        tags += [(DT_VERDEF, at + len(out)), (DT_VERDEFNUM, len(vdef))]
        for i, (name_off, name) in enumerate(vdef):
            nxt = 0 if i + 1 == len(vdef) else 28
            flags = 1 if i == 0 else 0
            out += struct.pack("<HHHHIII", 1, flags, i + 1, 1, sysv_hash(name.encode()), 20, nxt)
            out += struct.pack("<II", name_off, 0)
    return bytes(out), tags


def write_so(path: Path, **kwargs: object) -> Path:
    path.write_bytes(build_so(**kwargs))  # type: ignore[arg-type]
    return path
