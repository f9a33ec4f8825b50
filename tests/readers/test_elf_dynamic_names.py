"""ElfFile.dynamic() reads DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH from the piece of the dynamic string
table that holds them (libtorch_cuda.so's table is 11 MB, those names a few hundred bytes), with the answers of
the whole table read: an offset past the table reads "", a name without a NUL runs to the table's end, a name
longer than the piece sends the read to the whole table, a table outside the file is the same one-line error."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import build_so

from stackcheck.readers.elf import PT_DYNAMIC, ElfError, ElfFile

NEEDED = [f"libdep{i}.so.{i % 3}" for i in range(30)]


def _whole_table(path: Path) -> tuple[list[str], str | None, str | None, str | None] | str:
    """What dynamic() answered when it read the whole table (the answer these files are checked against)."""
    try:
        with ElfFile(path) as elf:
            seg = next(p for p in elf.segments if p.type == PT_DYNAMIC)
            raw = elf.read_at(seg.offset, seg.filesz - seg.filesz % 16, "dynamic section")
            tags = [struct.unpack_from("<qQ", raw, i) for i in range(0, len(raw), 16)]
            first = {tag: val for tag, val in reversed(tags)}
            off = elf.vaddr_to_offset(first[5])
            assert off is not None
            table = elf.read_at(off, first[10], "dynamic string table")
    except ElfError as exc:
        return str(exc)

    def cstr(at: int) -> str:
        if at >= len(table):
            return ""
        end = table.find(b"\0", at)
        return table[at : end if end >= 0 else len(table)].decode("utf-8", "replace")

    single = {tag: cstr(val) for tag, val in tags if tag in (14, 15, 29)}
    return [cstr(val) for tag, val in tags if tag == 1], single.get(14), single.get(15), single.get(29)


def _piece(path: Path) -> tuple[list[str], str | None, str | None, str | None] | str:
    try:
        with ElfFile(path) as elf:
            dyn = elf.dynamic()
    except ElfError as exc:
        return str(exc)
    return dyn.needed, dyn.soname, dyn.rpath, dyn.runpath


def _strsz_at(data: bytes) -> int:
    """The file offset of DT_STRSZ's value."""
    phoff, phnum = struct.unpack_from("<Q", data, 32)[0], struct.unpack_from("<H", data, 56)[0]
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + 56 * i)
        if p_type == PT_DYNAMIC:
            for at in range(p_offset, p_offset + p_filesz, 16):
                if struct.unpack_from("<q", data, at)[0] == 10:
                    return at + 8
    raise AssertionError("no DT_STRSZ")


@pytest.mark.parametrize("rpath", ["$ORIGIN/../lib", "/" + "r" * 9000])  # the long one outruns the piece
def test_every_table_size_answers_as_the_whole_table(tmp_path: Path, rpath: str) -> None:
    data = build_so(defined=[f"_ZN5torch{i}fnEv" for i in range(400)], needed=NEEDED, soname="libx.so.1", rpath=rpath)
    at = _strsz_at(data)
    size = struct.unpack_from("<Q", data, at)[0]
    cuts = sorted({0, 1, 2, 9, 10, 11, 200, 400, 401, size // 2, size - 1, size, size + 1, len(data), 10 * len(data)})
    cuts += list(range(len(NEEDED[0]) + 9000, len(NEEDED[0]) + 9600, 37))
    seen = set()
    for n, strsz in enumerate(cuts):
        path = tmp_path / f"x{n}.so"
        path.write_bytes(data[:at] + struct.pack("<Q", strsz) + data[at + 8 :])
        got = _piece(path)
        assert got == _whole_table(path), strsz
        seen.add("error" if isinstance(got, str) else "cut" if "" in got[0] or got[2] != rpath else "whole")
    assert seen == {"error", "cut", "whole"}
    path = tmp_path / "whole.so"
    path.write_bytes(data)
    assert _piece(path) == (NEEDED, "libx.so.1", rpath, None)


def test_the_names_cost_a_piece_not_the_table(tmp_path: Path) -> None:
    path = tmp_path / "big.so"
    path.write_bytes(build_so(defined=[f"_ZN5torch3jit{i}fnEv" * 4 for i in range(20000)], needed=NEEDED))
    with ElfFile(path) as elf:
        elf.dynamic()
        read = elf.bytes_read
    assert read < 16 << 10, read  # the table is ~1.5 MB
