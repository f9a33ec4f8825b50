"""The live symbol probe of the kernel package: does the installed torch (and the driver) export every symbol
the installed sgl-kernel's common_ops asks the loader for? Read from the files, without importing either.

Each common_ops library the package ships (`sgl_kernel/common_ops.*.so` and the per-architecture copies
`sgl_kernel/sm90/`, `sgl_kernel/sm100/` of newer releases) is opened with readers/elf.py; its undefined
dynamic symbols (weak ones left out) are split into torch's (the C++ API's top-level namespaces c10, c10d, at,
torch, caffe2, and the THP* names of torch's Python bindings) and the CUDA driver API (`cu` + an upper-case
letter: cuGreenCtxCreate, never cudaMalloc, nor GPUDirect Storage's cuFileBufRegister). Each torch name is
looked up in the torch libraries the file loads (its DT_NEEDED names found in torch/lib, and theirs in turn;
the usual five when it names none; libtorch_python.so too when torch is imported with RTLD_GLOBAL), each
driver name in the driver's libcuda.so.1, through the GNU hash tables: a few reads per name, never a whole
symbol table. A name no library exports is what the import fails on ("undefined symbol: _ZN3c10...",
"undefined symbol: cuGreenCtxCreate"); one none of those read exports while a torch library the file needs
is not in torch/lib (not read) is unknown.

The package's other extension modules (`sgl_kernel/*_ops.*so`: spatial_ops, flash_ops, flashmla_ops), which
only the feature using each imports, are read the same way into `modules` (each entry also names its module).

Other packages' compiled torch extensions that an SGLang launch may load (EXTENSIONS: LMCache's c_ops, torchao's
_C, DeepEP's deep_ep_cpp, DeepGEMM's _C, flash-attn's flash_attn_2_cuda, vLLM's _C, xFormers' _C) are read the
same way into `extensions` where installed: the copy the target's sys.path finds first (then the directories the
packages probe located packages in, then editable projects' directories: _site_dirs), each entry also naming its
`extension`. A file larger than
EXTENSION_MAX_BYTES is not opened (an `error`: unknown). Which launch loads which extension is data:
manifests/checks.json, the extension-torch-abi-* checks.

The section (facts.kernel_symbols) says which files and libraries were read, how many names of each kind
each file needs, and up to MAX_LISTED of the missing ones; every unreadable file is an `error` string.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import stat as stat_module
import time
from collections.abc import Callable, Mapping

from stackcheck.facts.model import KERNEL_MODULE, KERNEL_PACKAGES
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.readers.elf import DynamicSymbols, ElfError, ElfFile
from stackcheck.readers.fsview import FileView, GlobLimit, glob, is_file, is_host, kind_of, listdir_or_empty

if TYPE_CHECKING:
    from typing import Any

#: the kernel package's libraries whose load every CUDA launch needs, relative to site-packages
KERNEL_GLOBS = (f"{KERNEL_MODULE}/common_ops.*so", f"{KERNEL_MODULE}/*/common_ops.*so")
#: torch's libraries looked in when a file names none of them in DT_NEEDED (it then relies on torch's copies
#: being loaded already, by soname)
TORCH_DEFAULT_LIBS = ("libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so", "libc10_cuda.so")
#: the package's other extension modules (sgl-kernel 0.3.21: spatial_ops, flash_ops, flashmla_ops), each imported
#: by the Python module of the feature that uses it, inside a try, not by `import sgl_kernel` (read in the wheel:
#: sgl_kernel/spatial.py, flash_attn.py, flash_mla.py): a failed load breaks that feature at its first use
MODULE_GLOB = f"{KERNEL_MODULE}/*_ops.*so"
MAX_LISTED = 5
MAX_FILES = 8
#: other packages' compiled torch extensions (import name -> globs relative to site-packages), read where
#: installed; which launch imports each is manifests/checks.json's (extension-torch-abi-*, `extension`). Read in
#: the wheels (2026-12-05): torchao 0.13.0 torchao/_C.abi3.so, _C_cutlass_90a/_100a.abi3.so (its __init__ loads
#: _C*.so); sgl-deep-ep 0.1.1 deep_ep/_C.cpython-312-x86_64-linux-gnu.so. From the report: LMCache's
#: lmcache/c_ops.cpython-312-x86_64-linux-gnu.so (LMCache#1294). Not read here (inferred from the packages'
#: extension names): DeepEP's source build deep_ep_cpp.*.so (probes/packages.py EXTENSION_MODULES), deep_gemm/_C,
#: flash-attn 2's top-level flash_attn_2_cuda, vLLM's vllm/_C and vllm/_moe_C, xFormers' xformers/_C
#: LMCache 0.5.4-0.5.6 ship lmcache/cuda_ops.cpython-312-x86_64-linux-gnu.so and no c_ops (their wheels' file lists;
#: 0.3.3-0.5.3 ship c_ops), and import it inside a try that logs and stays on torch ops (read in the 0.5.4 wheel:
#: lmcache/v1/platform/cuda/device_ops.py:30-39; 0.5.6: lmcache/v1/platform/devices/cuda/device_ops.py:124-133).
#: They also ship lmcache/lmcache_native.cpython-312-x86_64-linux-gnu.so, imported at module level on the SGLang
#: adapter's path (0.5.4-0.5.6: integration/sglang/sglang_adapter.py:26 imports lmcache.v1.gpu_connector, whose
#: __init__.py:11 imports utils.py, which imports lmcache.lmcache_native at :30, no try); it names libc10.so,
#: libtorch.so, libtorch_cpu.so and libtorch_python.so (DT_NEEDED) but needs no torch C++ symbol in those releases
#: (nm -D), so it is read as the others are: a later release that needs one is judged (igap25)
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "lmcache": ("lmcache/c_ops.*so",),
    "lmcache_cuda_ops": ("lmcache/cuda_ops.*so",),
    "lmcache_native": ("lmcache/lmcache_native.*so",),
    "torchao": ("torchao/_C*.so",),
    # fbgemm-gpu-genai's library, which `import fbgemm_gpu` loads and re-raises a failure of (its 1.4.0 wheel:
    # fbgemm_gpu/__init__.py:44-106, :165-178); torchao 0.13.0-0.15.0 load it (stackcheck/verdicts/torchao_gate.py)
    "fbgemm_gpu_genai": ("fbgemm_gpu/experimental/gen_ai/fbgemm_gpu_experimental_gen_ai*.so",),
    "deep_ep": ("deep_ep_cpp.*so", "deep_ep/_C.*so"),
    "deep_gemm": ("deep_gemm/_C.*so",),
    "flash_attn": ("flash_attn_2_cuda.*so",),
    "vllm": ("vllm/_C.*so", "vllm/_moe_C.*so"),
    "xformers": ("xformers/_C.*so",),
}
#: an extension file larger than this is not opened (its dynamic symbol table may lie anywhere in it; vLLM's and
#: flash-attn's are a few hundred MB): an `error` entry, so its check is unknown rather than guessed
EXTENSION_MAX_BYTES = 1 << 30
#: at most this many files per extension (per-architecture or per-Python copies)
EXTENSION_MAX_FILES = 4

#: a symbol of torch's C++ API: a nested name (or the vtable/typeinfo of one) whose first namespace is c10,
#: c10d (the distributed library, inside libtorch_cpu / libtorch_cuda), at, torch or caffe2 (Itanium mangling: a
#: length, then the name), operators of c10 (`_ZN3c10dvERKNS_6SymIntEi`) too; and torch's Python bindings
#: (libtorch_python.so): THP* variables (`THPVariableClass`, unmangled) and global functions
#: (`_Z16THPVariable_WrapN2at10TensorBaseE`), the vtable/typeinfo of a THP class
_TORCH = re.compile(r"_Z(?:T[VIST])?N[rVKRO]*(?:3c10|4c10d|2at|5torch|6caffe2)|(?:_Z(?:T[VIST])?\d+)?THP\w")
#: a library name of torch's own (libtorch*.so, libc10*.so, libcaffe2*, libshm): one a file needs that is not in
#: torch/lib was not read, so a torch name missing from those read is unknown, not missing
_TORCH_LIBRARY = re.compile(r"lib(?:torch|c10|caffe2|shm)\w*\.so")
#: the library of torch's Python bindings, loaded by torch._C: in an extension's scope only when the extension
#: names it, or when torch is imported with RTLD_GLOBAL (TORCH_USE_RTLD_GLOBAL in the server's environment:
#: torch/__init__.py of 2.8.0, read in the wheel)
TORCH_PYTHON = "libtorch_python.so"
#: a CUDA driver API function: `cu` + an upper-case letter, less GPUDirect Storage's cuFile API (libcufile.so.0,
#: not libcuda: torch 2.11.0+cu130's libtorch_python.so calls cuFileBufRegister and cuFileHandleDeregister, which
#: the H200's driver 580 rightly does not export; seen by bench/h200_kernel_symbols.py there, 2026-12-02)
_DRIVER = re.compile(r"cu(?!File)[A-Z]\w*\Z")
#: the CUDA runtime library by its major (DT_NEEDED libcudart.so.12): the one a file built with that CUDA loads
_CUDART = re.compile(r"libcudart\.so\.\d+")


def is_torch_symbol(name: str) -> bool:
    return _TORCH.match(name) is not None


def is_driver_symbol(name: str) -> bool:
    return _DRIVER.match(name) is not None


def readable(name: str) -> str:
    """A mangled C++ name demangled enough to read: `_ZN3c104cuda9SetDeviceEab` -> `c10::cuda::SetDevice`
    (the nested name only; template arguments as `<…>`, parameters left out). Anything else unchanged."""
    m = re.match(r"_Z(T[VIST])?N[rVKRO]*", name)
    if m is None:
        return name
    i, depth = m.end(), 0
    parts: list[str] = []
    while i < len(name):
        c = name[i]
        if c == "E" and depth == 0:
            break
        if c == "I":  # template arguments: skip to the matching E (nested names inside have their own E)
            depth, j = 1, i + 1
            while j < len(name) and depth:
                if name[j].isdecimal():
                    k = j
                    while k < len(name) and name[k].isdecimal():
                        k += 1
                    if k - j > 9:  # a length int() may refuse (igap26): no name of this library's
                        return name
                    j = k + int(name[j:k])
                    continue
                if name[j] in "INL" or (name[j] == "Z"):
                    depth += name[j] in "IN"
                elif name[j] == "E":
                    depth -= 1
                j += 1
            if parts:
                parts[-1] += "<…>"
            i = j
            continue
        if c.isdecimal():
            k = i
            while k < len(name) and name[k].isdecimal():
                k += 1
            if k - i > 9:
                return name
            n = int(name[i:k])
            parts.append(name[k : k + n])
            i = k + n
            continue
        if name.startswith(("C1", "C2", "C3"), i) and parts:
            parts.append(parts[-1].split("<", 1)[0])
            i += 2
            continue
        if name.startswith(("D0", "D1", "D2"), i) and parts:
            parts.append("~" + parts[-1].split("<", 1)[0])
            i += 2
            continue
        return name  # an operator name, a substitution: leave it mangled
    if not parts:
        return name
    prefix = {"TV": "vtable for ", "TI": "typeinfo for ", "TS": "typeinfo name for ", "TT": "VTT for "}
    return prefix.get(m.group(1) or "", "") + "::".join(parts)


def _open(view: FileView, path: str) -> tuple[ElfFile, DynamicSymbols]:
    elf = ElfFile(path, view)
    try:
        return elf, DynamicSymbols(elf)
    except BaseException:
        elf.close()
        raise


class _Libraries:
    """Open libraries, each read once (a symbol looked up in several kernel files costs one lookup)."""

    def __init__(self, view: FileView) -> None:
        self.view = view
        self.open: dict[str, tuple[ElfFile, DynamicSymbols] | str] = {}
        self.answers: dict[tuple[str, str], bool] = {}

    def get(self, path: str) -> tuple[ElfFile, DynamicSymbols] | str:
        if path not in self.open:
            try:
                self.open[path] = _open(self.view, path)
            except ElfError as exc:
                self.open[path] = str(exc)
        return self.open[path]

    def defines(self, path: str, name: str) -> bool:
        key = (path, name)
        if key not in self.answers:
            got = self.get(path)
            self.answers[key] = not isinstance(got, str) and got[1].defines(name)
        return self.answers[key]

    def bytes_read(self) -> int:
        return sum(v[0].bytes_read for v in self.open.values() if not isinstance(v, str))

    def close(self) -> None:
        for v in self.open.values():
            if not isinstance(v, str):
                v[0].close()


def torch_closure(
    libs: _Libraries, torch_lib: str, needed: list[str], unread: list[str] | None = None, global_torch: bool = False
) -> list[str]:
    """The torch libraries a file with DT_NEEDED `needed` loads (breadth first, as the loader searches),
    keeping those found in `torch_lib`; the usual five when it names none. With `global_torch` (torch imported
    with RTLD_GLOBAL) torch._C's own library, libtorch_python.so, and its closure are in every scope too. The
    names of torch's libraries needed on the way but not in `torch_lib` (not read) are added to `unread`."""
    present = set()
    try:
        present = set(libs.view.listdir(torch_lib))
    except OSError:
        return []
    queue = [n for n in needed if n in present] or [n for n in TORCH_DEFAULT_LIBS if n in present]
    if global_torch and TORCH_PYTHON in present:
        queue.append(TORCH_PYTHON)
    seen: list[str] = []
    absent = [n for n in needed if n not in present and _TORCH_LIBRARY.fullmatch(n)]
    while queue:
        name = queue.pop(0)
        if name in seen:
            continue
        seen.append(name)
        got = libs.get(f"{torch_lib}/{name}")
        if not isinstance(got, str):
            queue.extend(n for n in got[1].needed if n in present and n not in seen)
            absent += [n for n in got[1].needed if n not in present and _TORCH_LIBRARY.fullmatch(n)]
    if unread is not None:
        unread.extend(n for n in dict.fromkeys(absent) if n not in unread)
    return [f"{torch_lib}/{n}" for n in seen]


def _missing(libs: _Libraries, names: list[str], where: list[str]) -> list[str]:
    return [n for n in names if not any(libs.defines(p, n) for p in where)]


def probe_kernel_symbols(
    packages: Mapping[str, Any],
    view: FileView,
    libcuda: str | None,
    libcuda_view: FileView | None = None,
    global_torch: bool = False,
    cache_dir: str | None = "",
    sys_path: list[str] | None = None,
) -> dict[str, Any] | None:
    """The `kernel_symbols` facts section, or None when no kernel package is installed with a location.
    `global_torch`: the server imports torch with RTLD_GLOBAL (libtorch_python.so is then in every scope).
    `cache_dir`: where each library's answer is kept (the probes' ProbeContext.cache_dir; "" keeps nothing), on this
    host only: see _KeptAnswers. `sys_path`: the target's sys.path (facts.python.sys_path), the order the
    extensions are looked for in (_site_dirs); None: the packages' locations, torch's first."""
    name = next(
        (n for n in KERNEL_PACKAGES if isinstance(packages.get(n), Mapping) and packages[n].get("installed")), None
    )
    if name is None:
        return None
    start = time.perf_counter()
    pkg = packages[name]
    out: dict[str, Any] = {"package": name, "version": pkg.get("version"), "files": []}
    loc = pkg.get("location")
    torch = packages.get("torch")
    torch_loc = torch.get("location") if isinstance(torch, Mapping) and torch.get("installed") else None
    out["torch_version"] = torch.get("version") if isinstance(torch, Mapping) else None
    if not isinstance(loc, str) or not loc:
        out["error"] = f"{name}: no install location in the package facts"
        return out
    try:
        # a directory is not a library; anything else that matches (a dangling symlink, a loop, a FIFO) is what
        # sgl_kernel would try to load: kept, so it becomes an error entry rather than silently left out
        found = sorted({p for g in KERNEL_GLOBS for p in glob(view, loc, g) if kind_of(view, p) != "dir"})
    except GlobLimit as exc:
        out["error"] = str(exc)
        return out
    if not found:
        out["error"] = f"{name}: no {KERNEL_MODULE}/common_ops library under {loc}"
        return out
    torch_lib = f"{torch_loc.rstrip('/')}/torch/lib" if isinstance(torch_loc, str) and torch_loc else None
    out["torch_lib"] = torch_lib
    out["libcuda"] = libcuda
    if global_torch:
        out["torch_global"] = True
    kept = None
    if cache_dir != "" and is_host(view) and (libcuda_view is None or is_host(libcuda_view)):
        kept = _KeptAnswers.open(cache_dir, torch_lib, libcuda, global_torch)
    if kept is not None:
        served = dict(out)
        try:
            _read_files(
                served, packages, view, loc, found, torch_loc, libcuda, libcuda_view, global_torch, kept, sys_path
            )
        except _Miss:
            kept.serving = False
        else:
            served["ms"] = round((time.perf_counter() - start) * 1000, 2)
            return served
    _read_files(out, packages, view, loc, found, torch_loc, libcuda, libcuda_view, global_torch, kept, sys_path)
    if kept is not None:
        kept.save()
    out["ms"] = round((time.perf_counter() - start) * 1000, 2)
    return out


class _Miss(Exception):
    """A library whose answer is not kept under its stamps (and those of what it was resolved against)."""


class _KeptAnswers:
    """Each library's entry kept between runs (stackcheck.readers.kept, document deep/kernel_symbols.json): the
    common_ops files', the modules' and the extensions', each by the stamp of the file (taken before it is read),
    with the stamps of every library it was resolved against (its torch closure as read, libcuda.so.1) and of the
    torch/lib directory (whose listing decides the closure), keyed by the file's path, its site-packages directory,
    torch/lib, libcuda's path and the RTLD_GLOBAL reading. Served only when EVERY library of the section is kept and
    every stamp matches (one miss: the whole section is read again, as without a cache, and every answer kept
    anew), so a served section is the fresh one, bytes_read included (each entry keeps the bytes its read added).
    An entry with an error of reading (the file's, a torch library's, libcuda's: _keepable) is never kept; nor one
    whose file or libraries changed less than kept.RACY_NS before its read began. On this host only (never --root or
    --image)."""

    def __init__(self, kept: Any, context: list[Any]) -> None:
        self.kept, self.context = kept, context
        self.serving = True
        self.stamps: dict[str, list[int] | None] = {}
        self.total = 0  # the bytes the served entries' reads added (the section's bytes_read when all are served)

    @classmethod
    def open(cls, cache_dir: str | None, torch_lib: str | None, libcuda: str | None, glob_: bool) -> Any:
        from stackcheck.readers.kept import Kept, directory

        where = directory(cache_dir)
        if where is None:
            return None
        return cls(Kept("kernel_symbols", where, _READERS), [torch_lib, libcuda, glob_])

    def stamp(self, path: str) -> list[int] | None:
        """The file's stamp (kept.file_stamp), or a directory's (its listing changes its times), once per run."""
        if path not in self.stamps:
            from stackcheck.readers.kept import file_stamp

            got = file_stamp(path)
            if got is None:
                try:
                    st = os.stat(path)
                except (OSError, ValueError):
                    st = None
                if st is not None and stat_module.S_ISDIR(st.st_mode):
                    got = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
            self.stamps[path] = got
        return self.stamps[path]

    def key(self, path: str, loc: str) -> str:
        return json.dumps([path, loc, *self.context])

    def serve(self, path: str, loc: str) -> dict[str, Any]:
        """The kept entry of the library at `path`, or _Miss."""
        from stackcheck.readers.kept import MISS

        got = self.kept.get(self.key(path, loc), self.stamp(path))
        if got is MISS or not _is_kept_entry(got):
            raise _Miss(path)
        for dep, stamp in got["deps"]:
            if self.stamp(dep) is None or self.stamp(dep) != stamp:
                raise _Miss(dep)
        self.total += got["bytes"]
        return dict(got["entry"])

    def put(self, path: str, loc: str, own: list[int] | None, began: int, entry: dict[str, Any], added: int) -> None:
        """Keep `entry`, read from `path` (stamped `own` before) from the clock's `began` on, `added` bytes."""
        if own is None or not _keepable(entry):
            return
        torch_lib, libcuda = self.context[0], self.context[1]
        deps = [f"{torch_lib}/{n}" for n in entry.get("torch_libs") or ()]
        deps += [torch_lib] if torch_lib is not None else []
        deps += [libcuda] if libcuda is not None else []
        from stackcheck.readers.kept import RACY_NS

        self.stamps.clear()  # (taken after the read: a library changed since the start of the read is not kept)
        stamps = [self.stamp(d) for d in deps]
        if any(s is None or max(s[3], s[4]) >= began - RACY_NS for s in stamps):
            return
        value = {"entry": entry, "deps": [[d, s] for d, s in zip(deps, stamps, strict=True)], "bytes": added}
        self.kept.put(self.key(path, loc), own, value)

    def save(self) -> None:
        self.kept.save()


def _is_kept_entry(got: Any) -> bool:
    """A kept value of the shape _KeptAnswers.put writes, nothing else (a garbled document is a miss)."""
    if type(got) is not dict or set(got) != {"entry", "deps", "bytes"} or type(got["bytes"]) is not int:
        return False
    entry, deps = got["entry"], got["deps"]
    if type(entry) is not dict or type(entry.get("path")) is not str or type(deps) is not list:
        return False
    if not _keepable(entry):
        return False
    return all(
        type(d) is list
        and len(d) == 2
        and type(d[0]) is str
        and type(d[1]) is list
        and len(d[1]) == 5
        and all(type(v) is int for v in d[1])
        for d in deps
    )


def _keepable(entry: dict[str, Any]) -> bool:
    """An entry with no error of reading (the file's, a torch library's, libcuda's). A torch library the file needs
    that is not in torch/lib (torch_unread: the name's answer unknown) is no error of reading: what torch/lib holds is
    in the stamps (its directory's), so that entry is kept; a broken torch library's message starts with its path."""
    if "error" in entry or "driver_error" in entry:
        return False
    torch_error, unread = entry.get("torch_error"), entry.get("torch_unread")
    if torch_error is None:
        return True
    return (
        type(torch_error) is str
        and type(unread) is list
        and bool(unread)
        and all(type(n) is str for n in unread)
        and torch_error.startswith(f"{', '.join(unread)} needed but not in ")
    )


#: the code whose answers _KeptAnswers keeps (readers.kept's key): this module and the ELF reader (and its machine
#: numbers, readers/elferror.py)
_READERS = tuple(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
    for name in ("kernelsymbols.py", "elf.py", "elferror.py")
)


def _read_files(
    out: dict[str, Any],
    packages: Mapping[str, Any],
    view: FileView,
    loc: str,
    found: list[str],
    torch_loc: Any,
    libcuda: str | None,
    libcuda_view: FileView | None,
    global_torch: bool,
    kept: _KeptAnswers | None,
    sys_path: list[str] | None = None,
) -> None:
    """The section's files, modules and extensions into `out`: served from `kept` while it serves (_Miss at the
    first library it does not hold), else read (and kept)."""
    libs = _Libraries(view)
    own = [0]
    drivers = _Libraries(libcuda_view or view)
    torch_lib = out["torch_lib"]

    def one(path: str, where: str) -> dict[str, Any]:
        if kept is not None and kept.serving:
            return kept.serve(path, where)
        before = libs.bytes_read() + drivers.bytes_read()
        stamp = kept.stamp(path) if kept is not None else None
        began = time.time_ns()
        entry = _one_file(path, where, libs, drivers, torch_lib, libcuda, global_torch)
        if kept is not None:
            added = libs.bytes_read() + drivers.bytes_read() - before + int(entry.get("bytes_read") or 0)
            kept.put(path, where, stamp, began, entry, added)
        return entry

    out["files"] = []
    try:
        for path in found[:MAX_FILES]:
            entry = one(path, loc)
            own[0] += int(entry.get("bytes_read") or 0)
            out["files"].append(entry)
        if len(found) > MAX_FILES:
            out["files_skipped"] = len(found) - MAX_FILES
        modules = _modules(view, loc)
        if isinstance(modules, str):
            out["modules_error"] = modules
        elif modules:
            out["modules"] = []
            for path in modules[:MAX_FILES]:
                entry = one(path, loc)
                own[0] += int(entry.get("bytes_read") or 0)
                out["modules"].append({"module": path.rsplit("/", 1)[-1].split(".", 1)[0], **entry})
        # looked in: an extension not listed is absent
        out["extension_dirs"] = _site_dirs(packages, torch_loc, sys_path)
        extensions = _extensions(packages, view, torch_loc, one, sys_path)
        if extensions:
            out["extensions"] = extensions
            own[0] += sum(int(e.get("bytes_read") or 0) for e in extensions)
        if libcuda is not None and (kept is None or not kept.serving):
            got = drivers.get(libcuda)
            if isinstance(got, str):
                out["libcuda_error"] = got
        # (served: every entry kept had read libcuda.so.1 without an error, at the stamp it has now)
    finally:
        if kept is not None and kept.serving:
            out["bytes_read"] = kept.total
        else:
            out["bytes_read"] = own[0] + libs.bytes_read() + drivers.bytes_read()
        libs.close()
        drivers.close()


def _site_dirs(packages: Mapping[str, Any], torch_loc: Any, sys_path: list[str] | None = None) -> list[str]:
    """Where the extensions are looked for, in the order Python's import looks: the target's sys.path where known
    (its absolute entries: a PYTHONPATH directory and the user site come before the system site-packages, so a copy
    there is the one imported), then the site-packages directories the packages probe located packages in that it
    does not list (torch's first: its order where sys.path is unknown), each once, then the project directories of
    editable installs holding a compiled module (packages.NAME.extension_dir: DeepEP built with `pip install -e`,
    whose deep_ep_cpp.*.so is there, not in site-packages; found by the finder its .pth installs, which Python asks
    after every sys.path entry)."""
    dirs = [d for d in sys_path or [] if isinstance(d, str) and d.startswith("/")]
    dirs += [torch_loc] if isinstance(torch_loc, str) and torch_loc else []
    editable: list[str] = []
    for entry in packages.values():
        if isinstance(entry, Mapping) and entry.get("installed") and isinstance(entry.get("location"), str):
            dirs.append(entry["location"])
            if isinstance(entry.get("extension_dir"), str) and entry["extension_dir"].startswith("/"):
                editable.append(entry["extension_dir"])
    dirs += editable
    return list(dict.fromkeys(d.rstrip("/") or "/" for d in dirs if d))


def _extensions(
    packages: Mapping[str, Any],
    view: FileView,
    torch_loc: Any,
    one: Callable[[str, str], dict[str, Any]],
    sys_path: list[str] | None = None,
) -> list[dict[str, Any]]:
    """An entry (files' shape plus `extension`) per installed file of EXTENSIONS, the first directory holding an
    extension's files winning, as Python's import does (_site_dirs: the target's sys.path order)."""
    out: list[dict[str, Any]] = []
    dirs = _site_dirs(packages, torch_loc, sys_path)
    listed: dict[str, frozenset[str]] = {}  # each directory listed once: the globs' first components looked up

    def matches(names: frozenset[str], first: str) -> bool:
        if not any(c in first for c in "*?["):
            return first in names
        prefix = re.split(r"[*?\[]", first, maxsplit=1)[0]
        return any(n.startswith(prefix) and fnmatch.fnmatchcase(n, first) for n in names)

    def here(loc: str, globs: tuple[str, ...]) -> tuple[str, ...]:
        """The globs whose first component names an entry of `loc` (only those can match there)."""
        if loc not in listed:
            listed[loc] = frozenset(listdir_or_empty(view, loc))
        return tuple(g for g in globs if matches(listed[loc], g.split("/", 1)[0]))

    for ext, globs in EXTENSIONS.items():
        for loc in dirs:
            present = here(loc, globs)
            try:
                found = sorted({p for g in present for p in glob(view, loc, g) if kind_of(view, p) != "dir"})
            except GlobLimit as exc:
                out.append({"extension": ext, "path": loc, "error": str(exc)})
                break
            if not found:
                if sys_path is not None and present and _regular_package_without(view, loc, globs):
                    break  # imported from here, where it holds no library: no copy of a later directory loads
                continue
            for path in found[:EXTENSION_MAX_FILES]:
                st = view.stat(path)
                size = st.size if st is not None else 0  # none: _one_file says why it cannot be opened
                if size > EXTENSION_MAX_BYTES:
                    rel = path[len(loc) :].lstrip("/") if path.startswith(loc) else path
                    err = f"{rel}: {size >> 20} MiB, past the probe's {EXTENSION_MAX_BYTES >> 20} MiB limit: not read"
                    out.append({"extension": ext, "path": rel, "error": err})
                    continue
                out.append({"extension": ext, **one(path, loc)})
            if len(found) > EXTENSION_MAX_FILES:
                out.append(
                    {
                        "extension": ext,
                        "path": loc,
                        "error": f"{len(found) - EXTENSION_MAX_FILES} more {ext} libraries not read (past the limit)",
                    }
                )
            break
    return out


def _regular_package_without(view: FileView, loc: str, globs: tuple[str, ...]) -> bool:
    """Whether every glob of an extension names a module inside a package (`lmcache/c_ops.*so`) that is a regular
    package in `loc` (its __init__.py there): Python's import takes such a package from the first sys.path entry
    holding it (a namespace portion earlier on the path does not count) and looks for the module only inside it,
    so with none there, a copy in a later directory is never loaded. DeepEP's two layouts (a top-level deep_ep_cpp
    beside the package) are never so."""
    if not all("/" in g for g in globs):
        return False
    return all(is_file(view, f"{loc}/{pkg}/__init__.py") for pkg in {g.split("/", 1)[0] for g in globs})


def _modules(view: FileView, loc: str) -> list[str] | str:
    """The package's lazily imported extension modules (MODULE_GLOB, common_ops left out), or why not listed."""
    try:
        found = glob(view, loc, MODULE_GLOB)
    except GlobLimit as exc:
        return str(exc)
    return sorted(p for p in found if not p.rsplit("/", 1)[-1].startswith("common_ops.") and kind_of(view, p) != "dir")


def _one_file(
    path: str,
    loc: str,
    libs: _Libraries,
    drivers: _Libraries,
    torch_lib: str | None,
    libcuda: str | None,
    global_torch: bool = False,
) -> dict[str, Any]:
    entry: dict[str, Any] = {"path": path[len(loc) :].lstrip("/") if path.startswith(loc) else path}
    try:
        elf, syms = _open(libs.view, path)
    except ElfError as exc:
        entry["error"] = str(exc)
        return entry
    try:
        undefined = syms.undefined()
        needed = list(syms.needed)
        entry["bytes_read"] = elf.bytes_read
    except ElfError as exc:
        entry["error"] = str(exc)
        return entry
    finally:
        elf.close()
    torch_names = [n for n in undefined if is_torch_symbol(n)]
    driver_names = [n for n in undefined if is_driver_symbol(n)]
    runtimes = [n for n in needed if _CUDART.fullmatch(n)]
    if runtimes:  # the CUDA runtime by major the file links (LMCache 0.4.3's c_ops: libcudart.so.12)
        entry["cuda_runtime"] = runtimes
    entry["torch_symbols"] = len(torch_names)
    entry["driver_symbols"] = len(driver_names)
    if torch_lib is not None and torch_names:
        unread: list[str] = []
        where = torch_closure(libs, torch_lib, needed, unread, global_torch)
        entry["torch_libs"] = [p.rsplit("/", 1)[-1] for p in where]
        if unread:
            entry["torch_unread"] = unread
        broken = [f"{p}: {got}" for p in where if isinstance(got := libs.get(p), str)]
        miss = _missing(libs, torch_names, where) if where and not broken else []
        if not where or broken:
            entry["torch_error"] = broken[0] if broken else f"no torch library found in {torch_lib}"
        elif miss and unread:  # a library the loader would search was not read: it may define them
            entry["torch_error"] = (
                f"{', '.join(unread)} needed but not in {torch_lib}, not read: whether the loader finds "
                f"{readable(miss[0])} ({miss[0]}) is unknown"
            )
        else:
            entry["torch_missing_count"] = len(miss)
            entry["torch_missing"] = miss[:MAX_LISTED]
    elif torch_names:
        entry["torch_error"] = "torch is not installed with a location"
    else:
        entry["torch_missing_count"] = 0
    if libcuda is not None:
        got = drivers.get(libcuda)
        if isinstance(got, str):
            entry["driver_error"] = got
        else:
            miss = _missing(drivers, driver_names, [libcuda])
            entry["driver_missing_count"] = len(miss)
            entry["driver_missing"] = miss[:MAX_LISTED]
    return entry
