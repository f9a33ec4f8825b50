"""Static shared-library resolution, following the glibc dynamic loader's search order for ELF objects.

For a DT_NEEDED name without a slash the loader tries, in order:

1. the object's DT_RPATH, only when the object has no DT_RUNPATH (the loader also walks the RPATHs of
   the objects that loaded it, up to the executable; simplified here to the object's own RPATH);
2. LD_LIBRARY_PATH (ignored in secure mode, which is not modelled), read as glibc reads it (readers/ldpath.py
   ld_library_path: ':' and ';', an empty or relative element from the server's working directory where known);
   a library not found before an element that cannot be placed there (no working directory known, or $ORIGIN,
   which the loader expands against the executable, not the object) is unknown, never found past it nor missing;
3. the object's DT_RUNPATH;
4. the ld.so cache (/etc/ld.so.cache, read here in its "glibc-ld.so.cache1.1" format, else `ldconfig -p`);
5. the default directories (multiarch /lib/<triplet>, /usr/lib/<triplet>, then /lib64 /usr/lib64 /lib /usr/lib).

A library whose soname is already loaded is reused whatever the paths say; `probe_libs()` models that for
the kernel packages, whose CUDA libraries are the ones torch loaded first. $ORIGIN, $LIB and $PLATFORM
are expanded. torch links with DT_RPATH (not RUNPATH), so its bundled nvidia-* wheels win over
LD_LIBRARY_PATH; objects with RUNPATH lose to LD_LIBRARY_PATH.

The pure functions take the environment as a mapping: nothing here reads os.environ.
"""

from __future__ import annotations

import functools
import os
import posixpath
import re
import stat
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping

from stackcheck.facts.model import KERNEL_MODULE, KERNEL_PACKAGES
from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple
from stackcheck.paths import path_text
from stackcheck.readers.elferror import EM_AARCH64, EM_X86_64, ElfError
from stackcheck.readers.fsview import FileView, GlobLimit, HostView, glob, is_dir, is_file, is_host, kind_of

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from stackcheck.readers.elf import DynamicSymbols, ElfFile
    from stackcheck.readers.kept import Kept

LD_CACHE_PATH = "/etc/ld.so.cache"
_NEW_MAGIC = b"glibc-ld.so.cache1.1"
_OLD_MAGIC = b"ld.so-1.7.0"
_NEW_HEADER = "<20sIIB3xI12x"  # magic+version, nlibs, len_strings, flags, extension offset
_NEW_ENTRY = "<iIIIQ"  # flags, key, value, osversion, hwcap
_OLD_ENTRY_SIZE = 12

FLAG_ELF_LIBC6 = 0x0003
FLAG_TYPE_MASK = 0x00FF
FLAG_REQUIRED_MASK = 0xFF00
FLAG_X8664_LIB64 = 0x0300
FLAG_AARCH64_LIB64 = 0x0A00
_ARCH_FLAG = {EM_X86_64: FLAG_X8664_LIB64, EM_AARCH64: FLAG_AARCH64_LIB64}
_TRIPLET = {EM_X86_64: "x86_64-linux-gnu", EM_AARCH64: "aarch64-linux-gnu"}
_PLATFORM = {EM_X86_64: "x86_64", EM_AARCH64: "aarch64"}

#: The CUDA libraries whose resolution is reported (matched against DT_NEEDED names).
CUDA_LIBS = re.compile(r"^lib(cudart|nvrtc|cudnn|cublas|cublasLt|nccl)\.so(\.\d+)*$")

LDCONFIG_TIMEOUT_S = 5.0


class LdCacheError(Exception):
    """The ld.so cache file cannot be parsed."""


class CacheEntry(NamedTuple):
    soname: str
    path: str
    flags: int


def parse_ld_so_cache(data: bytes, origin: str = LD_CACHE_PATH) -> list[CacheEntry]:
    """Entries of an ld.so cache in file order (the loader takes the first match for its architecture)."""
    import struct  # (here: a run that takes the entries kept between runs parses none)

    header, entry = struct.Struct(_NEW_HEADER), struct.Struct(_NEW_ENTRY)
    base = 0
    if data.startswith(_OLD_MAGIC):
        if len(data) < 16:
            raise LdCacheError(f"{origin}: truncated old-format header")
        (nlibs,) = struct.unpack_from("<I", data, 12)
        base = 16 + nlibs * _OLD_ENTRY_SIZE
        base = (base + 7) & ~7  # the new-format table follows, aligned like its 64-bit fields
        if not data.startswith(_NEW_MAGIC, base):
            raise LdCacheError(f"{origin}: old-format cache without a new-format table (not supported)")
    if not data.startswith(_NEW_MAGIC, base):
        raise LdCacheError(f"{origin}: not an ld.so cache (magic {data[:20]!r})")
    if len(data) < base + header.size:
        raise LdCacheError(f"{origin}: truncated header")
    _, nlibs, _, _, _ = header.unpack_from(data, base)
    first = base + header.size
    if first + nlibs * entry.size > len(data):
        raise LdCacheError(f"{origin}: {nlibs} entries do not fit in {len(data)} bytes")
    table = memoryview(data)[first : first + nlibs * entry.size]
    # string offsets are relative to the start of the new-format header
    return [
        CacheEntry(_cstr(data, base + key), _cstr(data, base + value), flags)
        for flags, key, value, _, _ in entry.iter_unpack(table)
    ]


def _cstr(data: bytes, off: int) -> str:
    if off >= len(data):
        return ""
    end = data.find(b"\0", off)
    return data[off : end if end >= 0 else len(data)].decode("utf-8", "replace")


_LDCONFIG_LINE = lazy(r"^\s*(\S+)\s+\(([^)]*)\)\s+=>\s+(\S.*)$")  # (only where /etc/ld.so.cache is not read)


def parse_ldconfig_p(text: str) -> list[CacheEntry]:
    """Entries from `ldconfig -p` output ("libz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1")."""
    out = []
    for line in text.splitlines():
        m = _LDCONFIG_LINE.match(line)
        if not m:
            continue
        desc = m.group(2)
        flags = FLAG_ELF_LIBC6 if desc.startswith("libc6") else 0
        if "x86-64" in desc:
            flags |= FLAG_X8664_LIB64
        elif "AArch64" in desc:
            flags |= FLAG_AARCH64_LIB64
        out.append(CacheEntry(m.group(1), m.group(3).strip(), flags))
    return out


#: a real ld.so.cache is tens to hundreds of kilobytes
LD_CACHE_CAP = 64 << 20


def load_ld_so_cache(
    path: str | os.PathLike[str] = LD_CACHE_PATH, view: FileView | None = None, kept: Kept | None = None
) -> tuple[list[CacheEntry], str]:
    """The cache entries and where they came from ("file", "ldconfig -p" or "unavailable: reason").

    Through a view other than this host's (a root directory, an image) the box's own cache file is read
    and `ldconfig -p` (which would describe this host) is not run. `kept`: this host's file's entries as an
    earlier run parsed them, taken when the file's stamp is the same (stackcheck.readers.kept)."""
    name = path_text(path)  # as str(pathlib.Path(path)) names it
    try:
        if view is not None and not is_host(view):
            data = view.read_bytes(name, LD_CACHE_CAP + 1)
            if len(data) > LD_CACHE_CAP:
                raise LdCacheError(f"{name}: larger than {LD_CACHE_CAP} bytes")
            return parse_ld_so_cache(data, name), "file"
        stamp = None
        if kept is not None:
            from stackcheck.readers.kept import file_stamp

            stamp = file_stamp(name)
            got = kept.get("ld.so.cache\0" + name, stamp)
            if type(got) is list and len(got) == 3 and _strs(got[0]) and _strs(got[1]) and _ints(got[2]):
                sonames, paths, flags = got
                if len(sonames) == len(paths) == len(flags):
                    return list(map(CacheEntry, sonames, paths, flags)), "file"
        with open(name, "rb") as fh:
            data = fh.read()
        entries = parse_ld_so_cache(data, name)
        if kept is not None:
            # (as three columns: a row per entry costs ~5x more to check when it is taken)
            kept.put("ld.so.cache\0" + name, stamp, [[e.soname for e in entries], [e.path for e in entries],
                                                     [e.flags for e in entries]])  # fmt: skip
        return entries, "file"
    except (OSError, LdCacheError) as exc:
        first = str(exc)
    if view is not None and not is_host(view):
        return [], f"unavailable: {first}"
    import subprocess  # (the fallback only: issue 21, --deep reads the cache file and runs no tool)

    for exe in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            done = subprocess.run([exe, "-p"], capture_output=True, text=True, timeout=LDCONFIG_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if done.returncode == 0:
            return parse_ldconfig_p(done.stdout), "ldconfig -p"
    return [], f"unavailable: {first}; ldconfig -p failed"


# -- search order -------------------------------------------------------------------------------------


def default_dirs(machine: int = EM_X86_64) -> list[str]:
    triplet = _TRIPLET.get(machine)
    dirs = [f"/lib/{triplet}", f"/usr/lib/{triplet}"] if triplet else []
    return [*dirs, "/lib64", "/usr/lib64", "/lib", "/usr/lib"]


def expand_dirs(value: str | None, origin_dir: str, machine: int = EM_X86_64) -> list[str]:
    """Split a colon-separated path list, expanding $ORIGIN, $LIB and $PLATFORM (also ${...})."""
    if not value:
        return []
    return list(_expand_dirs(value, origin_dir, machine))


@functools.lru_cache(maxsize=512)
def _expand_dirs(value: str, origin_dir: str, machine: int) -> tuple[str, ...]:
    """expand_dirs, kept per (value, origin, machine): a probe expands torch's RPATH for each library it needs."""
    lib = "lib64" if machine in _ARCH_FLAG else "lib"
    subst = {"ORIGIN": origin_dir, "LIB": lib, "PLATFORM": _PLATFORM.get(machine, "x86_64")}
    out = []
    for raw in value.split(":"):
        if not raw:
            continue  # an empty element means the working directory; not modelled

        def rep(m: re.Match[str]) -> str:
            name = m.group(1) or m.group(2)
            return subst.get(name, m.group(0))

        out.append(os.path.normpath(re.sub(r"\$\{(\w+)\}|\$(\w+)", rep, raw)))
    return tuple(out)


class ObjectInfo(NamedTuple):
    path: str
    needed: list[str]
    rpath: str | None
    runpath: str | None
    machine: int


def read_object(path: str | Path, view: FileView | None = None, files: ElfAnswers | None = None) -> ObjectInfo:
    """DT_NEEDED, DT_RPATH and DT_RUNPATH of one ELF object (raises ElfError); `files`: the probe's answers."""
    own = files is None
    answers = ElfAnswers(view) if files is None else files
    try:
        elf = answers.of(str(path))
        needed, _, rpath, runpath = elf.dynamic()
        return ObjectInfo(str(path), needed, rpath, runpath, elf.machine())
    finally:
        if own:
            answers.close()


def _compatible(path: str, machine: int, view: FileView | None = None, files: ElfAnswers | None = None) -> bool:
    own = files is None
    answers = ElfAnswers(view) if files is None else files
    try:
        return answers.of(path).machine() == machine
    except ElfError:
        return False
    finally:
        if own:
            answers.close()


def loader_stop(path: str, view: FileView | None = None) -> str | None:
    """The error with which glibc's loader ends the whole load at `path`, a place of its search for a library, or None
    where it goes on to the next place (nothing there, a file it may not open, an ELF object of another class or
    machine) or where the copy is one it may load. glibc opens each place and reads its ELF header before it judges the
    file (elf/dl-load.c, open_path -> open_verify): a directory opens and its read fails, a file shorter than an ELF
    header or without the ELF magic is refused, and each of these is an error of the dlopen, not a reason to look
    further: a directory or an empty file put in the search path (a bind mount of a file missing on the host leaves a
    directory in its place) hides every later copy."""
    if view is None or is_host(view):  # (this machine: one os.stat, as is_file's own, not the view's lookup)
        try:
            mode = os.stat(path).st_mode
        except (OSError, ValueError):
            return None
        kind = "dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None
    else:
        kind = kind_of(view, path)
    if kind == "dir":
        return "cannot read file data: Is a directory"
    if kind != "file":
        return None
    fs = view if view is not None else HostView()
    try:
        head = fs.read_bytes(path, _EHDR_BYTES)
    except (OSError, ValueError):
        return None  # (EACCES: the search goes on)
    if len(head) < _EHDR_BYTES:
        return "file too short"
    if head[:4] != b"\x7fELF":
        return "invalid ELF header"
    return None


_EHDR_BYTES = 64  # an ELF64 header: glibc refuses a file shorter than its own class's header as "file too short"


def _view_is_file(view: FileView) -> Callable[[str], bool]:
    return lambda path: is_file(view, path)


def _view_compatible(view: FileView | None, files: ElfAnswers | None = None) -> Callable[[str, int], bool]:
    return lambda path, machine: _compatible(path, machine, view, files)


#: the `via` of the LD_LIBRARY_PATH element where the search stops being known (ldpath.ld_library_path's unplaced
#: element: relative or empty with the server's working directory not known, or naming $ORIGIN / $LIB / $PLATFORM,
#: which the loader expands against the executable, not the object): a library not found before it is unknown
UNPLACED = "LD_LIBRARY_PATH, not placed"


def search_path(obj: ObjectInfo, env: Mapping[str, str], cwd: str | None = None) -> list[tuple[str, str]]:
    """(directory, via) in the order the loader tries them, the cache excepted (it comes before defaults).
    LD_LIBRARY_PATH is read as glibc reads it (readers/ldpath.py ld_library_path: ':' and ';', an empty or relative
    element from `cwd`, the server's working directory where known); its first element not placed ends the steps as
    (element, UNPLACED): the search is not known past it."""
    from stackcheck.readers.ldpath import ld_library_path

    origin = os.path.dirname(os.path.abspath(obj.path))
    steps: list[tuple[str, str]] = []
    if obj.rpath and not obj.runpath:
        steps += [(d, "rpath") for d in expand_dirs(obj.rpath, origin, obj.machine)]
    placed, unplaced = ld_library_path(env.get("LD_LIBRARY_PATH"), cwd)
    steps += [(d, "LD_LIBRARY_PATH") for d in placed]
    if unplaced is not None:
        return [*steps, (unplaced, UNPLACED)]
    steps += [(d, "runpath") for d in expand_dirs(obj.runpath, origin, obj.machine)]
    return steps


def _search_places(
    obj: ObjectInfo,
    needed: str,
    env: Mapping[str, str],
    cache: Iterable[CacheEntry],
    dirs_default: list[str] | None = None,
    steps: list[tuple[str, str]] | None = None,
) -> Iterator[tuple[str, str]]:
    """(path, via) of every place the loader tries for `needed` (no slash in it), in its order, one place at a time
    (a search that stops at its winner builds no path after it): the object's RPATH (without a RUNPATH),
    LD_LIBRARY_PATH, its RUNPATH, the ld.so cache (entries of this machine), the default directories. `steps` is
    search_path(obj, env) when the caller has it already."""
    steps = search_path(obj, env) if steps is None else steps
    for d, via in steps:
        yield (d, via) if via == UNPLACED else (os.path.join(d, needed), via)
    arch_flag = _ARCH_FLAG.get(obj.machine)
    for e in cache:
        if e.soname != needed:
            continue
        if arch_flag is not None and (e.flags & FLAG_REQUIRED_MASK) not in (0, arch_flag):
            continue
        yield e.path, "ld.so.cache"
    for d in dirs_default if dirs_default is not None else default_dirs(obj.machine):
        yield os.path.join(d, needed), "default"


def _found(
    obj: ObjectInfo,
    needed: str,
    env: Mapping[str, str],
    cache: Iterable[CacheEntry],
    is_file: Callable[[str], bool],
    compatible: Callable[[str, int], bool],
    dirs_default: list[str] | None = None,
    steps: list[tuple[str, str]] | None = None,
    stop: Callable[[str], str | None] | None = None,
) -> Iterator[tuple[str, str, bool | None, str | None]]:
    """The one reading of which copy the loader takes for `needed` (no slash in it): each file found along
    _search_places, once, in its order, as (path, via, winner, stops): winner True for the first one built for the
    object's machine, False for a file before it that is not, None for the files after it (their machine not read).
    `stop` (loader_stop), when given, is asked of each place before the winner that is not a copy that loads; where
    it answers, the load fails there: that place comes with its error as `stops` (winner None for a place that is no
    file: a directory, which is no candidate; False for a file) and every later file as after a winner. A caller that
    wants the winner alone stops at it (loader_winner); resolve_needed reads them all. The LD_LIBRARY_PATH element
    where the search stops being known (via UNPLACED, reached before a winner) comes as (element, UNPLACED, None,
    the reason) and every later file as after a winner: where the loader finds `needed` is not known."""
    from stackcheck.readers.ldpath import unplaced_reason

    seen: set[str] = set()
    done = False  # the winner was found, or the load failed at a place
    for path, via in _search_places(obj, needed, env, cache, dirs_default, steps):
        if via == UNPLACED:
            if not done:
                done = True
                yield path, via, None, unplaced_reason(path)
            continue
        if path in seen:
            continue
        if not is_file(path):
            why = stop(path) if stop is not None and not done else None
            if why is not None:
                done = True
                yield path, via, None, why
            continue
        seen.add(path)
        if done:
            yield path, via, None, None
        elif compatible(path, obj.machine):
            done = True
            yield path, via, True, None
        else:
            why = stop(path) if stop is not None else None
            done = why is not None
            yield path, via, False, why


def _beside(obj: ObjectInfo, needed: str) -> str:
    """Where the loader looks for a DT_NEEDED with a slash in it: that path, relative to the object's directory."""
    return os.path.join(os.path.dirname(os.path.abspath(obj.path)), needed)


def loader_winner(
    obj: ObjectInfo,
    needed: str,
    env: Mapping[str, str],
    cache: Iterable[CacheEntry],
    is_file: Callable[[str], bool] = os.path.isfile,
    compatible: Callable[[str, int], bool] = _compatible,
    steps: list[tuple[str, str]] | None = None,
    stop: Callable[[str], str | None] | None = None,
) -> tuple[str, str] | str | None:
    """resolve_needed's (winner, via), or None when nothing is found: the search (_found) stops at the winner (no
    candidates after it, no other copies, no built_for), which is all the second hop asks. `steps`: as in
    _search_places. `stop` (loader_stop), when given, is asked of each place before the winner that is not a copy
    that loads; where it answers, that is the answer: "PATH (VIA): ERROR", the load fails there."""
    if "/" in needed:
        p = _beside(obj, needed)
        return (p, "path") if is_file(p) else None
    for path, via, won, why in _found(obj, needed, env, cache, is_file, compatible, None, steps, stop):
        if won:
            return path, via
        if why is not None:
            return f"{path} ({via}): {why}"
    return None


def resolve_needed(
    obj: ObjectInfo,
    needed: str,
    env: Mapping[str, str],
    cache: list[CacheEntry],
    dirs_default: list[str] | None = None,
    extra_dirs: Iterable[str] = (),
    is_file: Callable[[str], bool] = os.path.isfile,
    compatible: Callable[[str, int], bool] = _compatible,
    stop: Callable[[str], str | None] | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """How the loader would resolve `needed` for `obj`. `stop` (loader_stop), when given, is asked of each place
    before the winner that is not a copy that loads: where it answers, the load fails there ("winner" None,
    "stopped": {"path", "via", "error"}), whatever copies come later. `cwd`: the server's working directory where
    known, from which LD_LIBRARY_PATH's relative and empty elements are searched (search_path); where the search
    reaches an element not placed before a winner, "winner" is None and "unknown" says why (not found nor missing).

    Returns {"needed", "winner": path|None, "via": rpath|LD_LIBRARY_PATH|runpath|ld.so.cache|default|path,
    "candidates": [{"path", "via"}] in search order (the first compatible one is the winner),
    "other_copies": [paths of the same file name elsewhere (extra_dirs, cache, other search steps)],
    "built_for": the first copy in the object's own RPATH/RUNPATH or None}.
    """
    if "/" in needed:
        p = _beside(obj, needed)
        ok = is_file(p)
        return {
            "needed": needed,
            "winner": p if ok else None,
            "via": "path",
            "candidates": [],
            "other_copies": [],
            "built_for": None,
        }
    steps = search_path(obj, env, cwd)
    # a path is asked again for built_for and the extra copies: each stat and ELF header read once here
    files: dict[str, bool] = {}
    machines: dict[str, bool] = {}

    def known_file(path: str) -> bool:
        got = files.get(path)
        if got is None:
            got = files[path] = is_file(path)
        return got

    def known_compatible(path: str, machine: int) -> bool:
        got = machines.get(path)
        if got is None:
            got = machines[path] = compatible(path, machine)
        return got

    candidates: list[dict[str, str]] = []
    winner: str | None = None
    via: str | None = None
    stopped: dict[str, str] | None = None
    unknown: str | None = None
    for path, step, won, why in _found(
        obj, needed, env, cache, known_file, known_compatible, dirs_default, steps, stop
    ):
        if step == UNPLACED:
            unknown = why
            continue
        if why is not None:
            stopped = {"path": path, "via": step, "error": why}
            if won is None:  # a place that is no file (a directory): no candidate
                continue
        cand = {"path": path, "via": step}
        if won:
            winner, via = path, step
        elif why is not None:
            cand["stops"] = why
        elif won is False:
            cand["skipped"] = "not an ELF object for this machine"
        candidates.append(cand)
    own_dirs = [d for d, step in steps if step in ("rpath", "runpath")]
    own = [os.path.join(d, needed) for d in own_dirs]
    built_for = next((p for p in own if known_file(p) and known_compatible(p, obj.machine)), None)
    others = [c["path"] for c in candidates if c["path"] != winner]
    seen = {c["path"] for c in candidates}
    for d in extra_dirs:
        p = os.path.join(d, needed)
        if p not in seen and p not in others and known_file(p):
            others.append(p)
    out: dict[str, Any] = {
        "needed": needed,
        "winner": winner,
        "via": via,
        "candidates": candidates,
        "other_copies": others,
        "built_for": built_for,
    }
    if stopped is not None:
        out["stopped"] = stopped
    if unknown is not None:
        out["unknown"] = unknown
    return out


def _same_file(a: str, b: str, view: FileView | None = None) -> bool:
    if view is not None and not is_host(view):
        try:
            return view.realpath(a) == view.realpath(b)
        except (OSError, ValueError):
            return a == b
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def warnings_for(res: Mapping[str, Any], obj_rel: str, view: FileView | None = None) -> list[str]:
    """Warnings for one resolution: not found, or a winner other than the copy the object was built for."""
    out = []
    stopped = res.get("stopped")
    if res["winner"] is None and res.get("unknown"):
        pass  # (not known where the loader finds it: resolve_object lists it under "unknown", never a warning)
    elif res["winner"] is None and isinstance(stopped, Mapping):
        out.append(
            f"{obj_rel}: the loader's search for {res['needed']} ends at {stopped.get('path')} "
            f"({stopped.get('via')}): '{stopped.get('error')}', and no later copy is tried: the load fails"
        )
    elif res["winner"] is None:
        out.append(f"{obj_rel}: {res['needed']} is not found on the loader's search path")
    elif res.get("built_for") and not _same_file(res["winner"], res["built_for"], view):
        out.append(
            f"{obj_rel}: {res['needed']} resolves to {res['winner']} ({res['via']}), not to "
            f"{res['built_for']} that its own {'RUNPATH' if res.get('runpath') else 'RPATH'} points at"
        )
    return out


# -- per package --------------------------------------------------------------------------------------

#: Objects whose CUDA library resolution is reported, per package (globs relative to the location).
LIB_OBJECTS: dict[str, tuple[str, ...]] = {
    "torch": ("torch/lib/libtorch_cuda.so", "torch/lib/libc10_cuda.so"),
    **dict.fromkeys(KERNEL_PACKAGES, (f"{KERNEL_MODULE}/**/*.so",)),
    "flashinfer-python": ("flashinfer/**/*.so",),
    "flashinfer-jit-cache": ("flashinfer_jit_cache/**/*.so",),
    "vllm": ("vllm/**/*.so",),
}
MAX_OBJECTS_PER_PACKAGE = 50


def nvidia_wheel_dirs(location: str, view: FileView | None = None) -> list[str]:
    """site-packages/nvidia/*/lib (and nvidia/cu13/lib) directories: where the nvidia-* wheels put libraries."""
    fs = view if view is not None else HostView()
    base = posixpath.join(location, "nvidia")
    if not is_dir(fs, base):
        return []
    try:
        return sorted(p for p in glob(fs, base, "*/lib") if is_dir(fs, p))
    except GlobLimit:
        return []


# -- symbol versions ------------------------------------------------------------------------------------
# glibc maps every needed library, then checks versions (elf/dl-version.c, _dl_check_map_versions): for each
# DT_VERNEED entry of an object, every non-weak version name it lists must be one of the DT_VERDEF names of
# the library loaded for that file (match_symbol), else the load fails with "version `X' not found (required
# by Y)". A library without DT_VERDEF passes (the loader only says "no version information available" when
# verbose), and so does a missing weak version.

#: the version definitions of a library, by path (a library is read once per probe however many objects need it)
VersionDefs = dict[str, "list[str] | str | None"]


def _nonweak_needs(elf: ElfFile, syms: DynamicSymbols | None = None) -> dict[str, list[str]]:
    """The non-weak versions an object needs, per needed file name (raises ElfError); `syms`, the file's
    DynamicSymbols when the caller has them (its dynamic table is then not read again)."""
    out: dict[str, list[str]] = {}
    if syms is None:
        from stackcheck.readers.elf import DynamicSymbols

        syms = DynamicSymbols(elf)
    for need in syms.version_needs():
        if not need.weak:
            out.setdefault(need.file, []).append(need.name)
    return out


def version_defs(
    path: str, view: FileView | None = None, cache: VersionDefs | None = None, files: ElfAnswers | None = None
) -> list[str] | str | None:
    """The version names a library defines; None when it defines none; an error message when unreadable."""
    if cache is not None and path in cache:
        return cache[path]
    got: list[str] | str | None
    own = files is None
    answers = ElfAnswers(view) if files is None else files
    try:
        got = answers.of(path).defs()
    except ElfError as exc:
        got = str(exc)
    finally:
        if own:
            answers.close()
    if cache is not None:
        cache[path] = got
    return got


class _Answers:
    """What the library probe asks of one ELF file (its header's machine, its dynamic section read through the
    section headers, its dynamic symbols' search names, version needs and definitions, the symbols it takes from
    given libraries, whether it defines a symbol), each answered once a run: the file is opened on the first question
    not answered yet and kept open for the next (release() closes it; a later question opens it again). `known` holds
    the answers, those kept from an earlier run under the file's stamp among them (stackcheck.readers.kept); an
    ElfError is raised as reading gives it and is never an answer, and a file that raised one is not kept."""

    __slots__ = ("added", "elf", "failed", "kept", "known", "path", "stamp", "syms", "view")

    def __init__(self, path: str, view: FileView | None, kept: dict[str, Any], stamp: list[int] | None) -> None:
        self.path, self.view, self.stamp = path, view, stamp
        self.kept = kept  # answers from an earlier run, each checked (_answer_shaped) when first asked
        self.known: dict[str, Any] = {}  # answers of this run: read, or kept and checked
        self.elf: ElfFile | None = None
        self.syms: DynamicSymbols | None = None
        self.failed = self.added = False

    def _ask(self, key: str, compute: Callable[[], Any]) -> Any:
        try:
            return self.known[key]
        except KeyError:
            pass
        got = self.kept.pop(key, _ABSENT)
        if got is not _ABSENT and _answer_shaped(key, got):
            self.known[key] = got
            return got
        try:
            value = compute()
        except ElfError:
            self.failed = True
            raise
        self.known[key] = value
        self.added = True
        return value

    def _open(self) -> ElfFile:
        if self.elf is None:
            # (the reader is imported by the first file read: a run whose every answer is kept reads none)
            from stackcheck.readers.elf import ElfFile

            self.elf = ElfFile(self.path, self.view)
        return self.elf

    def _symbols(self) -> DynamicSymbols:
        if self.syms is None:
            from stackcheck.readers.elf import DynamicSymbols

            self.syms = DynamicSymbols(self._open())
        return self.syms

    def release(self) -> None:
        if self.elf is not None:
            self.elf.close()
        self.elf = self.syms = None

    def machine(self) -> int:
        return int(self._ask("machine", lambda: self._open().header.e_machine))

    def dynamic(self) -> tuple[list[str], str | None, str | None, str | None]:
        """ElfFile.dynamic(): (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH) through the section headers."""

        def read() -> list[Any]:
            dyn = self._open().dynamic()
            return [dyn.needed, dyn.soname, dyn.rpath, dyn.runpath]

        needed, soname, rpath, runpath = self._ask("dynamic", read)
        return list(needed), soname, rpath, runpath

    def symbols(self) -> tuple[list[str], str | None, str | None, str | None]:
        """DynamicSymbols' (needed, soname, rpath, runpath), read through PT_DYNAMIC as the loader reads them."""

        def read() -> list[Any]:
            syms = self._symbols()
            return [syms.needed, syms.soname, syms.rpath, syms.runpath]

        needed, soname, rpath, runpath = self._ask("symbols", read)
        return list(needed), soname, rpath, runpath

    def needs(self) -> dict[str, list[str]]:
        got: dict[str, list[str]] = self._ask("needs", lambda: _nonweak_needs(self._open(), self._symbols()))
        return {k: list(v) for k, v in got.items()}

    def defs(self) -> list[str] | None:
        got: list[str] | None = self._ask("defs", lambda: self._symbols().version_defs())
        return None if got is None else list(got)

    def undefined_from(self, files: Collection[str]) -> dict[str, list[tuple[str, str]]]:
        key = "undefined_from\0" + "\0".join(sorted(files))
        got = self._ask(
            key, lambda: {k: [list(p) for p in v] for k, v in self._symbols().undefined_from(files).items()}
        )
        return {k: [(sym, ver) for sym, ver in v] for k, v in got.items()}

    def defines(self, name: str) -> bool:
        return bool(self._ask("defines\0" + name, lambda: self._symbols().defines(name)))


_ABSENT: Any = object()


def _rows(value: Any, types: tuple[type, ...]) -> bool:
    """Whether a kept value is a list of rows of exactly these types (anything else in the user's cache document is
    no answer: the file is read)."""
    return type(value) is list and all(
        type(row) is list and len(row) == len(types) and all(type(v) is t for v, t in zip(row, types, strict=True))
        for row in value
    )


def _strs(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _ints(value: Any) -> bool:
    return type(value) is list and all(type(v) is int for v in value)


def _answer_shaped(key: str, value: Any) -> bool:
    """Whether a kept answer has the shape _Answers gives it (else it is asked of the file again)."""
    if key == "machine":
        return type(value) is int
    if key in ("dynamic", "symbols"):
        return (
            type(value) is list
            and len(value) == 4
            and _strs(value[0])
            and all(v is None or type(v) is str for v in value[1:])
        )
    if key == "needs":
        return type(value) is dict and all(_strs(v) for v in value.values())
    if key == "defs":
        return value is None or _strs(value)
    if key.startswith("undefined_from\0"):
        return type(value) is dict and all(_rows(v, (str, str)) for v in value.values())
    if key.startswith("defines\0"):
        return type(value) is bool
    return False


class ElfAnswers:
    """The probe's _Answers by path (a file reached under two paths is two files here), with `kept` the answers kept
    between runs (this host's files only); close() closes every file and keeps what was learned of each file read
    without an error."""

    def __init__(self, view: FileView | None, kept: Kept | None = None) -> None:
        self.view = view
        self.kept = kept if kept is not None and (view is None or is_host(view)) else None
        self.files: dict[str, _Answers] = {}

    def of(self, path: str) -> _Answers:
        got = self.files.get(path)
        if got is None:
            known: dict[str, Any] = {}
            stamp = None
            if self.kept is not None:
                from stackcheck.readers.kept import file_stamp

                stamp = file_stamp(path)
                value = self.kept.get(path, stamp)
                if type(value) is dict:
                    known = dict(value)
            got = self.files[path] = _Answers(path, self.view, known, stamp)
        return got

    def close(self) -> None:
        for path, answers in self.files.items():
            answers.release()
            if self.kept is not None and answers.added and not answers.failed:
                self.kept.put(path, answers.stamp, {**answers.kept, **answers.known})
        self.files = {}


def check_versions(
    obj_rel: str, res: Mapping[str, Any], needs: Mapping[str, list[str]], defs: list[str] | str | None
) -> dict[str, Any] | None:
    """A version failure of one resolved library (observed, required, source), else None."""
    wanted = needs.get(str(res["needed"])) or []
    if not wanted or res.get("winner") is None or defs is None:
        return None
    if isinstance(defs, str):
        return {"object": obj_rel, "needed": res["needed"], "winner": res["winner"], "error": defs}
    missing = [v for v in wanted if v not in defs]
    if not missing:
        return None
    return {
        "object": obj_rel,
        "needed": res["needed"],
        "winner": res["winner"],
        "via": res.get("via"),
        "missing": missing,
        "defined": defs,
        "source": f"{obj_rel}: its version needs (DT_VERNEED) for {res['needed']}",
    }


def resolve_object(
    path: str | Path,
    rel: str,
    env: Mapping[str, str],
    cache: list[CacheEntry],
    extra_dirs: Iterable[str] = (),
    already_loaded: Mapping[str, Mapping[str, Any]] | None = None,
    wanted: re.Pattern[str] = CUDA_LIBS,
    view: FileView | None = None,
    defs_cache: VersionDefs | None = None,
    infos: dict[str, ObjectInfo] | None = None,
    files: ElfAnswers | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """The CUDA libraries of one object: {"path", "rpath", "runpath", "libs": [...], "warnings": [...],
    "version_failures": [...], "unknown"?: ["OBJECT: LIBRARY: why"]} (a library found that lacks a version the object
    needs from it; a library whose copy is not known: resolve_needed's "unknown", or a soname torch loaded first
    from a copy not known). `infos`, when given, keeps the object's ObjectInfo by path (the second hop reuses it
    instead of reading the file again); `files`, the probe's answers of the files it reads (ElfAnswers); `cwd`, the
    server's working directory where known (search_path)."""
    if files is None:
        answers = ElfAnswers(view)
        try:
            return resolve_object(
                path, rel, env, cache, extra_dirs, already_loaded, wanted, view, defs_cache, infos, answers, cwd
            )
        finally:
            answers.close()
    out: dict[str, Any] = {"path": rel}
    needs: dict[str, list[str]] = {}
    elf = files.of(str(path))
    try:
        needed, _, rpath, runpath = elf.dynamic()
        obj = ObjectInfo(str(path), needed, rpath, runpath, elf.machine())
        if infos is not None:
            infos[str(path)] = obj
        if any(wanted.match(name) for name in needed):  # only an object that needs a CUDA library
            try:
                needs = elf.needs()
            except ElfError as exc:
                out["versions_error"] = str(exc)
    except ElfError as exc:
        out["error"] = str(exc)
        return out
    finally:
        elf.release()
    failures: list[dict[str, Any]] = []
    out.update(rpath=obj.rpath, runpath=obj.runpath)
    extra = list(extra_dirs)
    libs: list[dict[str, Any]] = []
    warns: list[str] = []
    unknown: list[str] = []
    for name in obj.needed:
        if not wanted.match(name):
            continue
        if view is not None:
            res = resolve_needed(
                obj,
                name,
                env,
                cache,
                extra_dirs=extra,
                is_file=_view_is_file(view),
                compatible=_view_compatible(view, files),
                stop=functools.partial(loader_stop, view=view),
                cwd=cwd,
            )
        else:
            res = resolve_needed(
                obj,
                name,
                env,
                cache,
                extra_dirs=extra,
                compatible=_view_compatible(None, files),
                stop=loader_stop,
                cwd=cwd,
            )
        res["runpath"] = obj.runpath is not None
        prior = (already_loaded or {}).get(name)
        if prior is not None and prior.get("unknown"):
            # the soname torch loaded first, from a copy not known: this object reuses that copy
            res = {**res, "own_winner": res["winner"], "own_via": res["via"], "winner": None, "via": None}
            res["unknown"] = f"{prior.get('loaded_by', 'an earlier object')} loads it first: {prior['unknown']}"
        elif prior is not None and prior.get("winner"):
            # the loader reuses a library whose soname is already loaded (torch is imported first)
            res = {
                **res,
                "own_winner": res["winner"],
                "own_via": res["via"],
                "winner": prior["winner"],
                "via": f"already loaded by {prior.get('loaded_by', 'an earlier object')}",
            }
        warns += warnings_for(res, rel, view)
        if res.get("unknown"):
            unknown.append(f"{rel}: {name}: {res['unknown']}")
        res.pop("runpath", None)
        if needs.get(name) and res.get("winner"):
            failure = check_versions(rel, res, needs, version_defs(str(res["winner"]), view, defs_cache, files))
            if failure is not None:
                failures.append(failure)
        libs.append(res)
    out["libs"] = libs
    out["warnings"] = warns
    out["version_failures"] = failures
    if unknown:
        out["unknown"] = unknown
    return out


#: the modules whose code makes a file's kept answers (readers.kept adds itself)
_KEPT_READERS = (
    "readers/libs.py",
    "readers/elf.py",
    "readers/elferror.py",
    "readers/fsview.py",
    "record.py",
    "paths.py",
)


def kept_libs(cache_dir: str | None = None) -> Kept | None:
    """What probe_libs keeps between runs (stackcheck.readers.kept), or None: the caches off."""
    from stackcheck.readers.kept import Kept, directory

    where = directory(cache_dir)
    if where is None:
        return None
    base = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return Kept("libs", where, [os.path.join(base, m) for m in _KEPT_READERS])


def probe_libs(
    facts: Mapping[str, Any],
    env: Mapping[str, str],
    cache: list[CacheEntry] | None = None,
    cache_source: str | None = None,
    view: FileView | None = None,
    kept: Kept | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """{"ld_cache": source, "packages": {pkg: {"objects": [...]}}, "warnings": [...], "version_failures": [...],
    "version_errors": [...], "torch_libraries": {...}, "symbol_failures": [...], "unknown"?: ["PACKAGE: OBJECT:
    LIBRARY: why"]}: an unknown, a library whose copy the loader's search does not tell (LD_LIBRARY_PATH's element
    not placed, search_path: relative or empty with the server's working directory `cwd` not known, or naming a
    dynamic string token) and that nothing found before it; a version failure names the
    package ("package"), the object, the library found, the versions it lacks ("missing") and those it defines;
    a version error, an object or library whose version records could not be read (the check cannot be decided
    there); a symbol failure, a CUDA library torch loads whose own dependency is found without symbols it needs
    (follow_torch_libraries, the second hop).

    torch is resolved first; the kernel packages' CUDA libraries whose soname torch already loaded are
    reported as reused from torch (with their own static resolution kept as own_winner/own_via).
    `env` is the environment of the process that will serve (e.g. facts["system"]["env"] or os.environ).
    `kept`: what earlier runs learned of this host's files (kept_libs), used where a file's stamp is the same and
    saved at the end. `cwd`: the server's working directory where known (gate --cwd, `env -C`).
    """
    fs = view if view is not None else HostView()
    if kept is not None and not is_host(fs):
        kept = None
    files = ElfAnswers(fs, kept)
    try:
        return _probe_libs(facts, env, cache, cache_source, fs, files, kept, cwd)
    finally:
        files.close()
        if kept is not None:
            kept.save()


def _probe_libs(
    facts: Mapping[str, Any],
    env: Mapping[str, str],
    cache: list[CacheEntry] | None,
    cache_source: str | None,
    fs: FileView,
    files: ElfAnswers,
    kept: Kept | None,
    cwd: str | None = None,
) -> dict[str, Any]:
    if cache is None:
        cache, cache_source = load_ld_so_cache(view=fs, kept=kept)
    packages = facts.get("packages") or {}
    extra: list[str] = []
    for pkg in packages.values():
        if isinstance(pkg, Mapping) and pkg.get("location"):
            extra += nvidia_wheel_dirs(str(pkg["location"]), fs)
    for tk in facts.get("cuda_toolkits") or []:
        if isinstance(tk, Mapping) and tk.get("path"):
            extra += [os.path.join(str(tk["path"]), "lib64"), os.path.join(str(tk["path"]), "lib")]
    extra = list(dict.fromkeys(extra))
    loaded: dict[str, dict[str, Any]] = {}
    result: dict[str, Any] = {
        "ld_cache": cache_source or "given",
        "packages": {},
        "warnings": [],
        "version_failures": [],
        "version_errors": [],
        "symbol_failures": [],
    }
    defs_cache: VersionDefs = {}
    infos: dict[str, ObjectInfo] = {}
    for name, patterns in LIB_OBJECTS.items():
        pkg = packages.get(name)
        if not isinstance(pkg, Mapping) or not pkg.get("installed") or not pkg.get("location"):
            continue
        root = str(pkg["location"])
        paths: list[str] = []
        entry: dict[str, Any] = {"objects": []}
        for pat in patterns:
            try:
                paths += [p for p in glob(fs, root, pat) if is_file(fs, p)]
            except GlobLimit as exc:
                entry["truncated"] = str(exc)
        paths = list(dict.fromkeys(paths))
        if len(paths) > MAX_OBJECTS_PER_PACKAGE:
            entry["truncated"] = f"{len(paths)} objects, only the first {MAX_OBJECTS_PER_PACKAGE} read"
            paths = paths[:MAX_OBJECTS_PER_PACKAGE]
        for p in paths:
            rel = posixpath.relpath(p, root)
            obj = resolve_object(
                p,
                rel,
                env,
                cache,
                extra,
                already_loaded=None if name == "torch" else loaded,
                view=fs,
                defs_cache=defs_cache,
                infos=infos if name == "torch" else None,
                files=files,
                cwd=cwd,
            )
            entry["objects"].append(obj)
            result["warnings"] += obj.get("warnings", [])
            if obj.get("unknown"):
                result.setdefault("unknown", []).extend(f"{name}: {u}" for u in obj["unknown"])
            if obj.get("versions_error"):
                result["version_errors"].append(f"{name}: {obj['versions_error']}")
            for failure in obj.get("version_failures", []):
                if "error" in failure:
                    result["version_errors"].append(f"{name}: {failure['error']}")
                else:
                    result["version_failures"].append({"package": name, **failure})
            if name == "torch":
                for lib in obj.get("libs", []):
                    if lib.get("winner"):
                        loaded.setdefault(lib["needed"], {"winner": lib["winner"], "loaded_by": "torch"})
                    elif lib.get("unknown"):
                        loaded.setdefault(lib["needed"], {"unknown": lib["unknown"], "loaded_by": "torch"})
        result["packages"][name] = entry
        if name == "torch" and paths:
            sites = [str(p["location"]) for p in packages.values() if isinstance(p, Mapping) and p.get("location")]
            hop = follow_torch_libraries(paths, root, env, cache, fs, defs_cache, infos, sites, files, cwd)
            result["torch_libraries"] = {k: hop[k] for k in ("preloaded", "libraries")}
            result["symbol_failures"] = hop["symbol_failures"]
            result["version_failures"] += hop["version_failures"]
            result["version_errors"] += [f"torch: {e}" for e in hop["errors"]]
    return result


# -- the second hop: the CUDA libraries torch loads, and what they load ------------------------------------------
# torch's objects need libcusparse, libcufft, libcublas, ... from the nvidia-* wheels (their RPATH); those
# libraries need others in turn (libcusparse needs libnvJitLink.so.12) and find them through their OWN search
# path: a wheel library has DT_RUNPATH ($ORIGIN:$ORIGIN/../../nvjitlink/lib for nvidia-cusparse-cu12 12.3.1.170),
# so LD_LIBRARY_PATH comes first and torch's RPATH plays no part. An older copy first on LD_LIBRARY_PATH (a CUDA
# toolkit's lib64) then wins; if it lacks a symbol the library needs, import torch fails with "undefined symbol:
# __nvJitLinkComplete_12_4, version libnvJitLink.so.12". nvJitLink's version node is the same name in every 12.x
# release, so DT_VERNEED against DT_VERDEF passes: only the symbols, looked up in the library found, decide.
# Python imports torch._C with RTLD_NOW and ctypes loads with RTLD_NOW, so every non-weak undefined symbol is
# bound at load time (glibc elf/dl-lookup.c _dl_lookup_symbol_x: "undefined symbol: X, version V").
#
# The load order is simulated: libtorch_global_deps (libcudart, torch's RPATH), then what torch/__init__.py
# preloads with ctypes, then torch's CUDA objects; a soname loaded once is reused by every later object, and
# each library's own dependencies are resolved when it is loaded.

#: the CUDA libraries whose dependencies are followed one hop further, and the ones looked for there
HOP_LIBS = re.compile(
    r"^lib(cudart|nvrtc|cudnn|cublas|cublasLt|nccl|cusparse|cusparseLt|cufft|curand|cusolver|cufile|nvJitLink)"
    r"\.so(\.\d+)*$"
)
#: torch/__init__.py's preload entries in file order, ("wheel folder", "file glob"): torch 2.6-2.8 call
#: _preload_cuda_deps("nvjitlink", "libnvJitLink.so.*[0-9]") on the success branch of _load_global_deps; later
#: releases list ("nvjitlink", "libnvJitLink.so.*[0-9]") tuples that _preload_cuda_deps() walks. The except
#: branch's dict ("cublas": "libcublas.so.*[0-9]", torch 2.5-2.8) runs only when libtorch_global_deps fails
#: to load and is not matched.
_PRELOAD_ENTRY = lazy(r'\(\s*"(\w+)"\s*,\s*"(lib[\w.+\-]*\.so[^"]*)"')
#: ... and the guard before them: the libcudart mapped must match ("nvidia/cuda_runtime/lib/libcudart.so" in
#: 2.6-2.8, "libcudart.so" later)
_PRELOAD_GUARD = lazy(r'"([\w/.\-]*libcudart\.so)"\s+not\s+in\s+_maps')  # (both: unless kept)
MAX_INIT_BYTES = 1 << 20
MAX_HOP_LIBRARIES = 40


def _preload_entries(init: str, view: FileView, kept: Kept | None) -> tuple[str | None, list[tuple[str, str]]] | None:
    """What torch_preloads reads of torch/__init__.py: the libcudart its guard names (None: no guard) and the preload
    entries (folder, file glob) in the order they are tried; None when the file cannot be read. `kept`: the answer an
    earlier run read of this host's file, taken when the file's stamp is the same (stackcheck.readers.kept)."""
    stamp = None
    key = "torch/__init__.py\0" + init
    if kept is not None:
        from stackcheck.readers.kept import file_stamp

        stamp = file_stamp(init)
        got = kept.get(key, stamp)
        if type(got) is list and len(got) == 2 and type(got[0]) in (str, type(None)) and _rows(got[1], (str, str)):
            return got[0], [(folder, pattern) for folder, pattern in got[1]]
    try:
        text = view.read_bytes(init, MAX_INIT_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    guard = _PRELOAD_GUARD.search(text)
    entries: list[tuple[str, str]] = []
    if guard is not None:
        entries = _PRELOAD_ENTRY.findall(text[guard.end() :] + text[: guard.start()])
    named = guard.group(1) if guard is not None else None
    if kept is not None:
        kept.put(key, stamp, [named, [list(e) for e in entries]])
    return named, entries


def torch_preloads(
    location: str, cudart: str | None, view: FileView, others: Iterable[str] = (), kept: Kept | None = None
) -> list[str]:
    """The paths torch/__init__.py loads with ctypes before torch._C, in order, read from the file (torch 2.6
    and later; pytorch/pytorch#138460): behind its libcudart guard, each preload entry's glob under the
    site-packages' nvidia/<folder>/lib, nvidia/cu<major>/lib (CUDA 13 wheels) and <folder>/lib (torch's site
    directory first, then `others`: the other packages' locations, standing for sys.path). The first entry
    not found stops the list (the call raises, and the caller's `except Exception: pass` swallows it). A file
    without the guard (torch 2.5 and older) or a libcudart that does not match it: no preload. `kept`: this host's
    file as an earlier run read it (_preload_entries)."""
    read = _preload_entries(posixpath.join(location, "torch", "__init__.py"), view, kept)
    if read is None:
        return []
    guard, entries = read
    if guard is None or cudart is None or guard not in cudart:
        return []
    major = re.search(r"libcudart\.so\.(\d+)", cudart)
    out: list[str] = []
    for folder, pattern in entries:
        found: list[str] = []
        for root in dict.fromkeys((location, *others)):  # sys.path's site directories, torch's first
            bases = [posixpath.join(root, "nvidia", folder, "lib")]
            if major:
                bases.append(posixpath.join(root, "nvidia", f"cu{major.group(1)}", "lib"))
            bases.append(posixpath.join(root, folder, "lib"))
            for base in bases:
                try:
                    found += sorted(p for p in glob(view, base, pattern) if is_file(view, p))
                except GlobLimit:
                    continue
            if found:
                break
        if not found:
            break
        out.append(found[0])
    return list(dict.fromkeys(out))


class _Loader:
    """The loader's state while torch is imported: which soname is loaded from where, and each library's own
    dependencies checked when it is loaded (symbols and version nodes against the copy found)."""

    def __init__(
        self,
        env: Mapping[str, str],
        cache: list[CacheEntry],
        view: FileView,
        defs_cache: VersionDefs,
        files: ElfAnswers,
        cwd: str | None = None,
    ) -> None:
        self.env, self.cache, self.view, self.defs_cache, self.files = env, cache, view, defs_cache, files
        self.cwd = cwd  # the server's working directory where known (search_path)
        self.loaded: dict[str, tuple[str, str]] = {}  # soname -> (path, via)
        self.by_soname: dict[str, list[CacheEntry]] | None = None
        self.steps: dict[tuple[str, str | None, str | None, int], list[tuple[str, str]]] = {}
        self.is_file = _view_is_file(view)
        self.followed: set[str] = set()
        self.stopped: dict[tuple[str, str], str] = {}  # (object, needed) -> where and why the search ended the load
        self.out: dict[str, Any] = {"libraries": [], "symbol_failures": [], "version_failures": [], "errors": []}

    def find(self, obj: ObjectInfo, name: str) -> tuple[str, str] | None:
        if name in self.loaded:
            return self.loaded[name]
        if self.by_soname is None:  # the ld.so cache's entries per soname: each search reads its own few
            self.by_soname = {}
            for e in self.cache:
                self.by_soname.setdefault(e.soname, []).append(e)
        key = (obj.path, obj.rpath, obj.runpath, obj.machine)  # all search_path reads of the object
        steps = self.steps.get(key)
        if steps is None:  # expanded once per object, not once per library it needs
            steps = self.steps[key] = search_path(obj, self.env, self.cwd)
        got = loader_winner(
            obj, name, self.env, self.by_soname.get(name, ()), self.is_file, self._compatible, steps, self._stop
        )
        if got is None or isinstance(got, str):
            if got is not None:
                self.stopped[(obj.path, name)] = got
            return None
        self.loaded[name] = got
        return got

    def _stop(self, path: str) -> str | None:
        return loader_stop(path, self.view)

    def _compatible(self, path: str, machine: int) -> bool:
        """_compatible(path, machine) through the probe's answers: a copy that wins is followed or looked up in right
        after, and its file is kept open for that."""
        return _compatible(path, machine, self.view, self.files)

    def _open(self, path: str) -> _Answers | str:
        """The library at `path`, its dynamic symbols read, or the error that reading them gave (following it,
        looking symbols up in it and reading its version definitions share the one read)."""
        got = self.files.of(path)
        try:
            got.symbols()
        except ElfError as exc:
            return str(exc)
        return got

    def _version_defs(self, path: str) -> list[str] | str | None:
        """version_defs(path) through the probe's answers, kept in the probe's defs_cache like version_defs."""
        return version_defs(path, self.view, self.defs_cache, self.files)

    def _missing(self, winner: str, wanted: list[tuple[str, str]]) -> list[tuple[str, str]] | str:
        """The (symbol, version) pairs of `wanted` that the library at `winner` does not export, or an error."""
        got = self._open(winner)
        if isinstance(got, str):
            return got
        # a symbol several libraries need from the same copy (libcusolver and libcusolverMg from libcublas) is
        # looked up once (the file's answers); an error is not an answer, so a later ask fails the same way
        out = []
        try:
            for sym, ver in wanted:
                if not got.defines(sym):
                    out.append((sym, ver))
        except ElfError as exc:
            return str(exc)
        return out

    def follow(self, lib: str, chain_rpath: str = "") -> None:
        """Load `lib` (a CUDA library torch loads) and check what it needs, once."""
        if lib in self.followed or len(self.followed) >= MAX_HOP_LIBRARIES:
            return
        self.followed.add(lib)
        opened = self._open(lib)
        if isinstance(opened, str):
            self.out["errors"].append(opened)
            return
        try:
            needed, _, rpath, runpath = opened.symbols()
            obj = ObjectInfo(lib, needed, rpath, runpath, opened.machine())
            names = [n for n in obj.needed if HOP_LIBS.match(n)]
            if not names:
                return
            wanted = opened.undefined_from(set(names))
            needs = opened.needs()
        except ElfError as exc:
            self.out["errors"].append(str(exc))
            return
        if not obj.runpath and chain_rpath:  # no RUNPATH: the loading object's RPATH is searched after its own
            obj = obj._replace(rpath=":".join(x for x in (obj.rpath, chain_rpath) if x))
        for name in names:
            got = self.find(obj, name)
            if got is None:  # the load would fail unless something this model lacks loaded it first
                where = self.stopped.get((obj.path, name))
                why = f"its search ends at {where}" if where else "is not found on its search path"
                if where and f"({UNPLACED}): " in where:
                    why = f"is not known where the loader finds it: {where.split(f'({UNPLACED}): ', 1)[1]}"
                self.out["errors"].append(f"{lib}: {name} {why}")
                continue
            winner, via = got
            self.out["libraries"].append({"library": lib, "needed": name, "winner": winner, "via": via})
            missing = self._missing(winner, wanted.get(name, [])) if wanted.get(name) else []
            if isinstance(missing, str):
                self.out["errors"].append(missing)
            elif missing:
                self.out["symbol_failures"].append(
                    {
                        "package": "torch",
                        "library": lib,
                        "needed": name,
                        "winner": winner,
                        "via": via,
                        "missing": [f"{sym}@{ver}" for sym, ver in missing],
                        "source": f"{lib}: its undefined symbols bound to {name} (DT_VERSYM, DT_VERNEED)",
                    }
                )
            defs = self._version_defs(winner) if needs.get(name) else None
            failure = check_versions(lib, {"needed": name, "winner": winner, "via": via}, needs, defs)
            if failure is not None and "error" in failure:
                self.out["errors"].append(str(failure["error"]))
            elif failure is not None:
                self.out["version_failures"].append({"package": "torch", **failure})


def follow_torch_libraries(
    objects: list[str],
    location: str,
    env: Mapping[str, str],
    cache: list[CacheEntry],
    view: FileView,
    defs_cache: VersionDefs,
    infos: Mapping[str, ObjectInfo] | None = None,
    sites: Iterable[str] = (),
    files: ElfAnswers | None = None,
    cwd: str | None = None,
) -> dict[str, Any]:
    """The second hop for torch: {"preloaded": [paths], "libraries": [{"library", "needed", "winner", "via"}],
    "symbol_failures": [...], "version_failures": [...], "errors": [...]}. A symbol failure names the library
    (a CUDA library torch loads), the library it needs, the copy found, how, and the symbols missing."""
    if files is None:
        answers = ElfAnswers(view)
        try:
            return follow_torch_libraries(objects, location, env, cache, view, defs_cache, infos, sites, answers, cwd)
        finally:
            answers.close()
    loader = _Loader(env, cache, view, defs_cache, files, cwd)
    first: list[tuple[ObjectInfo, str]] = []  # torch's objects and their RPATH dirs
    for path in objects:
        try:
            obj = (infos or {}).get(path) or read_object(path, view, files)
        except ElfError as exc:
            loader.out["errors"].append(str(exc))
            continue
        chain = expand_dirs(obj.rpath, posixpath.dirname(path), obj.machine) if obj.rpath and not obj.runpath else []
        first.append((obj, ":".join(chain)))
    # libtorch_global_deps.so: libcudart through torch's RPATH (the same RPATH as torch's CUDA objects)
    cudart = None
    for obj, _ in first:
        name = next((n for n in obj.needed if n.startswith("libcudart.so")), None)
        got = loader.find(obj, name) if name else None
        if got is not None:
            cudart = got[0]
            break
    preloaded = torch_preloads(location, cudart, view, sites, files.kept)
    for path in preloaded:  # ctypes.CDLL(path): the file itself, whatever the search path says
        loader.loaded.setdefault(posixpath.basename(path), (path, "preloaded by torch/__init__.py"))
        opened = loader._open(path)  # the file follow() reads next: read once
        soname = None if isinstance(opened, str) else opened.symbols()[1]
        if soname:
            loader.loaded.setdefault(soname, (path, "preloaded by torch/__init__.py"))
        loader.follow(path)
    # import torch._C: torch's objects' CUDA libraries breadth-first, then what each of those needs
    order: list[tuple[str, str]] = []
    for obj, chain_rpath in first:
        for name in obj.needed:
            got = loader.find(obj, name) if HOP_LIBS.match(name) else None
            if got is not None:
                order.append((got[0], chain_rpath))
    for lib, chain_rpath in order:
        loader.follow(lib, chain_rpath)
    return {"preloaded": preloaded, **loader.out}
