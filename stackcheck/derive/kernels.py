"""The SASS and PTX targets of every shared object (and bare cubin) of a release, read from ELF and fatbin
headers with stackcheck.readers.elf / fatbin, inside the wheel or on disk, and the CUDA major the objects link
against (`libcudart.so.N` in their dynamic string table)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from stackcheck.derive.tree import ReleaseTree, TreeError
from stackcheck.facts.archs import sort_targets
from stackcheck.readers.elf import EM_CUDA, ElfError, ElfFile
from stackcheck.readers.fatbin import cubin_info, scan_fatbins

_CUDART = re.compile(rb"libcudart\.so\.(\d+)")
MAX_DYNSTR = 1 << 20


def is_binary_name(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return base.endswith((".so", ".cubin")) or ".so." in base


@dataclass
class BinaryScan:
    """What the binaries of a release carry."""

    files: list[dict[str, Any]] = field(default_factory=list)  # per file with GPU code: path, sass, ptx
    sass: list[str] = field(default_factory=list)
    ptx: list[str] = field(default_factory=list)
    cudart: list[int] = field(default_factory=list)  # libcudart majors linked
    scanned: int = 0
    errors: list[str] = field(default_factory=list)
    bytes_read: int = 0  # bytes asked of the archive or the disk
    inflated: int = 0  # bytes decompressed (wheel members only)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "sass": self.sass,
            "ptx": self.ptx,
            "cudart": self.cudart,
            "files": self.files,
            "scanned": self.scanned,
            "errors": self.errors,
            "bytes_read": self.bytes_read,
            "inflated": self.inflated,
        }


def scan_one(tree: ReleaseTree, name: str) -> dict[str, Any] | None:
    """One binary's targets ({"path", "sass", "ptx", "cudart"?} or {"path", "error"}); None without GPU code."""
    entry: dict[str, Any] = {"path": name, "sass": [], "ptx": []}
    elf: ElfFile | None = None
    source = None
    try:
        display, source = tree.binary(name)
        elf = ElfFile(display, source=source)
        if elf.header.e_machine == EM_CUDA:
            info = cubin_info(elf)
            if info.target is None:
                entry["error"] = f"cubin with unknown SM {info.sm}"
            else:
                entry["sass"] = [info.target]
        else:
            # the dynamic string table lies near the start: read it before the fatbin (a deflated member
            # is then decompressed forward once past it)
            dynstr = elf.section(".dynstr")
            majors: set[int] = set()
            if dynstr is not None and dynstr.size:
                majors = {int(m) for m in _CUDART.findall(elf.read_section(dynstr, limit=MAX_DYNSTR))}
            scan = scan_fatbins(elf)
            if not scan.entries and not scan.warnings:
                return None
            entry["sass"], entry["ptx"] = scan.sass, scan.ptx
            if majors:
                entry["cudart"] = sorted(majors)
            if scan.warnings:
                entry["warnings"] = scan.warnings[:5]
    except (ElfError, TreeError) as exc:
        entry["error"] = str(exc)
    finally:
        read = elf.bytes_read if elf is not None else 0
        entry["_read"] = read
        entry["_inflated"] = int(getattr(source, "inflated", 0))
        entry["_compressed"] = int(getattr(source, "compressed_read", 0))
        if elf is not None:
            elf.close()
        elif source is not None:
            source.close()
    return entry


def scan_binaries(tree: ReleaseTree, names: list[str]) -> BinaryScan:
    """Scan every binary in `names` (see is_binary_name)."""
    t0 = time.perf_counter()
    out = BinaryScan()
    sass: set[str] = set()
    ptx: set[str] = set()
    cudart: set[int] = set()
    for name in sorted(n for n in names if is_binary_name(n)):
        entry = scan_one(tree, name)
        out.scanned += 1
        if entry is None:
            continue
        out.inflated += entry.pop("_inflated")
        compressed = entry.pop("_compressed")
        out.bytes_read += compressed if tree.kind == "wheel" else entry.pop("_read")
        entry.pop("_read", None)
        if "error" in entry:
            out.errors.append(entry["error"])
            continue
        out.files.append(entry)
        sass.update(entry["sass"])
        ptx.update(entry["ptx"])
        cudart.update(entry.get("cudart", []))
    out.sass, out.ptx = sort_targets(sass), sort_targets(ptx)
    out.cudart = sorted(cudart)
    out.seconds = time.perf_counter() - t0
    return out
