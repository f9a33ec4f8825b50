"""CUDA runtime libraries probe: which CUDA sonames (libcudart.so.12, libnvrtc.so.13, ...) the dynamic loader
can find on this box at all, without naming an object that needs them.

A kernel package built for one CUDA major links that major's runtime (sgl-kernel's PyPI wheels are CUDA 12
builds: `libcudart.so.12`); on a box whose torch is a CUDA 13 build, torch's pip wheels bring only the CUDA
13 libraries, and the kernel package fails to load with "libcudart.so.12: cannot open shared object file"
unless some copy is on the loader's path. This probe answers that question cheaply in the first round:
the directories of LD_LIBRARY_PATH, the ld.so cache (/etc/ld.so.cache, read, never `ldconfig`) and the
default directories are looked at for each soname in `SONAMES`, through the FileView. The pip
wheels' own directories (nvidia/cuda_runtime/lib, ...) are reached only through an object's RPATH, which
the `--deep` libs probe follows; the rules read the wheels from the packages section instead. One system
library is looked for the same way: libnuma.so.1, which the kernel packages' common_ops links (no RPATH there
either) and which no pip wheel brings.

Facts: `cuda_libs: {"libcudart.so.12": "/usr/local/cuda-12.8/lib64/libcudart.so.12" | null, ...,
"ld_cache": "file" | "unavailable: reason"}`.
"""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.probes.jit import view_of
from stackcheck.readers.fsview import FileView

if TYPE_CHECKING:
    from typing import Any, ClassVar

SONAMES = (
    *(f"lib{name}.so.{major}" for name in ("cudart", "nvrtc", "cublas", "cublasLt") for major in (11, 12, 13)),
    # not a CUDA library, but a system one the kernel packages link (common_ops of sgl-kernel 0.1.6 to sglang-kernel
    # 0.4.x, read in the wheels) and no pip wheel brings: a slim image without it fails `import sgl_kernel`
    "libnuma.so.1",
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


def _ld_cache(view: FileView, sonames: tuple[str, ...] = SONAMES) -> tuple[dict[str, str], str]:
    """soname -> a path the ld.so cache records for it, and where the answer came from.

    The cache's string table holds every entry's path, and ldconfig points each entry's soname into the
    tail of its path, so a path ending in "/<soname>" NUL is looked up in the bytes directly: no full parse
    (stackcheck.readers.libs has one, for --deep, but importing it costs start-up time here)."""
    try:
        data = view.read_bytes(LD_CACHE, LD_CACHE_CAP)
    except OSError as exc:
        return {}, f"unavailable: {LD_CACHE}: {exc.strerror or exc}"
    if not data.startswith(_CACHE_MAGICS):
        return {}, f"unavailable: {LD_CACHE}: not an ld.so cache"
    found: dict[str, str] = {}
    for soname in sonames:
        tail = b"/" + soname.encode() + b"\0"
        at = data.find(tail)
        while at >= 0:
            start = data.rfind(b"\0", 0, at) + 1
            path = data[start : at + 1 + len(soname)].decode("utf-8", "replace")
            if not _is_elf32(view, path):  # a multiarch box's i386 copy: the 64-bit loader passes it over
                found[soname] = path
                break
            at = data.find(tail, at + 1)
    return found, "file"


def _is_elf32(view: FileView, path: str) -> bool:
    """Whether `path` is a 32-bit ELF file (one small read; a file that cannot be read is not judged here)."""
    try:
        head = view.read_bytes(path, 5)
    except (OSError, ValueError):
        return False
    return head[:4] == b"\x7fELF" and head[4:5] == b"\x01"


def probe_cuda_libs(env: Mapping[str, str], view: FileView, sonames: tuple[str, ...] = SONAMES) -> dict[str, Any]:
    """The `cuda_libs` facts section (see the module docstring); `sonames` others than the section's (the
    driver's libcuda.so.1 for the kernel symbol probe) are found the same way."""
    dirs = [d.rstrip("/") for d in (env.get("LD_LIBRARY_PATH") or "").split(":") if d.startswith("/")]
    cache, how = _ld_cache(view, sonames)
    listings: dict[str, set[str]] = {}

    def names_in(d: str) -> set[str]:
        # one listing per directory (a stat per soname would resolve every path component again)
        if d not in listings:
            try:
                listings[d] = set(view.listdir(d))
            except OSError:
                listings[d] = set()
        return listings[d]

    def first_in(candidates: list[str] | tuple[str, ...], soname: str) -> str | None:
        for d in candidates:
            if soname in names_in(d):
                st = view.stat(f"{d}/{soname}")
                if st is not None and st.kind == "file":
                    return f"{d}/{soname}"
        return None

    out: dict[str, Any] = {}
    for soname in sonames:
        # the loader's order: LD_LIBRARY_PATH, the cache, the default directories (a library installed without
        # running ldconfig)
        out[soname] = first_in(dirs, soname) or cache.get(soname) or first_in(DEFAULT_DIRS, soname)
    out["ld_cache"] = how
    return out


class CudaLibsProbe(Probe):
    name: ClassVar[str] = "cuda_libs"
    timeout_s: ClassVar[float] = 3.0
    sections: ClassVar[tuple[str, ...]] = ("cuda_libs",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        libs = probe_cuda_libs(ctx.env, view_of(ctx))
        how = str(libs.get("ld_cache"))
        if how != "file" and not how.startswith("unavailable: /etc/ld.so.cache: No such file"):
            return ProbeResult({"cuda_libs": libs}, "partial", f"ld.so cache {how}")
        return ProbeResult({"cuda_libs": libs})
