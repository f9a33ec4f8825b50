"""Which GPU architectures the installed packages' binaries carry, from fatbin headers and cubin ELF headers.

`scan_package_binaries()` walks a package's shared objects (and bare .cubin files), reading only ELF headers,
section tables and fatbin entry headers; `probe_binaries()` does that for every known package in the facts
within a time budget; `binary_coverage()` turns a package's result into a per-GPU verdict through
`stackcheck.facts.archs`.
"""

from __future__ import annotations

import posixpath
import time
from collections.abc import Iterable, Mapping

from stackcheck.digits import whole_number
from stackcheck.facts import archs
from stackcheck.facts.archs import sort_targets
from stackcheck.facts.model import KERNEL_MODULE, KERNEL_PACKAGES
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.readers.fsview import FileView, GlobLimit, HostView, glob, is_dir, is_host, kind_of

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from stackcheck.readers.elf import ElfFile
    from stackcheck.readers.kept import Kept

#: Files scanned per package (globs relative to the package's `location`, i.e. site-packages).
PACKAGE_GLOBS: dict[str, tuple[str, ...]] = {
    "torch": ("torch/lib/*.so", "torch/lib/*.so.*"),
    **dict.fromkeys(KERNEL_PACKAGES, (f"{KERNEL_MODULE}/**/*.so",)),
    "flashinfer-python": ("flashinfer/**/*.so", "flashinfer/**/*.cubin"),
    "flashinfer-jit-cache": ("flashinfer_jit_cache/**/*.so", "flashinfer_jit_cache/**/*.cubin"),
    "flashinfer-cubin": ("flashinfer_cubin/**/*.cubin", "flashinfer_cubin/**/*.so"),
    "vllm": ("vllm/**/*.so",),
    # DeepEP: a source build's top-level deep_ep_cpp (its setup.py's extension name), SGLang's prebuilt sgl-deep-ep's
    # deep_ep/_C (0.1.1+; 0.1.0 ships deep_ep_cpp): every DeepEP kernel is in that one extension
    **dict.fromkeys(("deep-ep", "sgl-deep-ep"), ("deep_ep_cpp.*so", "deep_ep/**/*.so")),
}

#: Files scanned in a package's `extension_dir` (the packages probe: a PEP 660 editable install keeps its compiled
#: top-level module in the project directory, not in site-packages), relative to that directory.
EXTENSION_DIR_GLOBS: dict[str, tuple[str, ...]] = {"deep-ep": ("deep_ep_cpp.*so",)}

#: Default wall-clock budget for `probe_binaries()` over all packages.
DEFAULT_BUDGET_S = 20.0
#: At most this many files per package (flashinfer-cubin ships thousands of cubins).
MAX_FILES_PER_PACKAGE = 20000


def _expand(location: str, files_glob: str | Iterable[str], view: FileView) -> list[str]:
    """Regular files (not links: a link's target is scanned under its own name) matching the globs."""
    patterns = [files_glob] if isinstance(files_glob, str) else list(files_glob)
    seen: set[str] = set()
    for pat in patterns:
        for p in glob(view, location, pat):
            if kind_of(view, p, follow_symlinks=False) == "file":
                seen.add(p)
    return sorted(seen)


def scan_file(path: str | Path, rel: str, view: FileView | None = None) -> dict[str, Any] | None:
    """One file's targets; None for a host ELF without GPU code. Errors become an entry with "error"."""
    # (the readers are imported here: a run whose every file is kept (stackcheck.readers.kept) reads none)
    from stackcheck.readers.elf import EM_CUDA, ElfError, ElfFile
    from stackcheck.readers.fatbin import cubin_info, scan_fatbins

    entry: dict[str, Any] = {"path": rel, "sass": [], "ptx": [], "bytes_read": 0, "compressed_entries": 0}
    elf: ElfFile | None = None
    try:
        elf = ElfFile(path, view)
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
                entry["relocatable"] = scan.relocatable  # device-link inputs, not loaded at run time
            entry["compressed_entries"] = scan.compressed_entries
            entry["entries"] = len(scan.entries)
            entry["containers"] = scan.containers
            if scan.warnings:
                entry["warnings"] = scan.warnings[:5]
    except ElfError as exc:
        entry["error"] = str(exc)
    finally:
        if elf is not None:
            entry["bytes_read"] = elf.bytes_read
            elf.close()
    return entry


def scan_package_binaries(
    name: str,
    location: str | Path,
    files_glob: str | Iterable[str] | None = None,
    *,
    deadline: float | None = None,
    view: FileView | None = None,
    kept: Kept | None = None,
) -> dict[str, Any]:
    """Scan one package's binaries. `files_glob` defaults to PACKAGE_GLOBS[name]; `location` is a box path
    seen through `view` (this host by default). With `kept` (this host's files only: stackcheck.readers.kept), a
    file whose stamp is the one its answer was kept under is not read again, and a file read is kept.

    Returns {"files": [{"path", "sass", "ptx", "bytes_read", "compressed_entries", "error"?}], "sass",
    "ptx", "bytes_read", "files_scanned", "duration_ms"} and "truncated" (a reason) when `deadline`
    (a time.monotonic() value) passed before every file was read.
    """
    t0 = time.monotonic()
    fs = view if view is not None else HostView()
    root = str(location)
    globs = files_glob if files_glob is not None else PACKAGE_GLOBS.get(name, ())
    files: list[dict[str, Any]] = []
    out: dict[str, Any] = {"files": files, "sass": [], "ptx": [], "bytes_read": 0, "files_scanned": 0}
    try:
        paths = _expand(root, globs, fs)
    except GlobLimit as exc:
        out["truncated"] = str(exc)
        paths = []
    if len(paths) > MAX_FILES_PER_PACKAGE:
        out["truncated"] = f"{len(paths)} files, only the first {MAX_FILES_PER_PACKAGE} read"
        paths = paths[:MAX_FILES_PER_PACKAGE]
    sass: set[str] = set()
    ptx: set[str] = set()
    total = 0
    for i, p in enumerate(paths):
        if deadline is not None and time.monotonic() > deadline:
            out["truncated"] = f"time budget spent after {i} of {len(paths)} files"
            break
        rel = posixpath.relpath(p, root) if p.startswith(root.rstrip("/") + "/") else p
        if kept is None:
            entry = scan_file(p, rel, fs)
        else:
            entry = _scan_kept(p, rel, fs, kept)
        out["files_scanned"] = i + 1
        if entry is None:
            # a host library without GPU code: only its headers were read (counted nowhere else)
            continue
        files.append(entry)
        total += int(entry["bytes_read"])
        sass.update(entry["sass"])
        ptx.update(entry["ptx"])
    out["sass"], out["ptx"] = sort_targets(sass), sort_targets(ptx)
    out["bytes_read"] = total
    out["duration_ms"] = round((time.monotonic() - t0) * 1000.0, 3)
    return out


def _scan_kept(path: str, rel: str, view: FileView, kept: Kept) -> dict[str, Any] | None:
    """scan_file's answer, kept: taken from `kept` when the file's stamp (a stat before any read) is the one it was
    kept under, else read and kept (an answer with an error is not kept: the file is read again next time)."""
    from stackcheck.readers.kept import file_stamp

    stamp = file_stamp(path)
    got = kept.get(path, stamp)
    if got is None or type(got) is dict:  # (anything else in the document is not an answer: the file is read)
        return None if got is None else {**got, "path": rel}
    entry = scan_file(path, rel, view)
    if entry is None or "error" not in entry:
        kept.put(path, stamp, entry)
    return entry


#: the modules whose code makes a file's kept answer (readers.kept adds itself), and the data they read: the
#: shipped architectures.json names the targets (facts.archs.parse_target); elferror.py holds the ELF machine numbers
_KEPT_READERS = (
    "readers/binaries.py", "readers/elf.py", "readers/elferror.py", "readers/fatbin.py", "facts/archs.py", "record.py"
)  # fmt: skip


def kept_binaries(cache_dir: str | None = None) -> Kept | None:
    """The answers probe_binaries keeps between runs (stackcheck.readers.kept), or None: the caches off, or the
    manifests not shipped as files."""
    import os

    from stackcheck.knowledge.package_data import shipped_files
    from stackcheck.readers.kept import Kept, directory

    where = directory(cache_dir)
    shipped = shipped_files(["architectures.json"])
    if where is None or not shipped:
        return None
    base = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return Kept("binaries", where, [*(os.path.join(base, m) for m in _KEPT_READERS), shipped["architectures.json"][1]])


def probe_binaries(
    facts: Mapping[str, Any],
    budget_s: float = DEFAULT_BUDGET_S,
    globs: Mapping[str, tuple[str, ...]] = PACKAGE_GLOBS,
    view: FileView | None = None,
    kept: Kept | None = None,
) -> dict[str, Any]:
    """The value of facts["binaries"]: {package: scan result} for every installed known package.

    A package without a location gets {"skipped": reason}; once `budget_s` is spent the remaining
    packages get {"skipped": "time budget ..."} and a package cut short carries "truncated". `kept`: the answers
    kept between runs (kept_binaries), used for this host's files only and saved at the end.
    """
    t0 = time.monotonic()
    deadline = t0 + budget_s
    packages = facts.get("packages") or {}
    out: dict[str, Any] = {}
    for name, patterns in globs.items():
        pkg = packages.get(name)
        if not isinstance(pkg, Mapping) or not pkg.get("installed"):
            continue
        loc = pkg.get("location")
        if not loc:
            out[name] = {"skipped": "no install location in the package facts"}
            continue
        if time.monotonic() > deadline:
            out[name] = {"skipped": f"time budget of {budget_s:g} s spent before this package"}
            continue
        fs = view if view is not None else HostView()
        if not is_dir(fs, str(loc)):
            out[name] = {"skipped": f"install location {loc} is not a directory"}
            continue
        host_kept = kept if kept is not None and is_host(fs) else None
        out[name] = scan_package_binaries(name, loc, patterns, deadline=deadline, view=fs, kept=host_kept)
        extra = pkg.get("extension_dir")
        if name in EXTENSION_DIR_GLOBS and isinstance(extra, str) and extra and extra != loc and is_dir(fs, extra):
            more = scan_package_binaries(
                name, extra, EXTENSION_DIR_GLOBS[name], deadline=deadline, view=fs, kept=host_kept
            )
            _merge_scan(out[name], more, extra)
    if kept is not None:
        kept.save()
    return out


def _merge_scan(into: dict[str, Any], more: Mapping[str, Any], where: str) -> None:
    """Add a second directory's scan (an editable install's project directory) to a package's result: its files
    under their full path, its targets, bytes and counts; a truncation reason carried over."""
    for entry in more.get("files") or []:
        into["files"].append({**entry, "path": posixpath.join(where, str(entry.get("path")))})
    into["sass"] = sort_targets({*into.get("sass", []), *(more.get("sass") or [])})
    into["ptx"] = sort_targets({*into.get("ptx", []), *(more.get("ptx") or [])})
    for key in ("bytes_read", "files_scanned"):
        into[key] = int(into.get(key) or 0) + int(more.get(key) or 0)
    into["duration_ms"] = round(float(into.get("duration_ms") or 0) + float(more.get("duration_ms") or 0), 3)
    if "truncated" in more and "truncated" not in into:
        into["truncated"] = f"{where}: {more['truncated']}"


def _cc_tuple(cc: str | tuple[int, int]) -> tuple[int, int] | None:
    if isinstance(cc, tuple):
        return cc
    major, minor = (whole_number(p) for p in cc.strip().partition(".")[::2])
    if major is None or minor is None:
        return None
    return major, minor


def binary_coverage(binaries_for_pkg: Mapping[str, Any], cc: str | tuple[int, int]) -> dict[str, Any]:
    """{"coverage": "sass"|"ptx"|"none", "via": [target names serving cc]} for one package on one GPU.

    `cc` is "9.0" or (9, 0). A package result that was skipped or read nothing gives "none" with no via
    and a "reason"; callers should not read that as a finding without the reason.
    """
    cct = _cc_tuple(cc)
    names = list(binaries_for_pkg.get("sass") or []) + list(binaries_for_pkg.get("ptx") or [])
    targets = [t for t in (archs.parse_target(n) for n in names) if t is not None]
    if cct is None:
        return {"coverage": "none", "via": [], "reason": f"compute capability {cc!r} not understood"}
    result: dict[str, Any] = {"coverage": archs.coverage(targets, cct), "via": archs.covering(targets, cct)}
    if "skipped" in binaries_for_pkg:
        result["reason"] = f"binaries not read: {binaries_for_pkg['skipped']}"
    elif not targets:
        result["reason"] = "no GPU code found in the package's binaries"
    return result
