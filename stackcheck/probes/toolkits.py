"""CUDA toolkits probe: every toolkit a build or torch could pick up, its version, and which is active.

Candidates: $CUDA_HOME, $CUDA_PATH, the toolkit of the `nvcc` found on $PATH, /usr/local/cuda and
/usr/local/cuda-*, and pip-installed toolkit wheels. Deduplicated by resolved real path (first candidate
wins, so the more specific source is recorded). Versions come from version.json, version.txt, the
toolkit's dist-info directories (toolkits assembled from wheels), or `nvcc --version`.
"""

from __future__ import annotations

import os
import posixpath
import threading

from stackcheck import lean_json
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import (
    CommandTimeout,
    Probe,
    ProbeContext,
    ProbeResult,
    SearchPathUnknown,
    run_command,
)
from stackcheck.probes.packages import find_distributions
from stackcheck.readers.fsview import (
    FileView,
    glob,
    is_dir,
    is_file,
    is_host,
    kind_of,
    listdir_or_empty,
    read_text,
    which,
)

if TYPE_CHECKING:
    from typing import Any, ClassVar

    from stackcheck.readers.kept import Kept

PIP_TOOLKITS = (
    "nvidia-cuda-runtime",
    "nvidia-cuda-runtime-cu12",
    "nvidia-cuda-runtime-cu13",
    "nvidia-cuda-nvcc",
    "nvidia-cuda-nvcc-cu12",
    "nvidia-cuda-nvcc-cu13",
    "cuda-toolkit",
)
_PIP_SUBDIRS = ("nvidia/cu13", "nvidia/cuda_runtime", "nvidia/cuda_nvcc")
_NVCC_RELEASE = _lazy(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)")
_VERSION_TXT = _lazy(r"CUDA Version (\d+\.\d+(?:\.\d+)?)")
_DIST_INFO = _lazy(r"^nvidia_cuda_(?:nvcc|cudart|runtime)-(\d+\.\d+\.\d+)")
_VERSION_FILE_CAP = 1 << 20


def parse_nvcc_version(text: str) -> str | None:
    """'... release 13.0, V13.0.88' -> '13.0.88'."""
    m = _NVCC_RELEASE.search(text)
    return m.group(2) if m else None


def read_toolkit_version(view: FileView, path: str) -> str | None:
    """A toolkit directory's version from version.json, version.txt or its dist-info directories."""
    vj = posixpath.join(path, "version.json")
    if is_file(view, vj):
        try:
            data = lean_json.loads(read_text(view, vj, _VERSION_FILE_CAP))
        except (OSError, ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            for key in ("cuda", "cuda_nvcc", "cuda_cudart"):
                part = data.get(key)
                if isinstance(part, dict) and isinstance(part.get("version"), str):
                    return str(part["version"])
    vt = posixpath.join(path, "version.txt")
    if is_file(view, vt):
        try:
            m = _VERSION_TXT.search(read_text(view, vt, _VERSION_FILE_CAP))
        except (OSError, ValueError):
            m = None
        if m:
            return m.group(1)
    info = posixpath.join(path, "dist-info")
    if is_dir(view, info):  # a toolkit assembled from the nvidia-cuda-* wheels
        names = listdir_or_empty(view, info)
        for name in names:
            m = _DIST_INFO.match(name)
            if m and name.startswith("nvidia_cuda_nvcc"):
                return m.group(1)
        for name in names:
            m = _DIST_INFO.match(name)
            if m:
                return m.group(1)
    return None


def _real(view: FileView, path: str) -> str:
    try:
        return view.realpath(path)
    except (OSError, ValueError):
        return path


#: torch's _find_cuda_home runs in the server's process (torch/utils/cpp_extension.py: `nvcc_path =
#: shutil.which("nvcc")`, then `cuda_home = os.path.dirname(os.path.dirname(nvcc_path))`; read in the torch 2.8.0 and
#: 2.11.0 x86_64 wheels, 2.11.0 :117-141): shutil.which joins each PATH entry to the name as written (CPython 3.11
#: Lib/shutil.py:1492 `path.split(os.pathsep)`, :1527 `os.path.join(dir, thefile)`), so a relative or empty entry is
#: read from the server's working directory, and the CUDA home is that relative path's grandparent
LAUNCH_DIR_UNKNOWN = "the server's working directory (gate --cwd names it)"


def path_nvcc(view: FileView, path_value: str | None, cwd: str | None) -> tuple[str | None, str | None, str]:
    """(the nvcc torch's _find_cuda_home finds on the server's PATH, as a box path; the CUDA home it takes from it;
    why that is not known, or ""). A relative or empty PATH entry met before any nvcc is read from `cwd`, the server's
    working directory, where known (fsview.which with a cwd, as the python lookup does); an nvcc found there gives torch
    a relative CUDA home, which each build step reads from its own directory, so the search stops there too (None,
    None, why), as it does where `cwd` is not known: an nvcc found past it is not the one torch may take. `path_value`
    None (PATH unset in the server's environment: `env -i`) is shutil.which's default, os.confstr("CS_PATH"),
    '/bin:/usr/bin' on glibc (CPython 3.11 Lib/shutil.py which(); irev69: it was read as '', which finds nothing)."""
    if path_value is None:
        path_value = posixpath.defpath
    for entry in path_value.split(":") if path_value else ():
        relative = not entry.startswith("/")
        if relative and not (cwd is not None and cwd.startswith("/")):
            shown = repr(entry) if entry else "an empty entry"
            return None, None, f"PATH has {shown} before any nvcc: relative, it is read in {LAUNCH_DIR_UNKNOWN}"
        found = which(view, "nvcc", entry, cwd) if relative else which(view, "nvcc", entry)
        if found is None:
            continue
        if not relative:
            return found, posixpath.dirname(posixpath.dirname(found)), ""
        # torch keeps the home as written, relative ('' for `bin` or an empty entry): each later path joined to it
        # (_join_cuda_home: nvcc, include/, lib64/) is read from the directory of whichever step uses it, the JIT's
        # ninja and nvcc running in the build directory (cpp_extension.py:2595-2601), not the server's (on the lent
        # H100, 2026-12-06, bench/h200_loader_truth.py: `_find_cuda_home()` returned '' for PATH=bin:... run from
        # /usr/local/cuda-13.0, where this lookup had said /usr/local/cuda-13.0)
        home = posixpath.dirname(posixpath.dirname(posixpath.join(entry, "nvcc")))
        return (
            None,
            None,
            (
                f"PATH's relative entry {entry!r} gives torch the nvcc {found} by the relative name "
                f"{posixpath.join(entry, 'nvcc')!r} and the CUDA home {home!r}, which torch keeps relative "
                "(cpp_extension.py _find_cuda_home) and each build step reads from its own directory: the build's "
                "toolkit is not known"
            ),
        )
    return None, None, ""


class ToolkitsProbe(Probe):
    name: ClassVar[str] = "toolkits"
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ("cuda_toolkits",)
    needs: ClassVar[tuple[str, ...]] = ("python",)
    prepares: ClassVar[bool] = True

    def __init__(self) -> None:
        self._early: tuple[threading.Event, list[tuple[str, tuple[str | None, str | None]]]] | None = None

    def prepare(self, ctx: ProbeContext) -> None:
        """Run the $PATH nvcc's `--version` in a thread now, when run() will want it (on this host, its toolkit
        folder without a version file): it needs only the environment, not the target's Python this probe waits for
        (issue 21: it was the last step of the audit's python -> toolkits -> jit chain). Returns at once: the $PATH
        search and the version files are read in that thread too (the runner calls this in its main thread, outside
        every probe's timeout: a hung directory on $PATH must not hold the audit past --timeout)."""
        if not is_host(ctx.fs):
            return
        done: threading.Event = threading.Event()
        answer: list[tuple[str, tuple[str | None, str | None]]] = []

        def work() -> None:
            try:
                view = ctx.fs
                nvcc_path, home, _ = path_nvcc(view, ctx.loader_environ.get("PATH"), ctx.launch_cwd)
                if nvcc_path is None or home is None:
                    return
                if kind_of(view, home) == "dir" and read_toolkit_version(view, home) is not None:
                    return  # the version file answers: nvcc is not run
                answer.append((nvcc_path, self._nvcc_version(nvcc_path, ctx)))
            except Exception:  # (never a traceback from this thread: run() does the work itself)
                answer.clear()
            finally:
                done.set()

        self._early = (done, answer)
        threading.Thread(target=work, name="probe-toolkits-nvcc", daemon=True).start()

    def _version_of(self, nvcc: str, ctx: ProbeContext) -> tuple[str | None, str | None]:
        """`nvcc --version`'s answer: the one prepare() got for this nvcc, else run now."""
        early = self._early
        if early is not None and early[0].wait(ctx.subprocess_timeout_s + 1.0) and early[1] and early[1][0][0] == nvcc:
            return early[1][0][1]
        return self._nvcc_version(nvcc, ctx)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        view = ctx.fs
        entries: list[dict[str, Any]] = []
        by_real: dict[str, dict[str, Any]] = {}
        notes: list[str] = []

        def add(box_path: str, source: str) -> dict[str, Any]:
            key = _real(view, box_path)
            if key in by_real:
                return by_real[key]
            entry: dict[str, Any] = {"path": box_path, "version": None, "source": source, "nvcc": None}
            kind = kind_of(view, box_path)
            if kind is None:
                entry["error"] = f"{box_path} does not exist"
            elif kind != "dir":
                entry["error"] = f"{box_path} is not a directory"
            else:
                entry["version"] = read_toolkit_version(view, box_path)
                nvcc = posixpath.join(box_path, "bin", "nvcc")
                if is_file(view, nvcc):
                    entry["nvcc"] = nvcc
            entry["active_for_build"] = False
            entry["active_for_torch"] = False
            by_real[key] = entry
            entries.append(entry)
            return entry

        # Which toolkit a source build uses, in the order torch.utils.cpp_extension looks:
        # $CUDA_HOME or $CUDA_PATH, then the parent of the bin/ directory holding the `nvcc` on $PATH,
        # then /usr/local/cuda when it exists.
        build_choice: dict[str, Any] | None = None
        for var in ("CUDA_HOME", "CUDA_PATH"):
            value = ctx.loader_environ.get(var)  # the server's own (a gated command's env prefix)
            if value:
                entry = add(value, var)
                build_choice = build_choice or entry

        nvcc_path, home, unknown_nvcc = path_nvcc(view, ctx.loader_environ.get("PATH"), ctx.launch_cwd)
        if unknown_nvcc and build_choice is None:
            notes.append(f"which toolkit a build picks is not known: {unknown_nvcc}")
        if nvcc_path is not None and home is not None:
            entry = add(home, "nvcc")
            if entry["nvcc"] is None:
                entry["nvcc"] = nvcc_path
            if entry["version"] is None:
                if is_host(view):
                    version, why = self._version_of(nvcc_path, ctx)
                else:
                    version, why = None, f"{nvcc_path}: not run (it is not on this host)"
                if version is not None:
                    entry["version"] = version
                elif why:
                    notes.append(why)
            build_choice = build_choice or entry

        if kind_of(view, "/usr/local/cuda") is not None:
            entry = add("/usr/local/cuda", "/usr/local/cuda")
            if not unknown_nvcc:  # (torch's third guess only where its PATH lookup found no nvcc)
                build_choice = build_choice or entry
        try:
            versioned = [p for p in glob(view, "/usr/local", "cuda-*") if is_dir(view, p)]
        except Exception:  # GlobLimit: a pathological /usr/local
            versioned = []
        for p in versioned:
            add(p, "/usr/local/cuda")

        try:
            search = ctx.search_dirs()
        except SearchPathUnknown as exc:
            search = []
            notes.append(f"pip toolkits not looked for: {exc}")
        found = find_distributions(set(PIP_TOOLKITS), search, view)
        for name in PIP_TOOLKITS:
            for record in found.get(name, []):
                base = record.location
                path = next(
                    (posixpath.join(base, sub) for sub in _PIP_SUBDIRS if is_dir(view, posixpath.join(base, sub))),
                    base,
                )
                key = f"pip:{name}:{_real(view, path)}"
                if key in by_real:
                    continue
                entry = {
                    "path": path,
                    "version": record.version,
                    "source": "pip",
                    "nvcc": None,
                    "active_for_build": False,
                    "active_for_torch": False,
                }
                if record.error:
                    entry["error"] = record.error
                by_real[key] = entry
                entries.append(entry)

        if build_choice is not None:
            build_choice["active_for_build"] = True
        elif unknown_nvcc:  # not stated either way: toolkit.found and the build's toolkit are unknown, never false
            for entry in entries:
                entry.pop("active_for_build", None)
        errors = [e["error"] for e in entries if "error" in e] + notes
        if errors:
            return ProbeResult({"cuda_toolkits": entries}, "partial", errors[0])
        return ProbeResult({"cuda_toolkits": entries})

    @staticmethod
    def _nvcc_version(nvcc: str, ctx: ProbeContext) -> tuple[str | None, str | None]:
        """`nvcc --version`'s release, kept between runs by the stamp of the nvcc file (issue 21: ~17 ms of child
        CPU on every gate and audit of a toolkit without a version file). Only a compiled nvcc's answer is kept:
        its release is in its own bytes; a wrapper script (`exec /usr/local/cuda-X/bin/nvcc`) runs whatever its
        text or the environment names at run time, so it is run every time, as python_env does for shims."""
        kept, stamp = _kept_nvcc(nvcc, ctx.cache_dir)
        if kept is not None:
            from stackcheck.readers.kept import MISS

            got = kept.get(nvcc, stamp)
            if got is not MISS and type(got) is str and all(part.isdigit() for part in got.split(".")):
                return got, None
        version, why = ToolkitsProbe._run_nvcc(nvcc, ctx)
        if kept is not None and version is not None:
            kept.put(nvcc, stamp, version)
            kept.save()
        return version, why

    @staticmethod
    def _run_nvcc(nvcc: str, ctx: ProbeContext) -> tuple[str | None, str | None]:
        try:
            rc, out, _err = run_command([nvcc, "--version"], ctx.subprocess_timeout_s, ctx.loader_environ)
        except CommandTimeout as exc:
            return None, str(exc)
        except OSError as exc:
            return None, f"{nvcc}: cannot run: {exc.strerror or exc}"
        version = parse_nvcc_version(out)
        if version is None:
            return None, f"{nvcc} --version: exited {rc}, no 'release X.Y, VX.Y.Z' in its output"
        return version, None


def _kept_nvcc(nvcc: str, cache_dir: str | None) -> tuple[Kept | None, list[int] | None]:
    """The kept nvcc answers (stackcheck.readers.kept, keyed by this module's code) and the stamp of the nvcc file
    (taken before it runs), or (None, None): the caches off, no stamp, the file not an ELF program, or not a file named
    nvcc once its links are followed (a compiled program linked as nvcc, as ccache is to masquerade, answers with
    whatever nvcc comes after it on $PATH: its own stamp does not change when that one does)."""
    from stackcheck.readers.kept import Kept, directory, file_stamp

    where = directory(cache_dir)
    stamp = file_stamp(nvcc) if where is not None else None
    if where is None or stamp is None:
        return None, None
    if posixpath.basename(os.path.realpath(nvcc)) != "nvcc":
        return None, None  # a compiled wrapper linked as nvcc (ccache's masquerade): it runs the next nvcc on $PATH
    try:
        fd = os.open(nvcc, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if os.pread(fd, 4, 0) != b"\x7fELF":
                return None, None
        finally:
            os.close(fd)
    except OSError:
        return None, None
    return Kept("nvcc", where, [os.path.abspath(__file__)]), stamp
