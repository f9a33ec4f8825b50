"""A minimal ELF64 little-endian reader that touches only headers and the sections asked for.

Reads go through `os.pread` on an unbuffered descriptor, so every byte counted in `bytes_read` is a byte
asked of the operating system: nothing reads a whole file, nothing maps it. A file that is not on disk (a
member of a wheel, read inside the zip: stackcheck/derive/zipmember.py) comes in as a `ByteSource`, which
answers the same `read_at` questions. Used on libraries of several
hundred megabytes (libtorch_cuda.so), so the cost is the ELF header, the section header table, the
section-name table and whatever sections a caller asks for.

Every malformed input (not ELF, 32-bit, big-endian, truncated, offsets outside the file) raises
`ElfError` with a one-line message; callers turn it into data (an `"error"` field), never a traceback.
"""

from __future__ import annotations

import os
import stat
import struct

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple
from stackcheck.paths import path_text
from stackcheck.readers import elferror
from stackcheck.readers.fsview import FileView, HostView
from stackcheck.record import field, record

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterator
    from pathlib import Path
    from types import TracebackType

ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
# (defined in readers/elferror.py, which a caller whose every answer is kept imports alone; the same objects here)
EM_X86_64 = elferror.EM_X86_64
EM_AARCH64 = elferror.EM_AARCH64
EM_CUDA = elferror.EM_CUDA
ElfError = elferror.ElfError

SHT_NOBITS = 8
SHT_DYNAMIC = 6
PT_LOAD = 1
PT_DYNAMIC = 2

DT_NULL = 0
DT_NEEDED = 1
DT_STRTAB = 5
DT_STRSZ = 10
DT_SONAME = 14
DT_RPATH = 15
DT_RUNPATH = 29

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")  # 64 bytes
_SHDR = struct.Struct("<IIQQQQIIQQ")  # 64 bytes
_PHDR = struct.Struct("<IIQQQQQQ")  # 56 bytes
_DYN = struct.Struct("<qQ")  # 16 bytes

#: Sanity limits: a section table or dynamic section larger than this is treated as corrupt.
MAX_SECTIONS = 1 << 16
MAX_DYNAMIC_BYTES = 1 << 20
MAX_STRTAB_BYTES = 16 << 20


# the records of an ELF file are NamedTuples (immutable, hashable, compared by value, a dataclass's repr):
# `dataclasses` costs ~5 ms of imports (inspect, dis, tokenize) and a frozen dataclass's __init__ is slow


class Section(NamedTuple):
    index: int  # type: ignore[assignment]  # the field shadows tuple.index(), which nothing calls
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int


class Segment(NamedTuple):
    type: int
    offset: int
    vaddr: int
    filesz: int


class ElfHeader(NamedTuple):
    osabi: int
    abi_version: int
    e_type: int
    e_machine: int
    e_flags: int
    shoff: int
    shnum: int
    shstrndx: int
    phoff: int
    phnum: int


@record
class DynamicInfo:
    needed: list[str] = field(default_factory=list)
    soname: str | None = None
    rpath: str | None = None  # the raw DT_RPATH string (colon-separated, unexpanded)
    runpath: str | None = None  # the raw DT_RUNPATH string


if TYPE_CHECKING:
    from typing import Protocol

    class ByteSource(Protocol):
        """Random-access bytes that are not a plain file: `size`, and `read_at` that returns up to `length`
        bytes at `offset` (fewer only at the end) or raises OSError. ElfFile closes it."""

        size: int

        def read_at(self, offset: int, length: int) -> bytes: ...

        def close(self) -> None: ...

else:  # the protocol is for the type checker; at run time typing is not imported (~3.5 ms of an audit's start)

    class ByteSource:
        """Random-access bytes that are not a plain file (see the TYPE_CHECKING branch)."""


class ElfFile:
    """An open ELF64 LE file. Use as a context manager; `bytes_read` counts every byte read.

    `path` is a path on this host, or with `view` a box path read through that filesystem view (a root
    directory, an image: stackcheck.readers.fsview). Only a regular file is opened (a FIFO would block).
    With `source`, `path` only names the file in messages and the bytes come from the source (a member of
    a wheel read in place: stackcheck.derive); the ELF reading is the same."""

    def __init__(
        self, path: str | os.PathLike[str], view: FileView | None = None, source: ByteSource | None = None
    ) -> None:
        self.path_text = path_text(path)  # str(Path(path)): how every message names the file
        self.bytes_read = 0
        self._sections: list[Section] | None = None
        self._segments: list[Segment] | None = None
        self._view: FileView | None = None
        self._source = source
        self._fd = -1
        if source is not None:
            try:
                self.size = source.size
                self.header = self._read_header()
            except BaseException:
                self.close()
                raise
            return
        if view is not None and not isinstance(view, HostView):
            try:
                st = view.stat(str(path))
            except (OSError, ValueError) as exc:
                raise ElfError(f"{self.path_text}: cannot open: {exc}") from None
            if st is None:
                raise ElfError(f"{self.path_text}: cannot open: no such file")
            if st.kind != "file":
                raise ElfError(f"{self.path_text}: cannot open: not a regular file")
            self._view = view
            self.size = st.size
            self.header = self._read_header()
            return
        host = str(path)
        if isinstance(view, HostView) and view.root != "/":
            try:
                host = view.host_path(view.realpath(host))
            except (OSError, ValueError) as exc:
                raise ElfError(f"{self.path_text}: cannot open: {exc}") from None
        try:
            self._fd = os.open(host, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except OSError as exc:
            raise ElfError(f"{self.path_text}: cannot open: {exc.strerror or exc}") from None
        try:
            st_fd = os.fstat(self._fd)
            if not stat.S_ISREG(st_fd.st_mode):
                raise ElfError(f"{self.path_text}: cannot open: not a regular file")
            self.size = st_fd.st_size
            self.header = self._read_header()
        except BaseException:
            self.close()
            raise

    @property
    def path(self) -> Path:
        """The file's path as a pathlib.Path (imported here only: pathlib is ~3 ms of an audit --deep's start)."""
        from pathlib import Path

        return Path(self.path_text)

    # -- plumbing -------------------------------------------------------------------------------------
    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._source is not None:
            self._source.close()
            self._source = None

    def __enter__(self) -> ElfFile:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def read_at(self, offset: int, length: int, what: str) -> bytes:
        """Read exactly `length` bytes at `offset`, or raise ElfError naming `what`."""
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ElfError(
                f"{self.path_text}: {what} at offset {offset} (+{length} bytes) lies outside the file "
                f"({self.size} bytes): truncated or corrupt"
            )
        if self._source is None and self._view is None:
            # the common case (a file on this host, thousands of small header reads for a big library):
            # one pread, no copy; a short read falls through to the loop below
            try:
                first = os.pread(self._fd, length, offset)
            except OSError as exc:
                raise ElfError(f"{self.path_text}: cannot read {what}: {exc.strerror or exc}") from None
            if len(first) == length:
                self.bytes_read += length
                return first
        out = bytearray()
        while len(out) < length:
            try:
                if self._source is not None:
                    chunk = self._source.read_at(offset + len(out), length - len(out))
                elif self._view is not None:
                    chunk = self._view.read_bytes(self.path_text, length - len(out), offset + len(out))
                else:
                    chunk = os.pread(self._fd, length - len(out), offset + len(out))
            except OSError as exc:
                raise ElfError(f"{self.path_text}: cannot read {what}: {exc.strerror or exc}") from None
            if not chunk:
                raise ElfError(f"{self.path_text}: {what}: unexpected end of file at offset {offset + len(out)}")
            out += chunk
        self.bytes_read += length
        return bytes(out)

    # -- headers --------------------------------------------------------------------------------------
    def _read_header(self) -> ElfHeader:
        if self.size < 4:
            raise ElfError(f"{self.path_text}: not an ELF file ({self.size} bytes)")
        magic = self.read_at(0, 4, "ELF magic")
        if magic != ELF_MAGIC:
            raise ElfError(f"{self.path_text}: not an ELF file (magic {magic.hex()})")
        if self.size < _EHDR.size:
            raise ElfError(f"{self.path_text}: truncated ELF header ({self.size} bytes)")
        raw = self.read_at(4, _EHDR.size - 4, "ELF header")
        ident = magic + raw[:12]
        if ident[4] != ELFCLASS64:
            raise ElfError(f"{self.path_text}: ELF class {ident[4]} is not ELF64 (32-bit objects are not read)")
        if ident[5] != ELFDATA2LSB:
            raise ElfError(f"{self.path_text}: ELF data encoding {ident[5]} is not little-endian")
        fields = _EHDR.unpack(ident + raw[12:])
        (
            _,
            e_type,
            e_machine,
            _,
            _,
            phoff,
            shoff,
            e_flags,
            _,
            phentsize,
            phnum,
            shentsize,
            shnum,
            shstrndx,
        ) = fields
        if shoff and shentsize != _SHDR.size:
            raise ElfError(f"{self.path_text}: section header entry size {shentsize}, expected {_SHDR.size}")
        if phoff and phnum and phentsize != _PHDR.size:
            raise ElfError(f"{self.path_text}: program header entry size {phentsize}, expected {_PHDR.size}")
        return ElfHeader(
            osabi=ident[7],
            abi_version=ident[8],
            e_type=e_type,
            e_machine=e_machine,
            e_flags=e_flags,
            shoff=shoff,
            shnum=shnum,
            shstrndx=shstrndx,
            phoff=phoff,
            phnum=phnum,
        )

    @property
    def sections(self) -> list[Section]:
        if self._sections is None:
            self._sections = self._read_sections()
        return self._sections

    def _read_sections(self) -> list[Section]:
        h = self.header
        if h.shoff == 0:
            return []
        shnum, shstrndx = h.shnum, h.shstrndx
        if shnum == 0 or shstrndx == 0xFFFF:  # extended numbering: real values live in section 0
            first = _SHDR.unpack(self.read_at(h.shoff, _SHDR.size, "section header 0"))
            if shnum == 0:
                shnum = first[5]
            if shstrndx == 0xFFFF:
                shstrndx = first[6]
        if shnum > MAX_SECTIONS:
            raise ElfError(f"{self.path_text}: {shnum} section headers: corrupt section table")
        table = self.read_at(h.shoff, shnum * _SHDR.size, "section header table")
        raw = [_SHDR.unpack_from(table, i * _SHDR.size) for i in range(shnum)]
        names = b""
        if 0 < shstrndx < shnum:
            st = raw[shstrndx]
            if st[5] > MAX_STRTAB_BYTES:
                raise ElfError(f"{self.path_text}: section name table of {st[5]} bytes: corrupt")
            names = self.read_at(st[4], st[5], "section name table")
        out = []
        for i, (name_off, typ, flags, addr, off, size, link, _, _, _) in enumerate(raw):
            out.append(Section(i, _cstr(names, name_off), typ, flags, addr, off, size, link))
        return out

    @property
    def segments(self) -> list[Segment]:
        if self._segments is None:
            h = self.header
            segs: list[Segment] = []
            if h.phoff and h.phnum:
                table = self.read_at(h.phoff, h.phnum * _PHDR.size, "program header table")
                for i in range(h.phnum):
                    p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = _PHDR.unpack_from(table, i * _PHDR.size)
                    segs.append(Segment(p_type, p_offset, p_vaddr, p_filesz))
            self._segments = segs
        return self._segments

    def section(self, name: str) -> Section | None:
        for s in self.sections:
            if s.name == name:
                return s
        return None

    def read_section(self, sec: Section, limit: int | None = None) -> bytes:
        """The bytes of one section (at most `limit` of them); NOBITS sections read as empty."""
        if sec.type == SHT_NOBITS:
            return b""
        n = sec.size if limit is None else min(sec.size, limit)
        return self.read_at(sec.offset, n, f"section {sec.name or sec.index}")

    def vaddr_to_offset(self, vaddr: int) -> int | None:
        """File offset of a virtual address, through the PT_LOAD segments (or the sections)."""
        for seg in self.segments:
            if seg.type == PT_LOAD and seg.vaddr <= vaddr < seg.vaddr + seg.filesz:
                return seg.offset + (vaddr - seg.vaddr)
        for s in self.sections:
            if s.addr and s.type != SHT_NOBITS and s.addr <= vaddr < s.addr + s.size:
                return s.offset + (vaddr - s.addr)
        return None

    # -- dynamic section ------------------------------------------------------------------------------
    def dynamic(self) -> DynamicInfo:
        """DT_NEEDED, DT_SONAME, DT_RPATH and DT_RUNPATH; empty for an object without a dynamic section."""
        dyn_off = dyn_size = None
        strtab: tuple[int, int] | None = None
        dyn_sec = next((s for s in self.sections if s.type == SHT_DYNAMIC), None)
        if dyn_sec is not None:
            dyn_off, dyn_size = dyn_sec.offset, dyn_sec.size
            if 0 < dyn_sec.link < len(self.sections):
                link = self.sections[dyn_sec.link]
                strtab = (link.offset, link.size)
        else:
            seg = next((p for p in self.segments if p.type == PT_DYNAMIC), None)
            if seg is not None:
                dyn_off, dyn_size = seg.offset, seg.filesz
        if dyn_off is None or dyn_size is None:
            return DynamicInfo()
        if dyn_size > MAX_DYNAMIC_BYTES:
            raise ElfError(f"{self.path_text}: dynamic section of {dyn_size} bytes: corrupt")
        data = self.read_at(dyn_off, dyn_size - dyn_size % _DYN.size, "dynamic section")
        entries: list[tuple[int, int]] = []
        strtab_addr = strsz = None
        for i in range(len(data) // _DYN.size):
            tag, val = _DYN.unpack_from(data, i * _DYN.size)
            if tag == DT_NULL:
                break
            if tag == DT_STRTAB:
                strtab_addr = val
            elif tag == DT_STRSZ:
                strsz = val
            entries.append((tag, val))
        if strtab is None and strtab_addr is not None and strsz is not None:
            off = self.vaddr_to_offset(strtab_addr)
            if off is not None:
                strtab = (off, strsz)
        if strtab is None:
            raise ElfError(f"{self.path_text}: dynamic section without a readable string table")
        if strtab[1] > MAX_STRTAB_BYTES:
            raise ElfError(f"{self.path_text}: dynamic string table of {strtab[1]} bytes: corrupt")
        wanted = [(tag, val) for tag, val in entries if tag in (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH)]
        name = self._dynamic_names(strtab, [val for _, val in wanted])
        info = DynamicInfo()
        for tag, val in wanted:
            if tag == DT_NEEDED:
                info.needed.append(name(val))
            elif tag == DT_SONAME:
                info.soname = name(val)
            elif tag == DT_RPATH:
                info.rpath = name(val)
            elif tag == DT_RUNPATH:
                info.runpath = name(val)
        return info

    def _dynamic_names(self, strtab: tuple[int, int], offsets: list[int]) -> Callable[[int], str]:
        """dynamic()'s names: _cstr over the whole string table (an offset past it reads "", a name without a
        NUL runs to its end), read from the first name to NAMES_GAP past the last (libtorch_cuda.so's table
        is 11 MB, its DT_NEEDED names a few hundred bytes), the whole table when a name runs past that piece."""
        if strtab[0] < 0 or strtab[0] + strtab[1] > self.size:  # read_at's own error for the whole table
            self.read_at(strtab[0], strtab[1], "dynamic string table")
        inside = [off for off in offsets if off < strtab[1]]
        if not inside:
            return lambda off: ""
        lo = min(inside)
        end = min(strtab[1], max(inside) + NAMES_GAP)
        if end - lo <= UNDEFINED_NAMES_READ:
            piece = self.read_at(strtab[0] + lo, end - lo, "dynamic string table")
            if end == strtab[1] or all(piece.find(b"\0", off - lo) >= 0 for off in inside):
                # every name ends inside the piece, or the piece runs to the table's end: _cstr's answers
                return lambda off: _cstr(piece, off - lo) if off >= lo else ""
        strings = self.read_at(strtab[0], strtab[1], "dynamic string table")
        return lambda off: _cstr(strings, off)


def _cstr(table: bytes, offset: int) -> str:
    if offset >= len(table):
        return ""
    end = table.find(b"\0", offset)
    if end < 0:
        end = len(table)
    return table[offset:end].decode("utf-8", "replace")


def is_elf(path: str | os.PathLike[str]) -> bool:
    """True when the file starts with the ELF magic (reads 4 bytes; False on any OS error)."""
    try:
        with open(path, "rb", buffering=0) as f:
            return f.read(4) == ELF_MAGIC
    except OSError:
        return False


# -- dynamic symbols ----------------------------------------------------------------------------------------
# What the loader reads to bind a library's undefined symbols: PT_DYNAMIC (not the section headers, which a
# stripped file may lack and which sit at the end of the file), DT_SYMTAB/DT_STRTAB, and DT_GNU_HASH (or the
# older DT_HASH) to find one name without reading the table. libtorch_cpu.so has over 100k dynamic symbols
# and a string table of tens of megabytes; a lookup here costs a few small reads (a bucket, the chain
# entries of that bucket, one symbol and one name per hash match), the table is never read whole.

DT_HASH = 4
DT_SYMTAB = 6
DT_SYMENT = 11
DT_GNU_HASH = 0x6FFFFEF5
SHN_UNDEF = 0
STB_GLOBAL = 1
STB_WEAK = 2
STB_GNU_UNIQUE = 10
SHN_ABS = 0xFFF1
STT_TLS = 6
STT_FUNC = 2
STT_GNU_IFUNC = 10
STV_INTERNAL = 1
STV_HIDDEN = 2
VERSYM_HIDDEN = 0x8000
#: the symbol types glibc's lookup binds: NOTYPE, OBJECT, FUNC, COMMON, TLS, GNU_IFUNC
_BINDABLE_TYPES = frozenset((0, 1, 2, 5, STT_TLS, 10))
_SYM = struct.Struct("<IBBHQQ")  # 24 bytes: st_name, st_info, st_other, st_shndx, st_value, st_size

#: Sanity limits of the symbol tables (a count past these is a corrupt header, not a library).
MAX_SYMBOLS = 1 << 23
MAX_BUCKETS = 1 << 24
MAX_BLOOM_BYTES = 8 << 20
MAX_NAME_BYTES = 64 << 10
MAX_CHAIN_STEPS = 1 << 16  # symbols sharing one bucket (a real table has a handful)
UNDEFINED_NAMES_READ = 4 << 20  # the undefined names are read in one piece when they lie within this span
#: after this many lookups in one file (defines), its hash chains, symbols and names are read in aligned blocks
#: of LOOKUP_BLOCK bytes kept for the next lookups (at most MAX_LOOKUP_BLOCKS), and a GNU hash bucket array of
#: at most MAX_BUCKETS_READ bytes whole
LOOKUPS_MANY = 8
LOOKUP_BLOCK = 4096
MAX_LOOKUP_BLOCKS = 1024
MAX_BUCKETS_READ = 256 << 10
NAMES_GAP = 4096  # ... and names at most this far apart are read together (names_at)


DT_VERDEF = 0x6FFFFFFC
DT_VERNEED = 0x6FFFFFFE
DT_VERSYM = 0x6FFFFFF0
VER_FLG_BASE = 0x1
VER_FLG_WEAK = 0x2
_VERNEED = struct.Struct("<HHIII")  # 16 bytes: vn_version, vn_cnt, vn_file, vn_aux, vn_next
_VERNAUX = struct.Struct("<IHHII")  # 16 bytes: vna_hash, vna_flags, vna_other, vna_name, vna_next
_VERDEF = struct.Struct("<HHHHIII")  # 20 bytes: vd_version, vd_flags, vd_ndx, vd_cnt, vd_hash, vd_aux, vd_next
_VERDAUX = struct.Struct("<II")  # 8 bytes: vda_name, vda_next
#: version records read per object at most (a real library has tens); more is a corrupt chain
MAX_VERSION_RECORDS = 4096
VERSION_READ = 1024  # the version records are read in windows of this many bytes (a real table is < 1 KiB)


class VersionNeed(NamedTuple):
    """One version an object needs (SHT_GNU_verneed / DT_VERNEED): `file` is the DT_NEEDED name it is asked
    of, `name` the version node ("libnvJitLink.so.12.4", "GLIBCXX_3.4.32"); a weak need is not fatal."""

    file: str
    name: str
    weak: bool


def gnu_hash(name: bytes) -> int:
    """The DT_GNU_HASH hash of a symbol name (h = h * 33 + c, 32 bits)."""
    h = 5381
    for c in name:
        h = h * 33 + c
    return h & 0xFFFFFFFF  # Python's integers do not overflow: one mask at the end gives the same value


_hashes: dict[bytes, int] = {}


def _gnu_hash_cached(name: bytes) -> int:
    """gnu_hash, remembered for the names looked up in several libraries (a bounded cache)."""
    h = _hashes.get(name)
    if h is None:
        if len(_hashes) > 65536:
            _hashes.clear()
        h = _hashes[name] = gnu_hash(name)
    return h


def sysv_hash(name: bytes) -> int:
    """The DT_HASH (System V) hash of a symbol name."""
    h = 0
    for c in name:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & 0xFFFFFFFF
    return h


#: the single names of the dynamic table that the loader's search reads, in the order they are read
_SEARCH_NAMES = ((DT_SONAME, "DT_SONAME"), (DT_RPATH, "DT_RPATH"), (DT_RUNPATH, "DT_RUNPATH"))


class _RecordReader:
    """Fixed-size records at file offsets from `start` on (a version chain), read through one cached window of
    VERSION_READ bytes; an offset outside the file or a chain past MAX_VERSION_RECORDS raises ElfError."""

    def __init__(self, elf: ElfFile, start: int, what: str) -> None:
        self.elf, self.start, self.what = elf, start, what
        self.base = 0
        self.data = b""
        self.reads = 0

    def __call__(self, off: int, shape: struct.Struct) -> tuple[int, ...]:
        elf = self.elf
        self.reads += 1
        if self.reads > MAX_VERSION_RECORDS:
            raise ElfError(f"{elf.path_text}: {self.what} chain of more than {MAX_VERSION_RECORDS} records: corrupt")
        if off < self.start or off + shape.size > elf.size:
            raise ElfError(f"{elf.path_text}: {self.what} record at offset {off} lies outside the file: corrupt")
        if not (self.base <= off and off + shape.size <= self.base + len(self.data)):
            self.data = elf.read_at(off, max(shape.size, min(VERSION_READ, elf.size - off)), self.what)
            self.base = off
        return shape.unpack_from(self.data, off - self.base)


class DynamicSymbols:
    """The dynamic symbols of an open ElfFile, read through PT_DYNAMIC.

    `needed` is DT_NEEDED; `undefined()` the names the file asks the loader for; `defines(name)` whether the
    file exports `name` (a defined global or weak dynamic symbol), answered through the GNU hash table (else
    the System V one) with a few reads. Every malformed value raises ElfError naming the file and the place;
    every loop is bounded by the file's size or a MAX_* limit, so bad input is an error, never a hang."""

    def __init__(self, elf: ElfFile) -> None:
        self.elf = elf
        self.path_text = elf.path_text
        self._gnu_header: tuple[int, int, int, int, bytes, int, int] | None = None
        self._names: dict[int, str] = {}
        self._needs_read: list[tuple[int, VersionNeed]] | None = None
        self._lookups = 0  # lookups so far; once they are many, the blocks read and the GNU bucket array
        self._blocks: dict[int, bytes] | None = None
        self._buckets: tuple[int, ...] | None = None
        tags = self._dynamic_tags()
        first = {tag: val for tag, val in reversed(tags)}  # the first entry of each tag wins
        syment = first.get(DT_SYMENT, _SYM.size)
        if syment != _SYM.size:
            raise ElfError(f"{self.path_text}: dynamic symbol entry size {syment}, expected {_SYM.size}")
        self._strtab = self._offset(first.get(DT_STRTAB), "DT_STRTAB")
        self._strsz = first.get(DT_STRSZ, 0)
        if self._strtab is None or self._strtab + self._strsz > elf.size:
            raise ElfError(f"{self.path_text}: dynamic string table outside the file: truncated or corrupt")
        self._symtab = self._offset(first.get(DT_SYMTAB), "DT_SYMTAB")
        self._gnu = self._offset(first.get(DT_GNU_HASH), "DT_GNU_HASH")
        self._sysv = self._offset(first.get(DT_HASH), "DT_HASH")
        # the names the loader's search reads, together where they lie together (dynamic() reads the whole table)
        asked = [(val, "DT_NEEDED") for tag, val in tags if tag == DT_NEEDED]
        n_needed = len(asked)
        asked += [(first[tag], what) for tag, what in _SEARCH_NAMES if tag in first]
        got = self.names_at([off for off, _ in asked], [what for _, what in asked])
        self.needed = got[:n_needed]
        names = {what: name for (_, what), name in zip(asked[n_needed:], got[n_needed:], strict=True)}
        self.soname = names.get("DT_SONAME")
        self.rpath = names.get("DT_RPATH")
        self.runpath = names.get("DT_RUNPATH")
        self._verneed = self._offset(first.get(DT_VERNEED), "DT_VERNEED")
        self._verdef = self._offset(first.get(DT_VERDEF), "DT_VERDEF")
        self._versym_vaddr = first.get(DT_VERSYM)
        self._versym = self._offset(self._versym_vaddr, "DT_VERSYM")

    # -- symbol versions ----------------------------------------------------------------------------------
    # What glibc's _dl_check_map_versions (elf/dl-version.c) walks when it maps an object: the DT_VERNEED
    # chain (per needed file, its Vernaux names) and, in each needed library, the DT_VERDEF chain. The chains
    # are followed through vn_next/vna_next/vd_next like the loader (the counts are not trusted), in small
    # windows: only these records and their names are read, never the symbol table.
    def version_needs(self) -> list[VersionNeed]:
        """The versions this object needs, per needed file (empty when it has no DT_VERNEED)."""
        return [need for _, need in self._indexed_needs()]

    def _indexed_needs(self) -> list[tuple[int, VersionNeed]]:
        """(vna_other, need) per Vernaux record: vna_other is the index DT_VERSYM gives a symbol bound to it
        (walked once: version_needs and undefined_from both ask)."""
        if self._verneed is None:
            return []
        if self._needs_read is not None:
            return list(self._needs_read)
        record = _RecordReader(self.elf, self._verneed, "version need")
        # the records first, then their names in one names_at (the names of a chain lie together); a record
        # error raises after the names read before it, as when each name was read in turn
        asked: list[tuple[int, str]] = []
        entries: list[tuple[int, int, int, int]] = []  # (index in asked of the file, of the name, flags, other)
        broken: ElfError | None = None
        ent = self._verneed
        try:
            while True:
                vn_version, _, vn_file, vn_aux, vn_next = record(ent, _VERNEED)
                if vn_version != 1:
                    raise ElfError(f"{self.path_text}: version need record {vn_version} at offset {ent}: unsupported")
                file_at = len(asked)
                asked.append((vn_file, "version need file"))
                aux = ent + vn_aux
                while True:
                    _, flags, other, vna_name, vna_next = record(aux, _VERNAUX)
                    entries.append((file_at, len(asked), flags, other))
                    asked.append((vna_name, "version need name"))
                    if vna_next == 0:
                        break
                    aux += vna_next
                if vn_next == 0:
                    break
                ent += vn_next
        except ElfError as exc:
            broken = exc
        names = self.names_at([off for off, _ in asked], [what for _, what in asked])
        if broken is not None:
            raise broken
        out: list[tuple[int, VersionNeed]] = []
        for file_at, name_at, flags, other in entries:
            out.append((other, VersionNeed(names[file_at], names[name_at], bool(flags & VER_FLG_WEAK))))
        self._needs_read = out
        return list(out)

    def version_defs(self) -> list[str] | None:
        """The version nodes this object defines, the base one (its soname) included, as glibc's match_symbol
        compares them; None when it has no DT_VERDEF (an unversioned library: the loader then binds without
        comparing versions and only says "no version information available" when verbose)."""
        if self._verdef is None:
            return None
        record = _RecordReader(self.elf, self._verdef, "version definition")
        out: list[str] = []
        ent = self._verdef
        while True:
            vd_version, _, _, _, _, vd_aux, vd_next = record(ent, _VERDEF)
            if vd_version != 1:
                raise ElfError(f"{self.path_text}: version definition record {vd_version} at offset {ent}: unsupported")
            (vda_name, _) = record(ent + vd_aux, _VERDAUX)
            out.append(self.name_at(vda_name, "version definition name"))
            if vd_next == 0:
                return out
            ent += vd_next

    # -- the dynamic table ----------------------------------------------------------------------------------
    def _dynamic_tags(self) -> list[tuple[int, int]]:
        elf = self.elf
        seg = next((p for p in elf.segments if p.type == PT_DYNAMIC), None)
        if seg is not None:
            off, size = seg.offset, seg.filesz
        else:
            sec = next((s for s in elf.sections if s.type == SHT_DYNAMIC), None)
            if sec is None:
                raise ElfError(f"{self.path_text}: no dynamic section (a static executable or not a library)")
            off, size = sec.offset, sec.size
        if size > MAX_DYNAMIC_BYTES:
            raise ElfError(f"{self.path_text}: dynamic section of {size} bytes: corrupt")
        data = elf.read_at(off, size - size % _DYN.size, "dynamic section")
        tags: list[tuple[int, int]] = []
        for i in range(len(data) // _DYN.size):
            tag, val = _DYN.unpack_from(data, i * _DYN.size)
            if tag == DT_NULL:
                break
            tags.append((tag, val))
        return tags

    def _offset(self, vaddr: int | None, what: str) -> int | None:
        if vaddr is None:
            return None
        off = self.elf.vaddr_to_offset(vaddr)
        if off is None:
            raise ElfError(f"{self.path_text}: {what} address {vaddr:#x} is in no loaded segment: corrupt")
        return off

    def name_at(self, offset: int, what: str = "symbol name") -> str:
        """The NUL-terminated string at `offset` of the dynamic string table."""
        if offset >= self._strsz:
            raise ElfError(f"{self.path_text}: {what} at string {offset} past the string table ({self._strsz} bytes)")
        got = self._names.get(offset)
        if got is not None:
            return got
        want = 256
        while True:
            n = min(want, self._strsz - offset)
            raw = self.elf.read_at(self._strtab_or_fail() + offset, n, what)
            end = raw.find(b"\0")
            if end >= 0:
                break
            if n < want or want >= MAX_NAME_BYTES:
                raise ElfError(f"{self.path_text}: {what} at string {offset} is not terminated: corrupt")
            want *= 4
        name = raw[:end].decode("utf-8", "replace")
        self._names[offset] = name
        return name

    def names_at(self, offsets: list[int], what: str | list[str] = "symbol name") -> list[str]:
        """name_at for each of `offsets` (`what` names them, one for all or one each), in order, with the same
        answers and errors. Names that lie together are read in one piece: the offsets sorted, a run goes on
        while the next name starts within NAMES_GAP bytes of the last one and the run spans at most
        UNDEFINED_NAMES_READ; each run is one read from its first name to NAMES_GAP past its last (a name runs
        to its NUL; one longer than that is read on its own)."""
        if not offsets:
            return []
        whats = [what] * len(offsets) if isinstance(what, str) else what
        found = self._names  # name_at's cache: what is read here is not read again
        todo = sorted({off for off in offsets if off < self._strsz and off not in found})
        i = 0
        while i < len(todo):
            lo = todo[i]
            j = i + 1
            while j < len(todo) and todo[j] - todo[j - 1] <= NAMES_GAP and todo[j] - lo <= UNDEFINED_NAMES_READ:
                j += 1
            if j == i + 1:  # a name alone: name_at's small read
                i = j
                continue
            end = min(self._strsz, todo[j - 1] + NAMES_GAP)
            block = self.elf.read_at(self._strtab_or_fail() + lo, end - lo, "dynamic string table")
            for off in todo[i:j]:
                stop = block.find(b"\0", off - lo)
                if 0 <= stop - (off - lo) < MAX_NAME_BYTES:  # else name_at decides (its limit, its error)
                    found[off] = block[off - lo : stop].decode("utf-8", "replace")
            i = j
        # in order: the first name past the table or unterminated fails as name_at fails on it
        return [found[off] if off in found else self.name_at(off, w) for off, w in zip(offsets, whats, strict=True)]

    def _strtab_or_fail(self) -> int:
        assert self._strtab is not None  # checked in __init__
        return self._strtab

    def _symbol(self, index: int) -> tuple[int, int, int]:
        """(st_name, binding, st_shndx) of symbol `index`; st_shndx reads SHN_UNDEF for a defined symbol that
        glibc's lookup (do_lookup_x) passes over: value 0 (unless SHN_ABS or TLS), or a type other than NOTYPE,
        OBJECT, FUNC, COMMON, TLS and GNU_IFUNC (a SECTION or FILE symbol binds nothing)."""
        st_name, st_info, _, st_shndx = self._symbol_info(index)
        return st_name, st_info >> 4, st_shndx

    def _symbol_info(self, index: int) -> tuple[int, int, int, int]:
        """(st_name, st_info, st_other, st_shndx) of symbol `index`, st_shndx as _symbol reads it."""
        if self._symtab is None:
            raise ElfError(f"{self.path_text}: no DT_SYMTAB")
        st_name, st_info, st_other, st_shndx, st_value, _ = _SYM.unpack(
            self._read(self._symtab + index * _SYM.size, _SYM.size, f"dynamic symbol {index}")
        )
        kind = st_info & 0xF
        if kind not in _BINDABLE_TYPES or (st_value == 0 and st_shndx != SHN_ABS and kind != STT_TLS):
            st_shndx = SHN_UNDEF
        return st_name, st_info, st_other, st_shndx

    # -- the undefined symbols --------------------------------------------------------------------------------
    def symbol_count(self) -> int:
        """How many entries .dynsym has: DT_HASH's nchain, else the end of the GNU hash chains, else the
        section header's size (a file with none of them has no table the loader can search)."""
        if self._sysv is not None:
            nchain = struct.unpack("<I", self.elf.read_at(self._sysv + 4, 4, "DT_HASH header"))[0]
            return self._bounded_count(nchain)
        if self._gnu is not None:
            return self._bounded_count(self._gnu_count())
        sec = next((s for s in self.elf.sections if s.name == ".dynsym"), None)
        if sec is None:
            raise ElfError(f"{self.path_text}: no symbol hash table and no .dynsym section")
        return self._bounded_count(sec.size // _SYM.size)

    def _bounded_count(self, n: int) -> int:
        if self._symtab is None:
            raise ElfError(f"{self.path_text}: no DT_SYMTAB")
        if n > MAX_SYMBOLS or self._symtab + n * _SYM.size > self.elf.size:
            raise ElfError(f"{self.path_text}: {n} dynamic symbols run past the end of the file: corrupt")
        return n

    def undefined(self) -> list[str]:
        """The names of the undefined dynamic symbols the loader must find in another object; weak ones are
        left out (an unresolved weak reference binds to null and the load goes on).

        With a GNU hash table these are among the first `symoffset` entries (the linker puts the unhashed
        symbols first), so only those are read; the whole table is read otherwise. A file without DT_SYMTAB is
        an error: its undefined symbols were not read, which is not the same as none."""
        if self._symtab is None:
            raise ElfError(f"{self.path_text}: no DT_SYMTAB: its undefined symbols cannot be read")
        n = self._gnu_header_read()[1] if self._gnu is not None else self.symbol_count()
        n = self._bounded_count(n)
        data = self.elf.read_at(self._symtab, n * _SYM.size, "dynamic symbol table")
        offsets = []
        for i in range(1, n):
            st_name, st_info, _, st_shndx, _, _ = _SYM.unpack_from(data, i * _SYM.size)
            if st_shndx == SHN_UNDEF and st_name and st_info >> 4 != STB_WEAK:
                offsets.append(st_name)
        if not offsets:
            return []
        hi = max(offsets)
        if hi - min(offsets) <= UNDEFINED_NAMES_READ and hi >= self._strsz:  # the names read together: the last
            raise ElfError(f"{self.path_text}: symbol name at string {hi} past the string table ({self._strsz} bytes)")
        return self.names_at(offsets)

    def undefined_from(self, files: Collection[str] | None = None) -> dict[str, list[tuple[str, str]]]:
        """The non-weak undefined symbols bound to a version need, per needed file: {file: [(symbol, version)]}.

        DT_VERSYM gives each dynamic symbol a version index; for an undefined symbol it is the vna_other of the
        Vernaux record (file and version) the link bound it to, which is how the loader knows which library's
        version to match (glibc elf/dl-lookup.c, the `version` argument of _dl_lookup_symbol_x). A symbol with
        index 0 or 1 (local, global: unversioned) names no file and is left out. Without DT_VERSYM the object
        has no per-symbol versions and the answer is {}. `files` limits the answer (and the names read) to
        those needed files."""
        if self._versym is None or self._verneed is None:
            return {}
        if self._symtab is None:
            raise ElfError(f"{self.path_text}: no DT_SYMTAB: its undefined symbols cannot be read")
        index = {other: need for other, need in self._indexed_needs() if not need.weak}
        n = self._gnu_header_read()[1] if self._gnu is not None else self.symbol_count()
        n = self._bounded_count(n)
        last = self.elf.vaddr_to_offset((self._versym_vaddr or 0) + n * 2 - 1) if n else self._versym
        if last != self._versym + max(n * 2 - 1, 0) or self._versym + n * 2 > self.elf.size:
            raise ElfError(f"{self.path_text}: DT_VERSYM of {n} entries runs outside its segment: corrupt")
        data = self.elf.read_at(self._symtab, n * _SYM.size, "dynamic symbol table")
        versym = self.elf.read_at(self._versym, n * 2, "symbol version table")
        if files is not None:
            index = {other: need for other, need in index.items() if need.file in files}
        bound: list[tuple[int, VersionNeed]] = []
        if index and n > 1:  # the table unpacked in one pass (a loop of unpack_from per symbol cost 3x more)
            vers = struct.unpack(f"<{n}H", versym)[1:]  # symbol 0, the null one, is passed over
            rows = _SYM.iter_unpack(memoryview(data)[_SYM.size :])
            for (st_name, st_info, _, st_shndx, _, _), ver in zip(rows, vers, strict=True):
                if st_shndx == SHN_UNDEF and st_name and st_info >> 4 != STB_WEAK:
                    need = index.get(ver & 0x7FFF)
                    if need is not None:
                        bound.append((st_name, need))
        out: dict[str, list[tuple[str, str]]] = {}
        # the names in one read where they lie together (one pread per name cost a second hop most of its time)
        for (_, need), name in zip(bound, self.names_at([off for off, _ in bound]), strict=True):
            out.setdefault(need.file, []).append((name, need.name))
        return out

    # -- lookups ------------------------------------------------------------------------------------------------
    def _gnu_header_read(self) -> tuple[int, int, int, int, bytes, int, int]:
        """(nbuckets, symoffset, bloom_size, bloom_shift, bloom words, buckets offset, chains offset)."""
        if self._gnu_header is None:
            assert self._gnu is not None
            nbuckets, symoffset, bloom_size, shift = struct.unpack(
                "<IIII", self.elf.read_at(self._gnu, 16, "GNU hash header")
            )
            if nbuckets == 0 or nbuckets > MAX_BUCKETS or bloom_size * 8 > MAX_BLOOM_BYTES:
                raise ElfError(
                    f"{self.path_text}: GNU hash table with {nbuckets} buckets and {bloom_size} bloom words: corrupt"
                )
            bloom = self.elf.read_at(self._gnu + 16, bloom_size * 8, "GNU hash bloom filter")
            buckets = self._gnu + 16 + bloom_size * 8
            chains = buckets + nbuckets * 4
            if chains > self.elf.size:
                raise ElfError(f"{self.path_text}: GNU hash buckets run past the end of the file: corrupt")
            self._gnu_header = (nbuckets, symoffset, bloom_size, shift, bloom, buckets, chains)
        return self._gnu_header

    def _gnu_count(self) -> int:
        """The number of symbols a GNU hash table covers: past the largest bucket start, to its chain's end."""
        nbuckets, symoffset, _, _, _, buckets, chains = self._gnu_header_read()
        table = self.elf.read_at(buckets, nbuckets * 4, "GNU hash buckets")
        last: int = max(struct.unpack(f"<{nbuckets}I", table))
        if last < symoffset:
            return symoffset
        while last < MAX_SYMBOLS:  # the last chain's values, 1024 at a time (fewer at the end of the file)
            off = chains + (last - symoffset) * 4
            block = self.elf.read_at(off, min(4096, max(0, self.elf.size - off)) & ~3, "GNU hash chain")
            if not block:
                break
            for (value,) in struct.iter_unpack("<I", block):
                last += 1
                if value & 1:
                    return last
        raise ElfError(f"{self.path_text}: GNU hash chain without an end: corrupt")

    def _matches(self, index: int, name: bytes) -> bool:
        st_name, binding, st_shndx = self._symbol(index)
        if st_shndx == SHN_UNDEF or binding not in (STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE):
            return False
        return self._named(st_name, name)

    def _named(self, st_name: int, name: bytes) -> bool:
        """Whether the string at `st_name` of the dynamic string table is `name`."""
        if st_name + len(name) >= self._strsz:
            return False
        raw = self._read(self._strtab_or_fail() + st_name, len(name) + 1, "symbol name")
        return raw == name + b"\0"

    def _version_index(self, index: int) -> int | None:
        """DT_VERSYM's entry for symbol `index` (the version index, bit 15 the hidden bit); None without DT_VERSYM."""
        if self._versym is None:
            return None
        off = self._versym + index * 2
        if off + 2 > self.elf.size:
            raise ElfError(f"{self.path_text}: DT_VERSYM entry of symbol {index} lies outside the file: corrupt")
        return int(struct.unpack("<H", self._read(off, 2, "symbol version table"))[0])

    def _read(self, offset: int, length: int, what: str) -> bytes:
        """elf.read_at for a lookup's small reads; once lookups are many (self._blocks set), through aligned
        blocks of LOOKUP_BLOCK bytes kept for the file's later lookups. A read that is not inside the file or
        that spans two blocks goes to read_at as it is (the same bytes, the same error)."""
        blocks = self._blocks
        if blocks is None or offset < 0 or length < 0 or offset + length > self.elf.size:
            return self.elf.read_at(offset, length, what)
        base = offset - offset % LOOKUP_BLOCK
        if offset + length > base + LOOKUP_BLOCK:
            return self.elf.read_at(offset, length, what)
        block = blocks.get(base)
        if block is None:
            if len(blocks) >= MAX_LOOKUP_BLOCKS:
                blocks.clear()
            block = blocks[base] = self.elf.read_at(base, min(LOOKUP_BLOCK, self.elf.size - base), what)
        return block[offset - base : offset - base + length]

    def defines(self, name: str) -> bool:
        """Whether the file exports `name` as the loader would find it for some reference (a defined global, weak
        or unique dynamic symbol of a type the loader binds; symbol versions are not compared: a reference that
        names a version may bind a hidden one). What ctypes finds is dlsym_type / defines_function."""
        raw = self._lookup_start(name)
        return any(self._matches(index, raw) for index in self._candidates(raw))

    def dlsym_type(self, name: str) -> int | None:
        """The symbol type (STT_*) of what dlsym(handle, name) returns in this file, or None where it finds
        nothing here: glibc's do_lookup_x and check_match (elf/dl-lookup.c) for a lookup with no version and
        DL_LOOKUP_RETURN_NEWEST, as dlsym asks (elf/dl-sym.c). Every symbol of the name's hash chain is read:
        one that is undefined or valueless, of a type the loader does not bind, or of another name is passed
        over; with DT_VERSYM, one of version index 0 or 1 (local, global: unversioned) is the answer, a
        versioned one is counted unless hidden (bit 15: `name@VER`, not the default `name@@VER`) and is the
        answer where it is the only one counted. The answer is then dropped where its visibility is hidden or
        internal or its binding neither global, weak nor unique (the loader skips this object for it)."""
        raw = self._lookup_start(name)
        chosen: tuple[int, int, int] | None = None  # (info, other, index) of the symbol check_match returns
        versioned: tuple[int, int, int] | None = None
        counted = 0
        for index in self._candidates(raw):
            st_name, info, other, st_shndx = self._symbol_info(index)
            if st_shndx == SHN_UNDEF or not self._named(st_name, raw):
                continue
            ver = self._version_index(index)
            if ver is not None and ver & 0x7FFF >= 2:
                if not ver & VERSYM_HIDDEN:
                    counted += 1
                    if counted == 1:
                        versioned = (info, other, index)
                continue
            chosen = (info, other, index)
            break
        if chosen is None and counted == 1:
            chosen = versioned
        if chosen is None:
            return None
        info, other, _ = chosen
        if other & 3 in (STV_INTERNAL, STV_HIDDEN) or info >> 4 not in (STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE):
            return None
        return info & 0xF

    def defines_function(self, name: str) -> bool:
        """Whether dlsym finds `name` here as code (dlsym_type STT_FUNC or STT_GNU_IFUNC): what ctypes needs of a
        function it binds by name (CDLL.__getattr__ is dlsym; a data object, NOTYPE included, found instead is
        called as code)."""
        return self.dlsym_type(name) in (STT_FUNC, STT_GNU_IFUNC)

    def _lookup_start(self, name: str) -> bytes:
        raw = name.encode("utf-8")
        self._lookups += 1
        if self._lookups > LOOKUPS_MANY and self._blocks is None:
            self._blocks = {}
        if self._gnu is None and self._sysv is None:
            raise ElfError(f"{self.path_text}: no DT_GNU_HASH or DT_HASH: its symbols cannot be looked up")
        return raw

    def _candidates(self, raw: bytes) -> Iterator[int]:
        """The indexes of the symbols whose hash matches `raw`'s, in the order of the hash chain the loader walks:
        the GNU hash table, else the System V one."""
        if self._gnu is not None:
            return self._gnu_candidates(raw)
        return self._sysv_candidates(raw)

    def _gnu_candidates(self, raw: bytes) -> Iterator[int]:
        nbuckets, symoffset, bloom_size, shift, bloom, buckets, chains = self._gnu_header_read()
        h = _gnu_hash_cached(raw)
        if bloom_size:
            (word,) = struct.unpack_from("<Q", bloom, ((h >> 6) % bloom_size) * 8)
            if not (word >> (h & 63)) & 1 or not (word >> ((h >> (shift & 31)) & 63)) & 1:
                return
        if self._buckets is None and self._blocks is not None and nbuckets * 4 <= MAX_BUCKETS_READ:
            # many lookups in one file (the second hop's symbols): the bucket array in one read, not one each
            self._buckets = struct.unpack(f"<{nbuckets}I", self.elf.read_at(buckets, nbuckets * 4, "GNU hash bucket"))
        if self._buckets is not None:
            index = self._buckets[h % nbuckets]
        else:
            (index,) = struct.unpack("<I", self.elf.read_at(buckets + (h % nbuckets) * 4, 4, "GNU hash bucket"))
        if index == 0:
            return
        if index < symoffset:
            raise ElfError(f"{self.path_text}: GNU hash bucket points at unhashed symbol {index}: corrupt")
        block = b""
        start = index
        for _ in range(MAX_CHAIN_STEPS):
            at = index - start
            if at * 4 >= len(block):  # the chain's values, 16 at a time (fewer at the end of the file)
                start = index
                off = chains + (index - symoffset) * 4
                block = self._read(off, min(64, self.elf.size - off) & ~3, "GNU hash chain")
                if not block:
                    raise ElfError(f"{self.path_text}: GNU hash chain runs past the end of the file: corrupt")
                at = 0
            (value,) = struct.unpack_from("<I", block, at * 4)
            if (value | 1) == (h | 1):
                yield index
            if value & 1:
                return
            index += 1
        raise ElfError(f"{self.path_text}: GNU hash chain longer than {MAX_CHAIN_STEPS}: corrupt")

    def _sysv_candidates(self, raw: bytes) -> Iterator[int]:
        assert self._sysv is not None
        nbucket, nchain = struct.unpack("<II", self.elf.read_at(self._sysv, 8, "DT_HASH header"))
        if nbucket == 0 or nbucket > MAX_BUCKETS or nchain > MAX_SYMBOLS:
            raise ElfError(f"{self.path_text}: DT_HASH with {nbucket} buckets and {nchain} chains: corrupt")
        h = sysv_hash(raw)
        (index,) = struct.unpack("<I", self.elf.read_at(self._sysv + 8 + (h % nbucket) * 4, 4, "DT_HASH bucket"))
        chain = self._sysv + 8 + nbucket * 4
        for _ in range(min(nchain, MAX_CHAIN_STEPS) + 1):
            if index == 0:
                return
            if index >= nchain:
                raise ElfError(f"{self.path_text}: DT_HASH chain points at symbol {index} of {nchain}: corrupt")
            yield index
            (index,) = struct.unpack("<I", self.elf.read_at(chain + index * 4, 4, "DT_HASH chain"))
        raise ElfError(f"{self.path_text}: DT_HASH chain longer than its table: corrupt")
