"""One member of a zip archive (a wheel) as random-access bytes, without extracting it.

- A stored member is read in place: `os.pread` at the member's data offset inside the archive.
- A deflated member is decompressed forward as it is asked for. Reads ahead decompress and drop what lies
  before them; the last `WINDOW` bytes of output are kept, so a read a little behind (the ELF section-name
  table just before the section header table) costs nothing; a read further behind restarts from the
  nearest checkpoint, a copy of the decompressor taken every `CHECKPOINT_EVERY` bytes of output while
  going forward. Memory stays bounded (the window, one chunk of input, a few kilobytes per checkpoint)
  whatever the size of the member; the cost of reading an ELF's headers is one pass to the section header
  table at the end of the file and a second pass over the fatbin section from its checkpoint.

Bad input raises `ZipMemberError` (an OSError, so ElfFile turns it into an ElfError with the file's name).
"""

from __future__ import annotations

import os
import struct
import zipfile
import zlib
from dataclasses import dataclass

LOCAL_HEADER = struct.Struct("<IHHHHHIIIHH")  # 30 bytes
LOCAL_MAGIC = 0x04034B50

CHUNK = 64 * 1024
"""Compressed bytes read from the archive at a time."""
OUT_STEP = 1024 * 1024
"""Most output one decompress call may produce (a highly compressible chunk cannot blow up memory)."""
PIECE = 256 * 1024
"""Larger reads are served in pieces of this size."""
WINDOW = 2 * 1024 * 1024
"""Output bytes kept behind the current position: at least PIECE + OUT_STEP, so that a piece is still in
the window after the step that produced it overshot its end."""
CHECKPOINT_EVERY = 16 * 1024 * 1024
"""A decompressor copy is kept every this many output bytes (about 40 KB each)."""


class ZipMemberError(OSError):
    """The member cannot be read: an unsupported method, encryption, a corrupt stream or header."""


def member_data_offset(fd: int, info: zipfile.ZipInfo, archive_size: int) -> int:
    """Where the member's data starts: after its local header, whose name and extra lengths may differ
    from the central directory's."""
    raw = os.pread(fd, LOCAL_HEADER.size, info.header_offset)
    if len(raw) < LOCAL_HEADER.size:
        raise ZipMemberError(f"{info.filename}: local header past the end of the archive")
    fields = LOCAL_HEADER.unpack(raw)
    if fields[0] != LOCAL_MAGIC:
        raise ZipMemberError(f"{info.filename}: no local header at offset {info.header_offset}")
    start = int(info.header_offset) + LOCAL_HEADER.size + int(fields[9]) + int(fields[10])
    if start + info.compress_size > archive_size:
        raise ZipMemberError(f"{info.filename}: member data runs past the end of the archive")
    return start


@dataclass
class _Checkpoint:
    out_pos: int
    in_pos: int
    state: zlib._Decompress  # the decompressor at out_pos, its input consumed up to in_pos


class ZipMemberSource:
    """A ByteSource (see stackcheck.readers.elf) over one member of an open archive.

    `fd` is the archive's descriptor, shared by every member and never closed here. `compressed_read`
    counts the archive bytes read, `inflated` the bytes decompressed (both for figures)."""

    def __init__(self, fd: int, info: zipfile.ZipInfo, archive_size: int) -> None:
        if info.flag_bits & 0x1:
            raise ZipMemberError(f"{info.filename}: encrypted member")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise ZipMemberError(f"{info.filename}: compression method {info.compress_type} is not read")
        self.name = info.filename
        self.size = info.file_size
        self._fd = fd
        self._stored = info.compress_type == zipfile.ZIP_STORED
        self._csize = info.compress_size
        self._start = member_data_offset(fd, info, archive_size)
        if self._stored and self._csize != self.size:
            raise ZipMemberError(f"{info.filename}: stored member with {self._csize} bytes for {self.size}")
        self.compressed_read = 0
        self.inflated = 0
        self._checkpoints: list[_Checkpoint] = []
        self._restart(None)

    # -- the deflate stream ---------------------------------------------------------------------------
    def _restart(self, point: _Checkpoint | None) -> None:
        if point is None:
            self._z = zlib.decompressobj(-zlib.MAX_WBITS)
            self._in_pos = 0
            self._out_pos = 0
        else:
            self._z = point.state.copy()
            self._in_pos = point.in_pos
            self._out_pos = point.out_pos
        self._pending = b""  # input not yet given to the decompressor
        self._window = bytearray()  # output bytes [_out_pos - len(_window), _out_pos)

    def _step(self) -> bool:
        """Decompress one step forward; False at the end of the stream."""
        if not self._pending:
            if self._in_pos >= self._csize:
                tail = self._z.flush()
                if tail:
                    self._take(tail)
                    return True
                return False
            n = min(CHUNK, self._csize - self._in_pos)
            data = os.pread(self._fd, n, self._start + self._in_pos)
            if len(data) != n:
                raise ZipMemberError(f"{self.name}: archive ended inside the member")
            self._in_pos += n
            self.compressed_read += n
            self._pending = data
        try:
            out = self._z.decompress(self._pending, OUT_STEP)
        except zlib.error as exc:
            raise ZipMemberError(f"{self.name}: corrupt deflate data: {exc}") from None
        self._pending = self._z.unconsumed_tail
        if out:
            self._take(out)
        elif not self._pending and self._z.eof:
            return False
        if not self._pending and (
            not self._checkpoints or self._out_pos - self._checkpoints[-1].out_pos >= CHECKPOINT_EVERY
        ):
            if not self._checkpoints or self._out_pos > self._checkpoints[-1].out_pos:
                self._checkpoints.append(_Checkpoint(self._out_pos, self._in_pos, self._z.copy()))
        return True

    def _take(self, out: bytes) -> None:
        self._out_pos += len(out)
        self.inflated += len(out)
        self._window += out
        if len(self._window) > WINDOW:
            del self._window[: len(self._window) - WINDOW]

    def _rewind_to(self, offset: int) -> None:
        best = None
        for point in self._checkpoints:
            if point.out_pos <= offset:
                best = point
        self._restart(best)

    # -- ByteSource -----------------------------------------------------------------------------------
    def read_at(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0:
            raise ZipMemberError(f"{self.name}: negative read at {offset}")
        length = max(0, min(length, self.size - offset))
        if length == 0:
            return b""
        if self._stored:
            data = os.pread(self._fd, length, self._start + offset)
            self.compressed_read += len(data)
            return data
        if offset < self._out_pos - len(self._window):
            self._rewind_to(offset)
        if length > PIECE:
            parts = []
            done = 0
            while done < length:
                piece = self.read_at(offset + done, min(PIECE, length - done))
                if not piece:
                    break
                parts.append(piece)
                done += len(piece)
            return b"".join(parts)
        while self._out_pos < offset + length:
            if not self._step():
                break
        begin = self._out_pos - len(self._window)
        lo = max(offset - begin, 0)
        hi = min(offset + length - begin, len(self._window))
        if offset < begin or lo >= hi:
            return b""
        return bytes(self._window[lo:hi])

    def close(self) -> None:
        self._checkpoints.clear()
        self._window = bytearray()
        self._pending = b""
