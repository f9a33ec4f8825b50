"""The CUDA fat binary container, read from its headers only.

Layout as determined here (nvcc 13.0.88, checked against cuobjdump 13.5 from the nvidia-cuda-cuobjdump
wheel; see tests/data/fatbin/README.md for the recorded evidence). All fields little-endian.

Container header, 16 bytes, at the start of section `.nv_fatbin` (a section may hold many containers
back to back, one per translation unit; `__nv_relfatbin` in relocatable device code has the same shape):

    +0  u32 magic        0xBA55ED50
    +4  u16 version      1
    +6  u16 header_size  16 (offset of the first entry)
    +8  u64 fat_size     bytes of entries + payloads after this header

Entry header, `header_size` bytes (64; 72 with -G, which appends the source name; 80 for PTX and 112 for
sm_100+ cubins, which append an option block). Only the first 64 bytes are read:

    +0  u16 kind             1 = PTX, 2 = ELF (cubin)
    +2  u16 version          0x0101
    +4  u32 header_size      offset of the payload from the entry start
    +8  u64 payload_size     payload bytes, padded to 8 (next entry = entry + header_size + payload_size)
    +16 u32 compressed_size  exact compressed payload size; 0 when not compressed
    +20 u32 options_offset   0, or 64 when an option block follows the first 64 bytes
    +24 u16 code_minor       ELF: 8 ([1,8] "code version"); PTX: ISA minor (9.0 -> 0)
    +26 u16 code_major       ELF: 1; PTX: ISA major
    +28 u32 arch             SM number: 75, 80, 90, 100, 103, 110, 120, 121 ...
    +32 u32 name_offset      offset of the source file name within the header (-G), else 0
    +36 u32 name_length
    +40 u64 flags            see FLAG_* below
    +48 u64 reserved         0
    +56 u64 uncompressed_size  size of the payload once decompressed; 0 when not compressed

Flags: 0x1 64-bit; 0x2 debug (-G); 0x10 Linux host; 0x2000 compressed (LZ4, `--compress-mode=speed`);
0x8000 compressed (zstd, the default for PTX and for `-Xfatbin -compress-all`); 0x100000 architecture-
specific target (sm_90a, compute_90a); 0x200000 family-specific target (sm_100f, compute_100f);
0x1000000 set on sm_100+ cubin entries with the 112-byte header (meaning not established).

Payloads are never read nor decompressed: the walk seeks from header to header.
"""

from __future__ import annotations

import re
import struct

from stackcheck.facts.archs import parse_target, sort_targets
from stackcheck.lean_typing import NamedTuple
from stackcheck.readers.elf import EM_CUDA, SHT_NOBITS, ElfError, ElfFile, Section
from stackcheck.record import field, record

FATBIN_MAGIC = 0xBA55ED50
WRAPPER_MAGIC = 0x466243B1  # __fatBinC_Wrapper_t in .nvFatBinSegment

KIND_PTX = 1
KIND_ELF = 2

FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_LINUX = 0x10
FLAG_COMPRESSED_LZ4 = 0x2000
FLAG_COMPRESSED_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000
FLAG_FAMILY_SPECIFIC = 0x200000
FLAG_OPTIONS = 0x1000000

ENTRY_MIN_HEADER = 64
ENTRY_MAX_HEADER = 4096
CONTAINER_HEADER = 16

#: Fatbin sections: every one present is walked (a -rdc object has __nv_relfatbin).
FATBIN_SECTIONS = (".nv_fatbin", "__nv_relfatbin")

_CONTAINER = struct.Struct("<IHHQ")
_ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")
_WRAPPER = struct.Struct("<IIQQ")
_TKINFO_ARCH = re.compile(rb"-arch[ =](sm|compute)_(\d{1,9})([af]?)\b")

#: Gaps of zero bytes between containers are skipped, reading at most this much per gap.
MAX_GAP_BYTES = 64 * 1024


class FatbinEntry(NamedTuple):
    offset: int  # file offset of the entry header
    kind: int
    header_size: int
    payload_size: int
    compressed_size: int
    uncompressed_size: int
    code_version: tuple[int, int]
    arch: int
    flags: int
    section: str = ".nv_fatbin"  # __nv_relfatbin: relocatable device code, for device linking only

    @property
    def is_ptx(self) -> bool:
        return self.kind == KIND_PTX

    @property
    def is_elf(self) -> bool:
        return self.kind == KIND_ELF

    @property
    def compression(self) -> str | None:
        if self.flags & FLAG_COMPRESSED_ZSTD:
            return "zstd"
        if self.flags & FLAG_COMPRESSED_LZ4:
            return "lz4"
        return None

    @property
    def compressed(self) -> bool:
        return self.compression is not None

    @property
    def suffix(self) -> str:
        if self.flags & FLAG_ARCH_SPECIFIC:
            return "a"
        if self.flags & FLAG_FAMILY_SPECIFIC:
            return "f"
        return ""

    @property
    def target(self) -> str | None:
        """'sm_90a', 'sm_120', 'compute_120', 'sm_100f'; None for other kinds or a nonsense arch."""
        return _target_of((self.kind, self.arch, self.flags & _SUFFIX_FLAGS))


_SUFFIX_FLAGS = FLAG_ARCH_SPECIFIC | FLAG_FAMILY_SPECIFIC
_COMPRESSED_FLAGS = FLAG_COMPRESSED_ZSTD | FLAG_COMPRESSED_LZ4

#: (kind, arch, suffix flags) -> target name or None, as FatbinEntry.target gives it
_TARGETS: dict[tuple[int, int, int], str | None] = {}


def _target_of(key: tuple[int, int, int]) -> str | None:
    """The target of an entry's (kind, arch, flags & _SUFFIX_FLAGS): a big library repeats a handful of
    targets thousands of times, so each is named once."""
    if key not in _TARGETS:
        kind, arch, bits = key
        suffix = "a" if bits & FLAG_ARCH_SPECIFIC else "f" if bits & FLAG_FAMILY_SPECIFIC else ""
        _TARGETS[key] = _target_name(kind, arch, suffix)
    return _TARGETS[key]


def _target_name(kind: int, arch: int, suffix: str) -> str | None:
    if kind not in (KIND_PTX, KIND_ELF):
        return None
    name = f"{'compute' if kind == KIND_PTX else 'sm'}_{arch}{suffix}"
    return name if parse_target(name) is not None else None


@record
class FatbinScan:
    entries: list[FatbinEntry] = field(default_factory=list)
    containers: int = 0
    section: str | None = None  # where the containers were found
    warnings: list[str] = field(default_factory=list)

    def _targets(self, kind: int, loadable: bool = True) -> list[str]:
        """The sorted targets of one kind (0: every kind) among the entries the CUDA runtime loads, or with
        loadable=False among the relocatable ones kept beside them. In a library that has both sections,
        `__nv_relfatbin` holds relocatable device code kept for device linking by its users
        (libtorch_nvshmem.so, say): the runtime never loads it, and cuobjdump does not list it without -all.
        A relocatable object (-rdc .o) has only `__nv_relfatbin`, and then that is its code. Each distinct
        target is judged once: a big library has thousands of entries and a handful of targets."""
        rel = "__nv_relfatbin"
        has_loadable = any(e.section != rel for e in self.entries)
        if loadable:
            chosen = [e for e in self.entries if e.section != rel] if has_loadable else self.entries
        else:
            chosen = [e for e in self.entries if e.section == rel] if has_loadable else []
        keys = {(e.kind, e.arch, e.flags & _SUFFIX_FLAGS) for e in chosen}
        names = {_target_of(key) for key in keys if kind == 0 or key[0] == kind}
        return sort_targets({n for n in names if n})

    @property
    def sass(self) -> list[str]:
        return self._targets(KIND_ELF)

    @property
    def ptx(self) -> list[str]:
        return self._targets(KIND_PTX)

    @property
    def relocatable(self) -> list[str]:
        """Targets in relocatable device code kept beside loadable code, for device linking by the library's
        users: not loaded at run time (empty when the object has only relocatable code)."""
        return self._targets(0, loadable=False)

    @property
    def compressed_entries(self) -> int:
        return sum(1 for e in self.entries if e.flags & _COMPRESSED_FLAGS)  # e.compressed, without two calls


def _walk_region(elf: ElfFile, start: int, size: int, scan: FatbinScan, where: str) -> None:
    """Walk every container in [start, start + size) of the file, appending entries to `scan`."""
    end = start + size
    pos = start
    read_at, append, what = (
        elf.read_at,
        scan.entries.append,
        f"{where} entry header",
    )  # the loop runs thousands of times
    while pos + CONTAINER_HEADER <= end:
        magic, version, hsize, fat_size = _CONTAINER.unpack(elf.read_at(pos, CONTAINER_HEADER, where))
        if magic != FATBIN_MAGIC:
            if magic == 0 and version == 0 and hsize == 0:
                pos = _skip_zeros(elf, pos, end)
                continue
            scan.warnings.append(f"{where}: no fatbin magic at offset {pos - start}: stopped there")
            return
        if hsize < CONTAINER_HEADER:
            scan.warnings.append(f"{where}: container at offset {pos - start}: header size {hsize}")
            return
        scan.containers += 1
        cend = pos + hsize + fat_size
        if cend > end:
            scan.warnings.append(
                f"{where}: container at offset {pos - start} claims {fat_size} bytes, "
                f"past the end of the section: truncated"
            )
            cend = end
        epos = pos + hsize
        while epos + ENTRY_MIN_HEADER <= cend:
            (kind, _ver, ehs, psize, csize, _opt, cminor, cmajor, arch, _noff, _nlen, flags, _res, usize) = (
                _ENTRY.unpack(read_at(epos, ENTRY_MIN_HEADER, what))
            )
            if not ENTRY_MIN_HEADER <= ehs <= ENTRY_MAX_HEADER:
                scan.warnings.append(f"{where}: entry at offset {epos - start}: header size {ehs}: stopped")
                return
            append(FatbinEntry(epos, kind, ehs, psize, csize, usize, (cmajor, cminor), arch, flags, where))
            epos += ehs + psize
        if epos > cend:
            scan.warnings.append(f"{where}: last entry of container at offset {pos - start} overruns it")
        pos = (pos + hsize + fat_size + 7) & ~7


def _skip_zeros(elf: ElfFile, pos: int, end: int) -> int:
    """Skip zero padding between containers; returns the first non-zero 8-byte-aligned offset (or end)."""
    budget = MAX_GAP_BYTES
    while pos < end and budget > 0:
        n = min(512, end - pos, budget)
        chunk = elf.read_at(pos, n, "fatbin padding")
        budget -= n
        stripped = len(chunk) - len(chunk.lstrip(b"\0"))
        if stripped < n:
            return pos + (stripped & ~7)
        pos += n
    return end


def scan_fatbins(elf: ElfFile) -> FatbinScan:
    """Every fatbin entry in an ELF host object (shared library, executable, relocatable object)."""
    scan = FatbinScan()
    found = []
    for name in FATBIN_SECTIONS:
        sec = elf.section(name)
        if sec is not None and sec.size and sec.type != SHT_NOBITS:
            found.append(name)
            _walk_region(elf, sec.offset, sec.size, scan, name)
    if found:
        scan.section = ",".join(found)
        return scan
    seg = elf.section(".nvFatBinSegment")
    if seg is not None and seg.size:
        _walk_wrappers(elf, seg, scan)
    return scan


def _walk_wrappers(elf: ElfFile, seg: Section, scan: FatbinScan) -> None:
    """Follow the __fatBinC_Wrapper_t records when no fatbin section is present (linked objects only)."""
    data = elf.read_section(seg, limit=_WRAPPER.size * 4096)
    for i in range(len(data) // _WRAPPER.size):
        magic, _version, ptr, _ = _WRAPPER.unpack_from(data, i * _WRAPPER.size)
        if magic != WRAPPER_MAGIC or ptr == 0:
            continue
        off = elf.vaddr_to_offset(ptr)
        if off is None:
            scan.warnings.append(f".nvFatBinSegment: wrapper {i}: address {ptr:#x} not in the file")
            continue
        head = elf.read_at(off, CONTAINER_HEADER, "fatbin container header")
        magic2, _, hsize, fat_size = _CONTAINER.unpack(head)
        if magic2 != FATBIN_MAGIC:
            scan.warnings.append(f".nvFatBinSegment: wrapper {i}: no fatbin magic at {off:#x}")
            continue
        scan.section = ".nvFatBinSegment"
        _walk_region(elf, off, min(hsize + fat_size, elf.size - off), scan, f"fatbin at {off:#x}")


# -- bare cubins --------------------------------------------------------------------------------------

EF_CUDA_ACCELERATORS_V1 = 0x800  # ELF ABI version 7 and before: the 'a' marker
EF_CUDA_ACCELERATORS = 0x8  # ABI version 8 (CUDA 13): the 'a' marker (nvcc 13.0 leaves it clear)


class CubinInfo(NamedTuple):
    target: str | None
    sm: int
    suffix_source: str  # "tkinfo" (ptxas command line in .note.nv.tkinfo) or "e_flags"


def cubin_info(elf: ElfFile) -> CubinInfo:
    """The SASS target of a bare cubin (an ELF with e_machine EM_CUDA).

    The SM number comes from e_flags: the low byte up to ELF ABI version 7, bits 8-15 from version 8
    (CUDA 13). nvcc 13.0 writes the same e_flags for sm_90 and sm_90a, and for sm_120, sm_120a and
    sm_120f, so the suffix is taken from the ptxas command line recorded in `.note.nv.tkinfo`
    ("-arch sm_120a") when that note is there, else from the accelerator bit of e_flags.
    """
    if elf.header.e_machine != EM_CUDA:
        raise ElfError(f"{elf.path_text}: not a cubin (e_machine {elf.header.e_machine})")
    flags = elf.header.e_flags
    if elf.header.abi_version >= 8:
        sm, accel = (flags >> 8) & 0xFF, bool(flags & EF_CUDA_ACCELERATORS)
    else:
        sm, accel = flags & 0xFF, bool(flags & EF_CUDA_ACCELERATORS_V1)
    suffix, source = ("a" if accel else ""), "e_flags"
    note = elf.section(".note.nv.tkinfo")
    if note is not None:
        m = _TKINFO_ARCH.search(elf.read_section(note, limit=4096))
        if m and m.group(1) == b"sm" and int(m.group(2)) == sm:
            suffix, source = m.group(3).decode(), "tkinfo"
    name = f"sm_{sm}{suffix}"
    return CubinInfo(name if parse_target(name) else None, sm, source)
