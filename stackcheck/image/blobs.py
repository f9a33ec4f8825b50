"""Byte sources of an image: blobs in a file (a member of an outer tar, or a file of an OCI layout), and
sequential readers over them, plain or decompressed.

`Blob` is a byte range of one file on the auditing machine, read with `os.pread` (no file position, so
concurrent probes can share it). `PlainReader` and `InflateReader` give the tar parser one sequential
interface (`read`, `skip`, `pos`) over an uncompressed or a gzip-compressed blob. `InflateReader` also
records *checkpoints* while it streams (a copy of the zlib state every few megabytes of output) so that
`GzipIndex.read(offset, n)` can later serve a file inside a compressed layer by restarting from the nearest
checkpoint instead of decompressing the layer from its start. Nothing is written anywhere.
"""

from __future__ import annotations

import os
import threading
import zlib
from dataclasses import dataclass
from typing import Any

from stackcheck.errors import BadInputError

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
#: compressed bytes read from the file at a time. Small on purpose: a checkpoint's copy of the zlib object
#: keeps a reference to the unconsumed rest of the chunk it was taken in (measured: 1 MiB chunks made 192
#: checkpoints cost 110 MB; 64 KiB chunks bound them to ~100 KB each)
CHUNK = 64 << 10
#: decompressed bytes produced per zlib call (small chunks stay in the CPU cache: measured faster than 1 MiB)
OUT_CHUNK = 256 << 10
#: a checkpoint (copy of the zlib state, 40-100 KB) every this many decompressed bytes, doubled when a
#: layer would need more than MAX_CHECKPOINTS of them (a 2 GB layer: 64 checkpoints, 32 MiB apart)
CHECKPOINT_SPACING = 8 << 20
MAX_CHECKPOINTS = 64


class Truncated(Exception):
    """The data ended before a structure that should be there."""


class FileHandle:
    """One open file of the image (the outer tar, or one blob of an OCI layout directory)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            self._fd: int = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise BadInputError(f"{path}: cannot open: {exc.strerror or exc}") from None
        try:
            self.size = os.fstat(self._fd).st_size
        except OSError as exc:
            os.close(self._fd)
            raise BadInputError(f"{path}: cannot read: {exc.strerror or exc}") from None

    def pread(self, n: int, offset: int) -> bytes:
        # under the lock: close() from another thread cannot hand the descriptor number to a new file mid-read
        with self._lock:
            if self._fd < 0:
                raise OSError(f"{self.path}: image closed")
            return os.pread(self._fd, n, offset)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1


@dataclass(frozen=True)
class Blob:
    """Bytes [base, base + length) of a file; `name` says where they are for messages."""

    handle: FileHandle
    base: int
    length: int
    name: str

    def pread(self, offset: int, n: int) -> bytes:
        """Up to n bytes at offset (fewer only at the end of the blob)."""
        n = max(0, min(n, self.length - offset))
        if n == 0 or offset < 0:
            return b""
        out = self.handle.pread(n, self.base + offset)
        while len(out) < n:  # a short read of a regular file: ask again for the rest
            more = self.handle.pread(n - len(out), self.base + offset + len(out))
            if not more:
                raise Truncated(f"{self.name}: file ends at byte {offset + len(out)} of {self.length}")
            out += more
        return out

    def head(self, n: int = 8) -> bytes:
        return self.pread(0, n)


def compression_of(blob: Blob) -> str:
    """ "gzip", "zstd" or "none", from the blob's first bytes (the bytes are trusted over a media type)."""
    head = blob.head(4)
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return "none"


class PlainReader:
    """Sequential reads over an uncompressed blob; `skip` costs nothing (data is never read to skip it)."""

    WINDOW = 64 << 10

    def __init__(self, blob: Blob) -> None:
        self.blob = blob
        self.pos = 0
        self._buf = b""
        self._buf_at = 0

    def read(self, n: int) -> bytes:
        start = self.pos - self._buf_at
        if start >= 0 and start + n <= len(self._buf):
            self.pos += n
            return self._buf[start : start + n]
        if self.pos + n > self.blob.length:
            raise Truncated(f"{self.blob.name}: ends at byte {self.blob.length}, {n} bytes needed at {self.pos}")
        if n <= self.WINDOW:
            self._buf = self.blob.pread(self.pos, self.WINDOW)
            self._buf_at = self.pos
            out = self._buf[:n]
        else:
            out = self.blob.pread(self.pos, n)
        self.pos += n
        return out

    def eof(self) -> bool:
        return self.pos >= self.blob.length

    def block(self) -> bytes:
        """The next 512 bytes; b"" when nothing is left (the tar parser's one call per header)."""
        pos = self.pos
        start = pos - self._buf_at
        buf = self._buf
        if start >= 0 and start + 512 <= len(buf):
            self.pos = pos + 512
            return buf[start : start + 512]
        if pos >= self.blob.length:
            return b""
        return self.read(512)

    def skip(self, n: int) -> None:
        if self.pos + n > self.blob.length:
            raise Truncated(f"{self.blob.name}: ends at byte {self.blob.length}, a member needs {self.pos + n}")
        self.pos += n


@dataclass
class _Checkpoint:
    comp_pos: int  # compressed offset of the next input byte for `state`
    out_pos: int  # decompressed offset of the next output byte
    state: Any  # a zlib decompressor (a copy: never fed itself)


class _Inflater:
    """A gzip stream cursor: decompresses forward from (comp_pos, out_pos, state)."""

    def __init__(self, blob: Blob, comp_pos: int = 0, out_pos: int = 0, state: Any = None) -> None:
        self.blob = blob
        self.comp_pos = comp_pos  # next compressed byte to fetch from the blob
        self.out_pos = out_pos
        self.d: Any = state if state is not None else zlib.decompressobj(31)
        self.pending = b""  # compressed input fetched but not consumed
        self.ended = False

    def input_pos(self) -> int:
        """The compressed offset the decompressor state corresponds to."""
        return self.comp_pos - len(self.pending)

    def produce(self, max_out: int) -> bytes:
        """The next decompressed bytes (at most max_out); b"" at the end of the stream."""
        while not self.ended:
            if not self.pending:
                self.pending = self.blob.pread(self.comp_pos, CHUNK)
                self.comp_pos += len(self.pending)
                if not self.pending:
                    if self.d.eof:
                        self.ended = True
                        return b""
                    raise Truncated(f"{self.blob.name}: gzip data ends early (at byte {self.comp_pos})")
            try:
                out: bytes = self.d.decompress(self.pending, max_out)
            except zlib.error as exc:
                raise Truncated(f"{self.blob.name}: corrupt gzip data near byte {self.input_pos()}: {exc}") from None
            if self.d.eof:
                rest = self.d.unused_data
                self.pending = rest
                if not rest:
                    # the member ended exactly at a chunk end: the next fetch decides (more members or end)
                    nxt = self.blob.pread(self.comp_pos, 2)
                    if nxt != GZIP_MAGIC:
                        self.ended = True
                    else:
                        self.d = zlib.decompressobj(31)
                elif rest.startswith(GZIP_MAGIC):
                    self.d = zlib.decompressobj(31)  # a multi-member gzip file: the next member follows
                else:
                    self.ended = True  # trailing bytes (padding) after the last member are ignored
            else:
                self.pending = self.d.unconsumed_tail
            if out:
                self.out_pos += len(out)
                return out
        return b""


class GzipIndex:
    """Random access into a gzip blob through checkpoints recorded by the one streaming pass.

    `read(offset, n)` restarts from the last checkpoint at or before `offset` (at most the spacing of
    decompression, 8 MiB or more for big layers) unless the cursor left by the previous read is already
    close behind, so a caller reading a file front to back (an ELF walker) decompresses it about once.
    """

    def __init__(self, blob: Blob) -> None:
        self.blob = blob
        self.checkpoints: list[_Checkpoint] = []
        self.spacing = CHECKPOINT_SPACING
        self.length: int | None = None  # decompressed size, once the pass finished
        self._cursor: _Inflater | None = None
        self._lock = threading.Lock()

    def add(self, cursor: _Inflater) -> None:
        self.checkpoints.append(_Checkpoint(cursor.input_pos(), cursor.out_pos, cursor.d.copy()))
        if len(self.checkpoints) > MAX_CHECKPOINTS:
            # thin out: keep every other one (the first, at offset 0, stays), double the spacing
            self.checkpoints = self.checkpoints[::2]
            self.spacing *= 2

    def read(self, offset: int, n: int) -> bytes:
        with self._lock:
            cur = self._cursor
            if cur is None or cur.out_pos > offset or offset - cur.out_pos > self.spacing:
                cp = self.checkpoints[0]
                for c in self.checkpoints:
                    if c.out_pos <= offset:
                        cp = c
                    else:
                        break
                cur = _Inflater(self.blob, cp.comp_pos, cp.out_pos, cp.state.copy())
            out = bytearray()
            try:
                while cur.out_pos < offset:
                    if not cur.produce(min(OUT_CHUNK, offset - cur.out_pos)):
                        return b""
                while len(out) < n:
                    chunk = cur.produce(min(OUT_CHUNK, n - len(out)))
                    if not chunk:
                        break
                    out += chunk
            except Truncated as exc:
                self._cursor = None
                raise OSError(str(exc)) from None
            self._cursor = cur
            return bytes(out)


class InflateReader:
    """Sequential reads over a gzip blob for the streaming pass, recording checkpoints into `index`."""

    def __init__(self, blob: Blob, index: GzipIndex) -> None:
        self.blob = blob
        self.index = index
        self._inf = _Inflater(blob)
        self._buf = b""
        self._buf_off = 0  # bytes of _buf already consumed
        self.pos = 0  # decompressed bytes consumed by the caller
        self._next_cp = 0
        index.add(self._inf)  # offset 0
        self._next_cp = index.spacing

    def _fill(self) -> bool:
        inf = self._inf
        # checkpoints are taken between zlib calls, where the state and the input position agree; the
        # buffer is empty then, so the checkpoint's output offset is the caller's position
        if inf.out_pos >= self._next_cp and not inf.ended:
            self.index.add(inf)
            self._next_cp = inf.out_pos + self.index.spacing
        chunk = inf.produce(OUT_CHUNK)
        if not chunk:
            return False
        self._buf = chunk
        self._buf_off = 0
        return True

    def read(self, n: int) -> bytes:
        avail = len(self._buf) - self._buf_off
        if n <= avail:
            out = self._buf[self._buf_off : self._buf_off + n]
            self._buf_off += n
            self.pos += n
            return out
        parts = [self._buf[self._buf_off :]]
        got = avail
        self._buf, self._buf_off = b"", 0
        while got < n:
            if not self._fill():
                raise Truncated(f"{self.blob.name}: decompressed data ends at byte {self.pos + got}")
            take = min(n - got, len(self._buf))
            parts.append(self._buf[:take])
            self._buf_off = take
            got += take
        self.pos += n
        return b"".join(parts)

    def skip(self, n: int) -> None:
        avail = len(self._buf) - self._buf_off
        if n <= avail:
            self._buf_off += n
            self.pos += n
            return
        left = n - avail
        self._buf, self._buf_off = b"", 0
        while left > 0:
            if not self._fill():
                raise Truncated(f"{self.blob.name}: decompressed data ends {left} bytes before a member's end")
            take = min(left, len(self._buf))
            self._buf_off = take
            left -= take
        self.pos += n

    def eof(self) -> bool:
        return self._buf_off >= len(self._buf) and not self._fill_keep()

    def block(self) -> bytes:
        """The next 512 bytes; b"" when nothing is left."""
        return b"" if self.eof() else self.read(512)

    def _fill_keep(self) -> bool:
        self._buf, self._buf_off = b"", 0
        return self._fill()

    def finish(self) -> None:
        """Record the decompressed length (after the parser stopped at the end-of-archive marker)."""
        self.index.length = self.pos
