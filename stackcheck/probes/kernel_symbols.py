"""The kernel symbol probe (facts.kernel_symbols): the undefined dynamic symbols of the installed sgl-kernel's
common_ops libraries looked up in the installed torch's libraries and the driver's libcuda.so.1, read from the
files (stackcheck/readers/kernelsymbols.py); neither torch nor sgl_kernel is imported. Other packages' compiled
torch extensions an SGLang launch may load (LMCache's c_ops, torchao's _C, DeepEP, DeepGEMM, flash-attn, vLLM,
xFormers: readers/kernelsymbols.py EXTENSIONS) are read the same way where installed (facts.kernel_symbols.
extensions; about 6 ms more for torchao 0.13.0's three libraries and sgl-deep-ep 0.1.1's 44 MB one, 0.2 ms when
none is installed, bench/bench_kernel_symbols.py --site); only where a kernel package is installed.

It costs a few milliseconds (the GNU hash tables answer each name with a few reads; 5-8 ms on the 2-core box
for sgl-kernel 0.3.0 and 0.3.21 against torch 2.7.1-2.8.0, bench/bench_kernel_symbols.py), so it is part of
every audit and gate, beside the packages probe it waits for. It reads a box seen through a HostView (this
host or --root) only: inside an image (--image) the files come out of compressed layers, and torch's dynamic
string table sits at the end of a 1 GB library, so there it is skipped and the release-number checks decide
(an image's libcuda is the host's at run time anyway).

On this host, with a cache directory (ProbeContext.cache_dir), each library's answer is kept by its stamp and the
stamps of the torch and libcuda libraries it was resolved against (readers/kernelsymbols.py _KeptAnswers): a
repeat audit or gate of an unchanged box serves the whole section from them, reading no ELF file; one stamp
changed and the section is read as without a cache."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult, view_of
from stackcheck.readers.fsview import FileView, HostView

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import ClassVar

LIBCUDA = "libcuda.so.1"


def find_libcuda(env: Mapping[str, str], view: FileView) -> str | None:
    """The libcuda.so.1 the loader would load (LD_LIBRARY_PATH, the ld.so cache, the default directories),
    skipping a copy that is not a 64-bit library (the ld.so cache of a desktop lists the i386 one too). None where
    the loader's copy is not known (cudalibs' `unreadable`: a copy this process cannot read, or LD_LIBRARY_PATH's
    relative element read from a working directory not known): a default directory's copy is not the loader's then,
    and the release-number checks decide."""
    from stackcheck.probes.cudalibs import DEFAULT_DIRS, probe_cuda_libs
    from stackcheck.readers.elf import ElfError, ElfFile

    libs = probe_cuda_libs(env, view, (LIBCUDA,))
    if LIBCUDA in (libs.get("unreadable") or {}):
        return None
    first = libs.get(LIBCUDA)
    candidates = [first] if isinstance(first, str) else []
    candidates += [f"{d}/{LIBCUDA}" for d in DEFAULT_DIRS if f"{d}/{LIBCUDA}" != first]
    for path in candidates:
        try:
            with ElfFile(path, view):
                return path
        except ElfError:
            continue
    return None


def _sys_path(ctx: ProbeContext) -> list[str] | None:
    """The target's sys.path the packages probe searched (ProbeContext.search_dirs: path_dirs, else
    facts.python.sys_path), the order an extension's copies are imported in, led by the entry the gated command
    puts first (ProbeContext.launch_first_path: the working directory of `python -m`, which the python probe leaves
    out); None where neither is known (the packages' locations then, torch's first)."""
    launch_first = ctx.launch_sys_path0()
    first = [launch_first] if launch_first else []
    if ctx.path_dirs is not None:
        return [*first, *ctx.path_dirs]
    python = ctx.facts.get("python")
    sys_path = python.get("sys_path") if isinstance(python, dict) else None
    return [*first, *(p for p in sys_path if isinstance(p, str))] if isinstance(sys_path, list) else None


class KernelSymbolsProbe(Probe):
    name: ClassVar[str] = "kernel_symbols"
    timeout_s: ClassVar[float] = 5.0
    sections: ClassVar[tuple[str, ...]] = ("kernel_symbols",)
    needs: ClassVar[tuple[str, ...]] = ("packages", "python")  # (python: its version, ProbeContext.launch_sys_path0)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        from stackcheck.facts.model import KERNEL_PACKAGES

        packages = ctx.facts.get("packages")
        if not isinstance(packages, dict):
            return ProbeResult({}, "skipped", "no package facts")
        if not any(isinstance(packages.get(n), dict) and packages[n].get("installed") for n in KERNEL_PACKAGES):
            return ProbeResult({}, "skipped", "no kernel package installed")  # the ELF reader is not imported
        from stackcheck.readers.kernelsymbols import probe_kernel_symbols

        view = view_of(ctx)
        if not isinstance(view, HostView):
            # an image's files come out of compressed layers: torch's dynamic string table lies at the end of a
            # 1 GB libtorch_cuda.so (patchelf moves it there), seconds of decompression on the audit's path
            return ProbeResult({}, "skipped", "not read inside an image: the release-number checks decide")
        libcuda = find_libcuda(ctx.loader_environ, view)  # the launch's LD_LIBRARY_PATH, where a gate has one
        # TORCH_USE_RTLD_GLOBAL (any value): torch/__init__.py imports torch._C with RTLD_GLOBAL, which puts
        # libtorch_python.so in every later library's scope
        global_torch = bool(ctx.loader_environ.get("TORCH_USE_RTLD_GLOBAL"))
        # each library's answer kept by its stamps and those of the torch/libcuda libraries it was resolved against
        section = probe_kernel_symbols(
            packages, view, libcuda, global_torch=global_torch, cache_dir=ctx.cache_dir, sys_path=_sys_path(ctx)
        )
        if section is None:
            return ProbeResult({}, "skipped", "no kernel package installed")
        bad = section.get("error") or next(
            (
                f.get("error") or f.get("torch_error")
                for f in section["files"]
                if f.get("error") or f.get("torch_error")
            ),
            None,
        )
        if bad:
            return ProbeResult({"kernel_symbols": section}, "partial", str(bad))
        return ProbeResult({"kernel_symbols": section})
