"""CUDA runtime libraries probe: which CUDA sonames (libcudart.so.12, libnvrtc.so.13, ...) the dynamic loader
can find on this box at all, without naming an object that needs them.

A kernel package built for one CUDA major links that major's runtime (sgl-kernel's PyPI wheels are CUDA 12
builds: `libcudart.so.12`); on a box whose torch is a CUDA 13 build, torch's pip wheels bring only the CUDA
13 libraries, and the kernel package fails to load with "libcudart.so.12: cannot open shared object file"
unless some copy is on the loader's path. This probe answers that question cheaply in the first round:
the directories of LD_LIBRARY_PATH, the ld.so cache (/etc/ld.so.cache, read, never `ldconfig`) and the
default directories are looked at for each soname in `SONAMES`, through the FileView. LD_LIBRARY_PATH is read as
glibc reads it (ld_library_path, the one reading every search here shares): a relative or empty element is searched
from the server's working directory where that is known (gate --cwd), and where it is not, a library not found
before that element is neither found nor absent (`unreadable`, with the reason). The pip
wheels' own directories (nvidia/cuda_runtime/lib, ...) are reached only through an object's RPATH, which
the `--deep` libs probe follows; the rules read the wheels from the packages section instead. System
libraries are looked for the same way: libnuma.so.1, which the kernel packages' common_ops links (no RPATH there
either) and which no pip wheel brings, and libibverbs.so.1 / libmlx5.so.1 / libcurl.so.4, which Mooncake's
engine.so links, libssl.so.3 / libcrypto.so.3, which NIXL's bundled etcd client links, and liblzma.so.5, which the
libunwind Mooncake 0.3.5-0.3.11.post1 bundle links (preflight.json system_libraries).

An ld.so cache entry, and a file on LD_LIBRARY_PATH or in a default directory, counts only when its file is
there and is a library of the box's class and machine (one 20-byte read each, as glibc's open_verify: a stale
entry whose file was removed since ldconfig ran is not the loader's answer, and a 32-bit copy, EI_CLASS 1, is
passed over for the next place: a 64-bit Python cannot load it). One this process cannot read (permission
denied: the server's user may) is neither found nor absent: it is listed in `unreadable`, and the rules on it
are unknown.

The audited interpreter's own DT_RPATH (a conda Python's $ORIGIN/../lib) comes first: glibc's loader searches the
executable's DT_RPATH for every library the process loads whose requesting object has no DT_RUNPATH (an LD_PRELOAD
hook's, an extension's that carries none), before LD_LIBRARY_PATH; an executable's DT_RUNPATH serves only its own
DT_NEEDED entries and does not count (glibc elf/dl-load.c _dl_map_object; ld.so(8)).

Facts: `cuda_libs: {"libcudart.so.12": "/usr/local/cuda-12.8/lib64/libcudart.so.12" | null, ...,
"ld_cache": "file" | "unavailable: reason", "ld_library_path": [the LD_LIBRARY_PATH directories searched, up to
an element not placed],
"unreadable"?: {"libnuma.so.1": "path: reason"},
"interpreter_rpath"?: {"interpreter": path, "rpath": raw, "dirs": [...], "libpython": the libpython soname it NEEDs, ""
for none} | {"interpreter": path, "error": why}}`.
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat as stat_module
from collections.abc import Mapping

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, view_of
from stackcheck.readers.fsview import FileView, NotRegularFile, is_host
from stackcheck.readers.ldpath import ld_library_path, unplaced_reason

if TYPE_CHECKING:
    from typing import Any, ClassVar

SONAMES = (
    *(f"lib{name}.so.{major}" for name in ("cudart", "nvrtc", "cublas", "cublasLt") for major in (11, 12, 13)),
    # not a CUDA library, but a system one the kernel packages link (common_ops of sgl-kernel 0.1.6 to sglang-kernel
    # 0.4.x, read in the wheels) and no pip wheel brings: a slim image without it fails `import sgl_kernel`
    "libnuma.so.1",
    # a cuDNN engine that libcudnn_graph dlopens by soname and the nvidia-cudnn-cu13 9.20.0.48 wheel lacks (read in
    # the wheel): where the loader finds one, it is another cuDNN's copy (check cudnn-libs)
    "libcudnn_engines_tensor_ir.so.9",
    # cuDNN itself, which PyTorch's CUDA wheels link (libtorch_cuda.so NEEDED libcudnn.so.9, found through the
    # RPATH in the nvidia-cudnn-cu12/-cu13 wheel, read in torch 2.8.0+cu128 and 2.11.0+cu130): without that wheel
    # only a copy on the loader's path lets `import torch` succeed (check torch-cudnn-present)
    "libcudnn.so.9",
    # system libraries mooncake-transfer-engine 0.3.5-0.3.13.post1's mooncake/engine.so links and its wheel does not
    # bring (DT_NEEDED read in every PyPI cp311 x86_64 wheel; libmlx5 from 0.3.12): preflight.json system_libraries
    "libibverbs.so.1",
    "libmlx5.so.1",
    "libcurl.so.4",
    # OpenSSL 3's libraries, which the libetcd-cpp-api-core bundled in NIXL's wheels (nixl 0.6.1 / 0.7.0, nixl-cu12 /
    # nixl-cu13 0.7.1: read in the cp312 x86_64 wheels) NEEDs and no NIXL wheel brings: preflight.json system_libraries
    "libssl.so.3",
    "libcrypto.so.3",
    # xz's library, which the libunwind bundled in mooncake-transfer-engine 0.3.5-0.3.11.post1 (NEEDed by
    # mooncake/engine.so) NEEDs and no Mooncake wheel brings (read in the cp311 x86_64 wheels): preflight.json
    # system_libraries (a report without it keeps its verdict, with a note: not_probed_note)
    "liblzma.so.5",
    # CPython's shared library, which the engine copy bundled in mooncake-transfer-engine 0.3.8-0.3.9 NEEDs (its EP
    # module links it; read in the cp311 x86_64 wheels): an interpreter that does not link it itself (a statically
    # linked python) leaves it to the loader's path (preflight.json a2a_packages python_library)
    *(f"libpython3.{minor}.so.1.0" for minor in range(10, 15)),
)
LD_CACHE = "/etc/ld.so.cache"
LD_CACHE_CAP = 8 << 20  # a real cache is a few hundred kilobytes
DEFAULT_DIRS = (
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/lib64",
    "/usr/lib64",
    "/lib",
    "/usr/lib",
)


_CACHE_MAGICS = (b"glibc-ld.so.cache1.1", b"ld.so-1.7.0")


def _ld_cache(view: FileView, sonames: tuple[str, ...] = SONAMES) -> tuple[dict[str, str | None], str, dict[str, str]]:
    """soname -> the path the ld.so cache gives the loader for it (None: its entry is a file the load fails
    on), where the answer came from, and soname -> why the cache's entry could not be judged (read by this
    process, which is not the server's: unknown).

    The cache's string table holds every entry's path, and ldconfig points each entry's soname into the
    tail of its path, so a path ending in "/<soname>" NUL is looked up in the bytes directly: no full parse
    (stackcheck.readers.libs has one, for --deep, but importing it costs start-up time here). Each entry's
    file is opened, as the loader does (glibc's open_verify): one of another class or machine (a multiarch
    box's i386 copy) is passed over for the next entry; a stale entry (the file removed since ldconfig ran)
    ends the cache's answer, the loader then trying the default directories; a file that is not ELF is no
    library (the loader fails on it: "invalid ELF header")."""
    try:
        data = view.read_bytes(LD_CACHE, LD_CACHE_CAP)
    except OSError as exc:
        return {}, f"unavailable: {LD_CACHE}: {exc.strerror or exc}", {}
    if not data.startswith(_CACHE_MAGICS):
        return {}, f"unavailable: {LD_CACHE}: not an ld.so cache", {}
    found: dict[str, str | None] = {}
    unknown: dict[str, str] = {}
    machine: list[int] = []  # the box's, read once at the first entry judged
    for soname in sonames:
        tail = b"/" + soname.encode() + b"\0"
        at = data.find(tail)
        while at >= 0:
            start = data.rfind(b"\0", 0, at) + 1
            path = data[start : at + 1 + len(soname)].decode("utf-8", "replace")
            if not machine:
                machine.append(box_machine(view))
            verdict = _library_kind(view, path, machine[0])
            if verdict in ("ok", "bad"):
                found[soname] = path if verdict == "ok" else None
            elif verdict.startswith("unknown"):
                unknown[soname] = f"{path}: {verdict.partition(': ')[2]}"
            if verdict != "other":  # only another class or machine lets the loader look at the next entry
                break
            at = data.find(tail, at + 1)
    return found, "file", unknown


def _listing(view: FileView, d: str, listings: dict[object, set[str]]) -> set[str]:
    """The names in directory `d` (none when it cannot be listed), listed once per directory: on this host a
    directory reached under two names (a merged /usr's /lib/x86_64-linux-gnu and /usr/lib/x86_64-linux-gnu,
    /lib and /usr/lib: the default directories of every soname not found before) is listed once, known by its
    device and inode (one stat). Each entry of a listing lets go of the interpreter lock, and a probe thread
    that does waits to take it back while the main thread loads the manifests."""
    if not (d and is_host(view)):  # ("" is HostView's working directory, not the kernel's ENOENT: as before)
        if d not in listings:
            try:
                listings[d] = set(view.listdir(d))
            except OSError:
                listings[d] = set()
        return listings[d]
    if d in listings:
        return listings[d]
    try:
        st = os.stat(d)
    except (OSError, ValueError):
        listings[d] = set()  # what its listing would give: the directory cannot be reached
        return listings[d]
    key = (st.st_dev, st.st_ino)
    if key not in listings:
        try:
            listings[key] = set(view.listdir(d)) if stat_module.S_ISDIR(st.st_mode) else set()
        except (OSError, ValueError):
            listings[key] = set()
    listings[d] = listings[key]
    return listings[d]


#: e_machine of the loader's own architecture, by platform.machine()
_MACHINES = {"x86_64": 62, "amd64": 62, "aarch64": 183, "arm64": 183}


def box_machine(view: FileView) -> int:
    """The box's ELF machine (62 x86-64, 183 AArch64): its /bin/sh's, else this host's."""
    for probe in ("/bin/sh", "/usr/bin/env"):
        try:
            head = view.read_bytes(probe, 20)
        except (OSError, ValueError):
            continue
        if len(head) == 20 and head[:4] == b"\x7fELF" and head[4] == 2:
            return int.from_bytes(head[18:20], "little")
    import platform

    return _MACHINES.get(platform.machine().lower(), 0)


def _library_kind(view: FileView, path: str, machine: int) -> str:
    """What the 64-bit loader makes of `path` (one 20-byte read): "ok", "absent" (no such file), "other" (an
    ELF of another class or machine: passed over), "bad" (not an ELF library: the load fails there), or
    "unknown: why" (this process cannot read it; the server's user may)."""
    try:
        head = view.read_bytes(path, 20)
    except NotRegularFile:  # a directory, a FIFO: opened, then unreadable as a library
        return "bad"
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):  # the loader's open fails: next place
            return "absent"
        return f"unknown: {exc.strerror or exc}"
    except ValueError as exc:
        return f"unknown: {exc}"
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return "bad"
    if head[4] != 2 or head[5] != 1 or (machine and int.from_bytes(head[18:20], "little") != machine):
        return "other"
    return "ok"


#: the code whose answer interpreter_rpath keeps (readers.kept's key): this module, the ELF reader (and its machine
#: numbers), expand_dirs
_RPATH_READERS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), *parts)
    for parts in (("probes", "cudalibs.py"), ("readers", "elf.py"), ("readers", "elferror.py"), ("readers", "libs.py"))
)


def interpreter_rpath(view: FileView, interpreter: str, cache_dir: str | None = "") -> dict[str, Any]:
    """The directories the loader takes from the interpreter's DT_RPATH for every library its process loads (the
    module docstring): {"interpreter", "rpath", "dirs"}, "dirs" empty where it has none or has a DT_RUNPATH (then
    "runpath" says so), or {"interpreter", "error"} where its ELF could not be read. $ORIGIN is the directory of
    the executable's real path, as the loader takes it from /proc/self/exe. On this host, with a `cache_dir` (the
    probes' ProbeContext.cache_dir; "" keeps nothing), an answer read is kept by the real file's stamp
    (stackcheck.readers.kept): every audit and gate reads the same interpreter, and the ELF reader's import and the
    read are ~1 ms of the main process's work under the interpreter lock; an error is never kept."""
    kept, stamp, real = None, None, ""
    if cache_dir != "" and is_host(view):
        kept, stamp, real = _kept_rpath(view, interpreter, cache_dir)
        if kept is not None:
            from stackcheck.readers.kept import MISS

            got = kept.get(real, stamp)
            if got is not MISS and _is_rpath_answer(got):
                return {"interpreter": interpreter, **got}
    out = _read_interpreter_rpath(view, interpreter)
    if kept is not None and "error" not in out:
        kept.put(real, stamp, {k: v for k, v in out.items() if k != "interpreter"})
        kept.save()
    return out


def _kept_rpath(view: FileView, interpreter: str, cache_dir: str | None) -> tuple[Any, list[int] | None, str]:
    """(the kept answers, the stamp of the interpreter's real file taken before it is read, its real path), or
    (None, None, "") with the caches off or no stamp."""
    from stackcheck.readers.kept import Kept, directory, file_stamp

    where = directory(cache_dir)
    if where is None:
        return None, None, ""
    try:
        real = view.realpath(interpreter)
    except (OSError, ValueError):
        return None, None, ""
    stamp = file_stamp(real)
    if stamp is None:
        return None, None, ""
    return Kept("interpreter_rpath", where, _RPATH_READERS), stamp, real


def _is_rpath_answer(got: Any) -> bool:
    """A kept answer of the shape _read_interpreter_rpath gives (less "interpreter"), nothing else."""
    keys = {"rpath", "dirs", "runpath", "libpython"}
    if type(got) is not dict or set(got) - keys or not {"rpath", "dirs"} <= set(got):
        return False
    dirs, rpath, runpath = got["dirs"], got["rpath"], got.get("runpath", "")
    return (
        type(dirs) is list
        and all(type(d) is str for d in dirs)
        and (rpath is None or type(rpath) is str)
        and type(runpath) is str
        and type(got.get("libpython", "")) is str
    )


def _read_interpreter_rpath(view: FileView, interpreter: str) -> dict[str, Any]:
    """interpreter_rpath's answer read from the interpreter's ELF."""
    from stackcheck.readers.elf import ElfError, ElfFile

    out: dict[str, Any] = {"interpreter": interpreter}
    try:
        real = view.realpath(interpreter)
        with ElfFile(real, view) as elf:
            dyn = elf.dynamic()
            machine = elf.header.e_machine
    except (ElfError, OSError, ValueError) as exc:
        out["error"] = str(exc)[:300]
        return out
    out["rpath"], out["dirs"] = dyn.rpath, []
    # the libpython the interpreter links ("" for none: a statically linked python), which its process has loaded
    # before any extension asks for it by that soname
    out["libpython"] = next((n for n in dyn.needed if n.startswith("libpython")), "")
    if dyn.runpath is not None:
        out["runpath"] = dyn.runpath  # the loader then ignores DT_RPATH, and RUNPATH is not inherited
    elif dyn.rpath:
        from stackcheck.readers.libs import expand_dirs

        out["dirs"] = [d.rstrip("/") or "/" for d in expand_dirs(dyn.rpath, posixpath.dirname(real), machine)]
    return out


def probe_cuda_libs(
    env: Mapping[str, str],
    view: FileView,
    sonames: tuple[str, ...] = SONAMES,
    interpreter: str | None = None,
    cache_dir: str | None = "",
    cwd: str | None = None,
) -> dict[str, Any]:
    """The `cuda_libs` facts section (see the module docstring); `sonames` others than the section's (the
    driver's libcuda.so.1 for the kernel symbol probe) are found the same way. `interpreter`: the audited Python's
    box path, whose DT_RPATH the loader searches first; `cache_dir`: where its answer is kept (interpreter_rpath);
    `cwd`: the server's working directory, where known, from which LD_LIBRARY_PATH's relative and empty elements
    are searched (ld_library_path: without it, a library not found before such an element is unknown, listed in
    `unreadable` with the reason)."""
    dirs, unplaced = ld_library_path(env.get("LD_LIBRARY_PATH"), cwd)
    own: dict[str, Any] | None = interpreter_rpath(view, interpreter, cache_dir) if interpreter else None
    rpath_dirs = [d for d in (own or {}).get("dirs") or [] if d.startswith("/")]
    cache, how, unknown = _ld_cache(view, sonames)
    listings: dict[object, set[str]] = {}
    machine: list[int] = []  # the box's, read once at the first file judged

    def first_in(candidates: list[str] | tuple[str, ...], soname: str) -> tuple[str | None, bool]:
        """The loader's answer in these directories: (the library, whether the search ends here). As glibc's
        open_verify, an ELF of another class (a 32-bit copy, EI_CLASS 1) or machine is passed over for the next
        directory; a file that is no ELF library ends the search with no library (the load fails on it); one
        this process cannot read ends it too, listed in `unreadable` (neither found nor absent)."""
        for d in candidates:
            # one listing per directory (a stat per soname would resolve every path component again)
            if soname not in _listing(view, d, listings):
                continue
            path = posixpath.join(d, soname)
            st = view.stat(path)
            if st is not None and st.kind == "dir":  # opened, its read fails: "cannot read file data: Is a
                return None, True  # directory" ends the load (a bind mount of a file missing on the host)
            if st is None or st.kind != "file":
                continue
            if not machine:
                machine.append(box_machine(view))
            kind = _library_kind(view, path, machine[0])
            if kind == "ok":
                return path, True
            if kind == "bad":
                return None, True
            if kind.startswith("unknown"):
                out.setdefault("unreadable", {})[soname] = f"{path}: {kind.partition(': ')[2]}"
                return None, True
        return None, False

    out: dict[str, Any] = {}
    for soname in sonames:
        # the loader's order: the executable's DT_RPATH, LD_LIBRARY_PATH, the cache, the default directories (a
        # library installed without running ldconfig)
        in_path, ends = first_in(rpath_dirs, soname) if rpath_dirs else (None, False)
        if not ends:
            in_path, ends = first_in(dirs, soname)
        if ends:
            out[soname] = in_path
        elif unplaced is not None:  # the directory an element names is not known: neither found nor absent
            out[soname] = None
            out.setdefault("unreadable", {})[soname] = unplaced_reason(unplaced)
        elif soname in unknown:  # not counted as found, nor as absent: the rules say unknown
            out[soname] = None
            out.setdefault("unreadable", {})[soname] = unknown[soname]
        elif soname in cache:
            out[soname] = cache[soname]
        else:
            out[soname] = first_in(DEFAULT_DIRS, soname)[0]
    out["ld_cache"] = how
    # the LD_LIBRARY_PATH directories searched (up to an element not placed, past which every answer is unknown): a
    # saved report's answers hold for a launch that keeps them (gate --facts with a launch that sets its own:
    # stackcheck/launch/facts_loader_path.py, igap43)
    out["ld_library_path"] = dirs
    if own is not None:
        out["interpreter_rpath"] = own
    return out


def _interpreter(ctx: ProbeContext) -> str | None:
    """The audited interpreter's box path: the target's, else (stackcheck's own, on this host) sys.executable."""
    target = getattr(ctx, "target", None)
    if target is not None and not target.own:
        executable = target.executable
        return executable if isinstance(executable, str) and executable else None
    if is_host(view_of(ctx)):
        import sys

        return sys.executable or None
    return None


class CudaLibsProbe(Probe):
    name: ClassVar[str] = "cuda_libs"
    timeout_s: ClassVar[float] = 3.0
    sections: ClassVar[tuple[str, ...]] = ("cuda_libs",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        libs = probe_cuda_libs(
            ctx.loader_environ, view_of(ctx), interpreter=_interpreter(ctx), cache_dir=ctx.cache_dir, cwd=ctx.launch_cwd
        )
        how = str(libs.get("ld_cache"))
        if how != "file" and not how.startswith("unavailable: /etc/ld.so.cache: No such file"):
            return ProbeResult({"cuda_libs": libs}, "partial", f"ld.so cache {how}")
        return ProbeResult({"cuda_libs": libs})
