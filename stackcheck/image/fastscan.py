"""The fast reader of uncompressed layers: tar headers parsed and applied to the tree in one loop.

Why a second reader: in a `docker save` of many small files the cost is per member, in Python. The general
path (tarscan.TarScanner yielding a `Member`, tree.Tree.apply inserting it) spends most of a member's time
in the generator, the Member object and the calls between them, which kept the image bench at about a
third of GNU tar's speed. This loop reads the layer through 1 MiB buffers (one `pread` serves the headers
and small files of a few hundred members; a large member is skipped by position, its bytes never read),
parses the fields with slices and `int(..., 8)`, and inserts regular files, directories and symbolic links
itself through the applier's parent cache. Everything else goes through the general code, so the rules are
written once:
- a member that is not a plain file, directory or symbolic link (hard links, devices, whiteouts, opaque
  markers), or whose name needs cleaning (`./`, `..`, `//`, absolute, hidden components) is handed to
  `LayerApplier.add` as a `Member`;
- pax (`x`, `g`) and GNU long-name (`L`, `K`) records are folded in here as the general reader does;
- a header this loop does not expect (no `ustar` magic, an octal field it cannot read in one go, a sparse
  member, a pax sparse record) hands the rest of the layer, from that header (or from the first of its
  extended records), to tarscan.TarScanner, which checks the checksum and parses every field strictly.
The first header of a layer has its checksum checked (the evidence that the stream is a tar at all); later
headers carry the ustar magic, which every Go-written layer (docker, containerd, buildkit) has. A test runs
both readers over the same hostile and ordinary layers and compares the trees.
"""

from __future__ import annotations

import contextlib

from stackcheck.image.blobs import Blob, PlainReader, Truncated
from stackcheck.image.tarscan import (
    BLOCK,
    META_CAP,
    ZERO_BLOCK,
    Member,
    TarError,
    TarScanner,
    check_header_checksum,
    cstr,
    pax_records,
)
from stackcheck.image.tree import AnyNode, FileNode, LayerApplier, Node, Tree

#: bytes read at a time; headers and the data of small files in between are served from it
BUFFER = 1 << 20
_REG_FILE, _REG_NUL, _REG_CONTIG = 0x30, 0x00, 0x37
_HARDLINK, _SYMLINK, _DIRECTORY = 0x31, 0x32, 0x35
_PAX, _PAX_GLOBAL, _PAX_OLD, _LONG_NAME, _LONG_LINK = 0x78, 0x67, 0x58, 0x4C, 0x4B
_NO_DATA = frozenset({_HARDLINK, _SYMLINK, _DIRECTORY, 0x33, 0x34, 0x36})
_META = frozenset({_PAX, _PAX_OLD, _PAX_GLOBAL, _LONG_NAME, _LONG_LINK})
#: inserted by this loop itself (regular files and directories); every other type goes through the applier
_FAST_TYPES = frozenset({_REG_FILE, _REG_NUL, _REG_CONTIG, _DIRECTORY})
_DOT_SLASH = (0x2E, 0x2F)  # a name starting with "." or "/" needs cleaning: the general rules
_IFREG, _IFDIR, _IFLNK = 0o100000, 0o040000, 0o120000


def _clean_parent(raw: bytes) -> bool:
    """A parent path the fast loop may use as it is: relative, no empty, "." , ".." or hidden component
    (anything else goes through the general rules, which clean it or refuse it)."""
    if not raw:
        return True
    return raw[0] not in _DOT_SLASH and not raw.endswith(b"/") and b"/." not in raw and b"//" not in raw


def apply_plain_layer(tree: Tree, layer: int, blob: Blob, where: str) -> bool:
    """Apply the uncompressed layer `blob` to `tree`; True when its end-of-archive marker was seen.

    Raises TarError or Truncated (the caller turns them into one line), as TarScanner does."""
    applier = LayerApplier(tree, layer, where)
    parents = applier.parents
    modes = tree._modes
    length = blob.length
    pread = blob.pread
    buf = b""
    buf_at = 0
    pos = 0  # stream offset of the next header
    entries = 0
    pax: dict[str, str] = {}
    pax_global: dict[str, str] = {}
    long_name: bytes | None = None
    long_link: bytes | None = None
    meta_at = -1  # offset of the first extended record of the member to come
    pending = False  # an extended record (pax, GNU long name) applies to the next member, or a global one
    # raw mode field -> (permission bits, a regular file's st_mode: one int object each)
    known_modes: dict[bytes, tuple[int, int]] = {}
    known_mtimes: dict[bytes, int] = {}
    try:
        while True:
            if pos >= length:
                if long_name is not None or long_link is not None or pax:
                    raise Truncated(f"{where}: ends after an extended header at byte {meta_at}")
                return False
            k = pos - buf_at
            if k < 0 or k + BLOCK > len(buf):
                buf = pread(pos, BUFFER)
                buf_at, k = pos, 0
                if len(buf) < BLOCK:
                    raise Truncated(f"{blob.name}: ends at byte {length}, {BLOCK} bytes needed at {pos}")
            if buf[k] == 0 and buf[k : k + BLOCK] == ZERO_BLOCK:
                return True
            if pos == 0:  # the first header: its checksum is the evidence that this is a tar at all
                check_header_checksum(buf[k : k + BLOCK], pos, where)
            if not buf.startswith(b"ustar", k + 257):
                break  # an old or odd header: the strict reader from here
            typ = buf[k + 156]
            # mode and mtime repeat across a layer (0000644, one build time): parsed once per distinct field
            raw_mode = buf[k + 100 : k + 107]
            raw_mtime = buf[k + 136 : k + 147]
            try:
                size = int(buf[k + 124 : k + 135], 8)
                known = known_modes.get(raw_mode)
                if known is None:
                    perm = int(raw_mode, 8) & 0o7777
                    known = (perm, modes.setdefault(_IFREG | perm, _IFREG | perm))
                    if len(known_modes) < 4096:
                        known_modes[raw_mode] = known
                mode, reg_mode = known
                mtime = known_mtimes.get(raw_mtime)
                if mtime is None:
                    mtime = int(raw_mtime, 8)
                    if len(known_mtimes) < 4096:
                        known_mtimes[raw_mtime] = mtime
            except ValueError:
                break  # a NUL-padded, base-256 or malformed number: the strict reader decides
            if size < 0 or mtime < 0 or buf[k + 135] not in (0, 32) or buf[k + 147] not in (0, 32):
                break
            data_pos = pos + BLOCK
            if typ in _META:
                if size > META_CAP:
                    raise TarError(f"{where}: extended header of {size} bytes at byte {pos}")
                end = data_pos + size
                if end > length:
                    raise Truncated(f"{blob.name}: ends at byte {length}, {size} bytes needed at {data_pos}")
                data = buf[k + BLOCK : k + BLOCK + size] if end <= buf_at + len(buf) else pread(data_pos, size)
                if meta_at < 0:
                    meta_at = pos
                if typ == _LONG_NAME:
                    long_name = cstr(data)
                elif typ == _LONG_LINK:
                    long_link = cstr(data)
                elif typ == _PAX_GLOBAL:
                    pax_global.update(pax_records(data, f"{where}: pax header at byte {pos}"))
                else:
                    pax.update(pax_records(data, f"{where}: pax header at byte {pos}"))
                pending = True
                pos = end + (-size % BLOCK)
                continue
            if typ == 0x53:  # a GNU sparse member
                break
            if not pending and buf[k + 345] == 0:
                # the common member: a plain ustar name. Its parent is looked up by the raw bytes (the
                # cache holds them beside the decoded paths; bytes and str keys never collide), so only
                # the base name is decoded
                meta_at = -1  # (an empty pax record may have set it)
                e = buf.find(0, k, k + 100)
                raw = buf[k : e if e >= 0 else k + 100]
                data_size = 0 if typ in _NO_DATA else size
                next_pos = data_pos + data_size + (-data_size % BLOCK)
                if next_pos > length:
                    raise Truncated(f"{blob.name}: ends at byte {length}, a member needs {next_pos}")
                member_name = raw
                if typ == _DIRECTORY and raw.endswith(b"/"):
                    raw = raw[:-1]  # "usr/lib/"
                raw_parent, _, raw_base = raw.rpartition(b"/")
                # a cached parent was checked when it was cached; the base name is checked here (before a
                # parent is made: "a/.." must not create "a")
                parent = None
                # not "", ".x", "..", ".wh." as the base; not absolute ("/a": its parent part is empty)
                if typ in _FAST_TYPES and raw_base and raw_base[0] != 0x2E and raw[0] != 0x2F:
                    parent = parents.get(raw_parent)
                    if parent is None and _clean_parent(raw_parent):
                        key = raw_parent.decode("utf-8", "surrogateescape")
                        parent = applier.parent(key, member_name.decode("utf-8", "surrogateescape"))
                        if parent is None:
                            pos = next_pos
                            continue
                        parents[raw_parent] = parent
                if parent is not None:
                    # not interned: most names are distinct, and a table of them cost a fifth of this loop
                    base = raw_base.decode("utf-8", "surrogateescape")
                    children = parent.where
                    if typ == _DIRECTORY:
                        node: AnyNode = Node(modes.setdefault(_IFDIR | mode, _IFDIR | mode), mtime, 0, layer, {})
                    else:
                        node = FileNode((reg_mode, mtime, data_size, layer, data_pos))
                    if children.setdefault(base, node) is not node:
                        applier.put(children, base, node)  # a replacement: the general rules
                    else:
                        entries += 1
                    pos = next_pos
                    continue
            if long_name is not None:
                raw = long_name
            else:
                e = buf.find(0, k, k + 100)
                raw = buf[k : e if e >= 0 else k + 100]
                if buf[k + 345] != 0 and buf[k + 257 : k + 263] == b"ustar\x00":
                    e = buf.find(0, k + 345, k + 500)
                    raw = buf[k + 345 : e if e >= 0 else k + 500] + b"/" + raw
            name = raw.decode("utf-8", "surrogateescape")
            linkname = ""
            if typ in (_SYMLINK, _HARDLINK):
                if long_link is not None:
                    linkname = long_link.decode("utf-8", "surrogateescape")
                else:
                    e = buf.find(0, k + 157, k + 257)
                    linkname = buf[k + 157 : e if e >= 0 else k + 257].decode("utf-8", "surrogateescape")
            if pax or pax_global:
                merged = {**pax_global, **pax} if pax_global else pax
                if any(key.startswith("GNU.sparse.") for key in merged):
                    break
                name = merged.get("path", name)
                linkname = merged.get("linkpath", linkname)
                if "size" in merged:
                    try:
                        size = int(merged["size"])
                    except ValueError:
                        raise TarError(f"{where}: pax size {merged['size'][:20]!r} at byte {pos}") from None
                    if size < 0:
                        raise TarError(f"{where}: negative size at byte {pos}")
                if "mtime" in merged:
                    with contextlib.suppress(ValueError, OverflowError):  # a bad mtime: keep the header's
                        mtime = int(float(merged["mtime"]))
                pax = {}
            long_name = long_link = None
            meta_at = -1
            pending = bool(pax_global)
            data_size = 0 if typ in _NO_DATA else size
            end = data_pos + data_size + (-data_size % BLOCK)
            if end > length:
                raise Truncated(f"{blob.name}: ends at byte {length}, a member needs {end}")
            pos = end
            applier.add(Member(name, bytes((typ,)), data_size, mode, mtime, linkname, data_pos))
        # the strict reader from the first record of the member where this loop stopped
        reader = PlainReader(blob)
        reader.pos = meta_at if meta_at >= 0 else pos
        scanner = TarScanner(reader, where, pax_global=pax_global)
        add = applier.add
        for m in scanner:
            add(m)
        return scanner.ended_cleanly
    finally:
        applier.entries += entries
        applier.finish()
