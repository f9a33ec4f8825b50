"""`--deep` through a FileView: the ELF / fatbin readers of stackcheck/deep over an image's files.

`ViewElfFile` is `stackcheck.deep.elf.ElfFile` with its one read primitive (`read_at`) served by
`FileView.read_bytes`, so the fatbin walker (`scan_fatbins`, `cubin_info`) runs unchanged on a file inside
an image: for an uncompressed layer each read is one `pread` of the image file; for a gzip layer it goes
through the layer's checkpoints (the walker reads front to back, so the file is decompressed about once).
`scan_view_file` is `stackcheck.deep.binaries.scan_file` for a view path. The probe family moves onto the
FileView in issue 15 (another branch); the integrator may fold these into stackcheck/deep.
"""

from __future__ import annotations

import fnmatch
import posixpath
from pathlib import Path
from typing import Any

from stackcheck.deep.elf import EM_CUDA, ElfError, ElfFile
from stackcheck.deep.fatbin import cubin_info, scan_fatbins, sort_targets
from stackcheck.probes.fsview import FileView


class ViewElfFile(ElfFile):
    """An ELF file read through a FileView (box path); `bytes_read` counts the bytes asked for."""

    def __init__(self, view: FileView, path: str) -> None:
        self.view = view
        self.box_path = path
        self.path = Path(path)
        self.bytes_read = 0
        self._sections = None
        self._segments = None
        self._fd = -1
        s = view.stat(path)
        if s is None:
            raise ElfError(f"{path}: cannot open: no such file")
        if s.kind != "file":
            raise ElfError(f"{path}: cannot open: not a regular file")
        self.size = s.size
        self.header = self._read_header()

    def close(self) -> None:
        pass

    def read_at(self, offset: int, length: int, what: str) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise ElfError(
                f"{self.path}: {what} at offset {offset} (+{length} bytes) lies outside the file "
                f"({self.size} bytes): truncated or corrupt"
            )
        try:
            data = self.view.read_bytes(self.box_path, length, offset)
        except OSError as exc:
            raise ElfError(f"{self.path}: cannot read {what}: {exc.strerror or exc}") from None
        if len(data) != length:
            raise ElfError(f"{self.path}: {what}: unexpected end of file at offset {offset + len(data)}")
        self.bytes_read += length
        return data


def scan_view_file(view: FileView, path: str, rel: str) -> dict[str, Any] | None:
    """One file's GPU targets (the shape of `stackcheck.deep.binaries.scan_file`); None for a host ELF
    without GPU code."""
    entry: dict[str, Any] = {"path": rel, "sass": [], "ptx": [], "bytes_read": 0, "compressed_entries": 0}
    elf: ViewElfFile | None = None
    try:
        elf = ViewElfFile(view, path)
        if elf.header.e_machine == EM_CUDA:
            info = cubin_info(elf)
            entry["kind"] = "cubin"
            entry["sass"] = [info.target] if info.target else []
            if info.target is None:
                entry["error"] = f"cubin with unknown SM {info.sm}"
        else:
            scan = scan_fatbins(elf)
            if not scan.entries and not scan.warnings:
                return None
            entry["kind"] = "fatbin"
            entry["sass"], entry["ptx"] = scan.sass, scan.ptx
            if scan.relocatable:
                entry["relocatable"] = scan.relocatable
            entry["compressed_entries"] = scan.compressed_entries
            entry["entries"] = len(scan.entries)
            if scan.warnings:
                entry["warnings"] = scan.warnings[:5]
    except ElfError as exc:
        entry["error"] = str(exc)
    finally:
        if elf is not None:
            entry["bytes_read"] = elf.bytes_read
    return entry


def view_glob(view: FileView, base: str, pattern: str, limit: int = 20000) -> list[str]:
    """Regular files (links not followed) below `base` whose path relative to it matches `pattern`
    (`*` within a component, `**/` any number of directories); sorted, at most `limit`."""
    out: list[str] = []
    rx = fnmatch.translate(pattern.replace("**/", "\0"))
    # "**/" may match nothing or several whole components; "*" stays inside one component
    rx = rx.replace("\0", "(?:[^/]*/)*").replace(".*", "[^/]*")
    import re

    compiled = re.compile(rx)
    stack = [""]
    while stack and len(out) < limit:
        rel_dir = stack.pop()
        try:
            names = view.listdir(posixpath.join(base, rel_dir) if rel_dir else base)
        except OSError:
            continue
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            s = view.stat(posixpath.join(base, rel), follow_symlinks=False)
            if s is None:
                continue
            if s.kind == "dir":
                stack.append(rel)
            elif s.kind == "file" and compiled.match(rel):
                out.append(rel)
    return sorted(out)[:limit]


def scan_view_package(view: FileView, location: str, patterns: tuple[str, ...]) -> dict[str, Any]:
    """Every matching file of one package (location: its site-packages box path), as `scan_package_binaries`."""
    files: list[dict[str, Any]] = []
    sass: set[str] = set()
    ptx: set[str] = set()
    rels = sorted({rel for pat in patterns for rel in view_glob(view, location, pat)})
    for rel in rels:
        entry = scan_view_file(view, posixpath.join(location, rel), rel)
        if entry is None:
            continue
        files.append(entry)
        sass.update(entry["sass"])
        ptx.update(entry["ptx"])
    return {
        "files": files,
        "sass": sort_targets(sass),
        "ptx": sort_targets(ptx),
        "files_scanned": len(rels),
        "bytes_read": sum(int(f["bytes_read"]) for f in files),
    }
