"""readers/elf.py's dynamic symbols: DT_NEEDED, the undefined names and hash-table lookups, on small shared
objects written by tests/elfwriter.py (no compiler needed), checked against gcc/nm where they exist; and
malformed input (truncated, 32-bit, huge counts, endless chains) as one-line ElfErrors, never a hang."""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import build_so, write_so

from stackcheck.readers.elf import DynamicSymbols, ElfError, ElfFile, gnu_hash, sysv_hash

NAMES = [f"sym_{i}_{'x' * (i % 7)}" for i in range(200)] + ["_ZN3c104cuda9SetDeviceEab", "cuGreenCtxCreate"]


def _syms(path: Path) -> tuple[ElfFile, DynamicSymbols]:
    elf = ElfFile(path)
    return elf, DynamicSymbols(elf)


def test_hash_functions_match_the_abi() -> None:
    # values of the GNU and System V hash functions as glibc's dl_new_hash and the gABI's elf_hash give them
    assert gnu_hash(b"") == 5381
    assert gnu_hash(b"printf") == 0x156B2BB8
    assert sysv_hash(b"") == 0
    assert sysv_hash(b"printf") == 0x077905A6


@pytest.mark.parametrize(("gnu", "sysv"), [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("nbuckets", [1, 3, 17, 1024])
def test_lookup_and_undefined(tmp_path: Path, gnu: bool, sysv: bool, nbuckets: int) -> None:
    so = write_so(
        tmp_path / "lib.so",
        defined=NAMES,
        undefined=["cuInit", "_ZN2at4_ops3add4callEv"],
        weak_undefined=["__gmon_start__"],
        needed=["libc10.so", "libtorch_cpu.so"],
        gnu=gnu,
        sysv=sysv,
        nbuckets=nbuckets,
    )
    elf, syms = _syms(so)
    with elf:
        assert syms.needed == ["libc10.so", "libtorch_cpu.so"]
        assert syms.undefined() == ["cuInit", "_ZN2at4_ops3add4callEv"]  # the weak one is left out
        assert all(syms.defines(n) for n in NAMES)
        for absent in ("sym_200_", "cuInit", "__gmon_start__", "", "sym_1", "sym_1_xx"):
            assert not syms.defines(absent), absent
        assert syms.symbol_count() == 1 + 3 + len(NAMES)


def test_a_lookup_reads_a_few_small_pieces(tmp_path: Path) -> None:
    """One name costs a bucket, a chain block, a symbol and a name: far less than the table."""
    many = [f"_ZN5torch3jit{i}fnEv" for i in range(20000)]
    so = write_so(tmp_path / "big.so", defined=many, nbuckets=4099)
    elf, syms = _syms(so)
    with elf:
        syms.defines("_ZN5torch3jit1234fnEv")  # reads the bloom filter once
        before = elf.bytes_read
        assert syms.defines("_ZN5torch3jit19999fnEv")
        assert not syms.defines("_ZN5torch3jit20000fnEv")
        assert elf.bytes_read - before < 400, elf.bytes_read - before


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("nm") is None, reason="needs gcc and nm")
@pytest.mark.parametrize("style", ["gnu", "sysv", "both"])
def test_agrees_with_nm_on_a_compiled_library(tmp_path: Path, style: str) -> None:
    src = tmp_path / "a.c"
    src.write_text(
        "extern int cuInit(int); extern void __attribute__((weak)) maybe(void);\n"
        + "".join(f"int f{i}(int x) {{ if (maybe) maybe(); return cuInit(x) + {i}; }}\n" for i in range(50))
    )
    so = tmp_path / "a.so"
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,--hash-style={style}", "-o", str(so), str(src)], check=True)
    nm = subprocess.run(["nm", "-D", str(so)], capture_output=True, text=True, check=True).stdout.splitlines()
    defined = [ln.split()[-1] for ln in nm if len(ln.split()) == 3 and ln.split()[1] in "TDBRW"]
    undefined = [ln.split()[-1].split("@")[0] for ln in nm if ln.split()[0] == "U"]
    elf, syms = _syms(so)
    with elf:
        assert sorted(syms.undefined()) == sorted(undefined)
        assert all(syms.defines(n) for n in defined)
        assert not syms.defines("cuInit")


def _bad(tmp_path: Path, data: bytes) -> str:
    p = tmp_path / "bad.so"
    p.write_bytes(data)
    start = time.process_time()  # CPU time: a walk of a hostile table is work, a loaded box's wait is not
    try:
        with ElfFile(p) as elf:
            syms = DynamicSymbols(elf)
            syms.undefined()
            for n in NAMES[:20]:
                syms.defines(n)
    except ElfError as exc:
        msg = str(exc)
        assert "\n" not in msg and str(p) in msg
        return msg
    finally:
        assert time.process_time() - start < 5
    return ""


def test_truncated_files_are_one_line_errors(tmp_path: Path) -> None:
    data = build_so(defined=NAMES, undefined=["cuInit"], needed=["libc10.so"])
    for cut in (0, 3, 10, 63, 64, 100, 200, len(data) // 2, len(data) - 20, len(data) - 1):
        msg = _bad(tmp_path, data[:cut])
        assert msg, cut


def test_wrong_class_and_not_elf(tmp_path: Path) -> None:
    data = bytearray(build_so(defined=NAMES))
    data[4] = 1  # ELFCLASS32
    assert "not ELF64" in _bad(tmp_path, bytes(data))
    assert "not an ELF file" in _bad(tmp_path, b"#!/bin/sh\necho hi\n" * 10)


def _patched_hash(data: bytes, field: int, value: int) -> bytes:
    """The GNU hash header's `field` (0 nbuckets, 1 symoffset, 2 bloom_size, 3 bloom_shift) set to `value`."""
    out = bytearray(data)
    # the GNU hash table lies just before the dynamic section's first entry; find it by its tag in .dynamic
    dyn = data.rfind(struct.pack("<q", 0x6FFFFEF5))
    (addr,) = struct.unpack_from("<Q", data, dyn + 8)
    struct.pack_into("<I", out, addr + 4 * field, value)
    return bytes(out)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        (0, 0xFFFFFFFF, "buckets"),
        (0, 0, "buckets"),
        (2, 0x7FFFFFFF, "bloom"),
        (1, 0xFFFFFF, "symbols"),
    ],
)
def test_huge_counts_are_errors_not_hangs(tmp_path: Path, field: int, value: int, words: str) -> None:
    data = build_so(defined=NAMES, undefined=["cuInit"])
    assert words in _bad(tmp_path, _patched_hash(data, field, value))


def test_endless_chain_and_huge_string_table(tmp_path: Path) -> None:
    data = bytearray(build_so(defined=NAMES, nbuckets=1))
    dyn = data.rfind(struct.pack("<q", 0x6FFFFEF5))
    (addr,) = struct.unpack_from("<Q", data, dyn + 8)
    nbuckets, _, bloom_size, _ = struct.unpack_from("<IIII", data, addr)
    chains = addr + 16 + bloom_size * 8 + nbuckets * 4
    for i in range(len(NAMES)):  # no chain entry ends (bit 0 clear) and no hash matches
        struct.pack_into("<I", data, chains + 4 * i, 0)
    _bad(tmp_path, bytes(data))  # the walk stops at the first word with bit 0 set, or at the file's end: no hang
    with ElfFile(tmp_path / "bad.so") as elf:
        assert not DynamicSymbols(elf).defines(NAMES[0])
    strsz = bytes(build_so(defined=NAMES))
    at = strsz.rfind(struct.pack("<q", 10))  # DT_STRSZ
    huge = bytearray(strsz)
    struct.pack_into("<Q", huge, at + 8, 1 << 40)
    assert "string table" in _bad(tmp_path, bytes(huge))


def test_random_corruption_never_escapes_as_another_exception(tmp_path: Path) -> None:
    data = build_so(defined=NAMES[:60], undefined=["cuInit", "_ZN3c10fooEv"], needed=["libc10.so"], sysv=True)
    rng = random.Random(16)
    for _ in range(300):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            bad[rng.randrange(len(bad))] = rng.randrange(256)
        _bad(tmp_path, bytes(bad))  # an ElfError or a result; any other exception fails the test


def test_no_symbol_table_is_an_error_not_an_empty_list(tmp_path: Path) -> None:
    """A library whose dynamic section has no DT_SYMTAB has undefined symbols nobody read: an error (the probe
    then says unknown), never `[]`, which the checks took for 'needs no torch symbol' and passed."""
    data = bytearray(build_so(undefined=["_ZN3c104cuda9SetDeviceEab", "cuGreenCtxCreate"], needed=["libc10.so"]))
    tag = struct.pack("<q", 6)  # DT_SYMTAB in the dynamic table (the last entries of the file): made DT_DEBUG
    at = data.rfind(tag, 0, len(data) - 16)
    assert at > 0 and at % 8 == 0
    data[at : at + 8] = struct.pack("<q", 21)
    path = tmp_path / "nosymtab.so"
    path.write_bytes(bytes(data))
    elf, syms = _syms(path)
    with elf, pytest.raises(ElfError, match="DT_SYMTAB"):
        syms.undefined()


@pytest.mark.parametrize(("value", "info", "found"), [(0, 0x12, False), (0x1000, 0x13, False), (0x1000, 0x12, True)])
def test_only_what_the_loader_binds_counts_as_defined(tmp_path: Path, value: int, info: int, found: bool) -> None:
    """glibc's lookup skips a defined symbol with value 0 (not SHN_ABS, not TLS) and any type but NOTYPE, OBJECT,
    FUNC, COMMON, TLS and GNU_IFUNC (a SECTION symbol, 0x13 here): those are not exports the import can bind."""
    path = write_so(tmp_path / "lib.so", defined=["cuGreenCtxCreate", "other"])
    elf, syms = _syms(path)
    with elf:
        data = bytearray(path.read_bytes())
        for i in range(1, syms.symbol_count()):
            at = syms._symtab + i * 24  # type: ignore[operator]
            st_name = struct.unpack_from("<I", data, at)[0]
            if syms.name_at(st_name) == "cuGreenCtxCreate":
                data[at + 4] = info
                struct.pack_into("<Q", data, at + 8, value)
    path.write_bytes(bytes(data))
    elf, syms = _syms(path)
    with elf:
        assert syms.defines("cuGreenCtxCreate") is found
        assert syms.defines("other")
