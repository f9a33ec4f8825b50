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
from typing import TYPE_CHECKING, NamedTuple, Protocol

from stackcheck.paths import path_text
from stackcheck.readers.fsview import FileView, HostView
from stackcheck.record import field, record

if TYPE_CHECKING:
    from pathlib import Path
    from types import TracebackType

ELF_MAGIC = b"\x7fELF"
ELFCLASS64 = 2
ELFDATA2LSB = 1
EM_X86_64 = 62
EM_AARCH64 = 183
EM_CUDA = 190

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


class ElfError(Exception):
    """The file is not a readable ELF64 little-endian object; the message names the file and the place."""


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


class ByteSource(Protocol):
    """Random-access bytes that are not a plain file: `size`, and `read_at` that returns up to `length`
    bytes at `offset` (fewer only at the end) or raises OSError. ElfFile closes it."""

    size: int

    def read_at(self, offset: int, length: int) -> bytes: ...

    def close(self) -> None: ...


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
        strings = self.read_at(strtab[0], strtab[1], "dynamic string table")
        info = DynamicInfo()
        for tag, val in entries:
            if tag == DT_NEEDED:
                info.needed.append(_cstr(strings, val))
            elif tag == DT_SONAME:
                info.soname = _cstr(strings, val)
            elif tag == DT_RPATH:
                info.rpath = _cstr(strings, val)
            elif tag == DT_RUNPATH:
                info.runpath = _cstr(strings, val)
        return info


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
