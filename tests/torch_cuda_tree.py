"""A site-packages in the shape of torch's CUDA wheels, built with gcc for the shared-library probe's tests
(tests/readers/test_libs_second_hop.py, test_kept.py): a stand-in torch/lib/libtorch_cuda.so with an RPATH like
torch's into nvidia/cuda_runtime/lib and nvidia/cusparse/lib, a libcusparse.so.12 with the cuSPARSE wheel's RUNPATH
($ORIGIN and ../../nvjitlink/lib) calling a 12.4 nvJitLink entry point, and a libnvJitLink.so.12 exporting one entry
point per minor release under its one version node. The sources are written here, not copied."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

GCC = shutil.which("gcc")
JIT = "libnvJitLink.so.12"
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc not installed")


def build_library(out: Path, src: str, *extra: str, script: str | None = None) -> Path:
    """The shared library `out` compiled from the C source `src` (gcc -shared -fPIC, then `extra`), with the version
    script `script` where given."""
    assert GCC is not None
    out.parent.mkdir(parents=True, exist_ok=True)
    c = out.parent / (out.name + ".c")
    c.write_text(src)
    args = [GCC, "-shared", "-fPIC", "-o", str(out), str(c), *extra]
    if script is not None:
        (out.parent / (out.name + ".map")).write_text(script)
        args.append(f"-Wl,--version-script,{out.parent / (out.name + '.map')}")
    subprocess.run(args, check=True, timeout=60)
    c.unlink()
    return out


def jitlink(d: Path, minors: list[int]) -> Path:
    """A libnvJitLink.so.12 in `d` exporting one entry point per minor release, all under the one version node."""
    src = " ".join(f"int __nvJitLinkComplete_12_{m}(void){{return {m};}}" for m in minors)
    script = f"{JIT} {{ global: __nvJitLinkComplete_*; local: *; }};"
    return build_library(d / JIT, src, f"-Wl,-soname,{JIT}", script=script)


def torch_stand_in(site: Path, cusparse_dir: Path, calls: bool = True) -> Path:
    """torch/lib/libtorch_cuda.so needing libcudart and libcusparse through an RPATH like torch's (calling into
    the stand-in libcusparse when `calls`; --no-as-needed keeps both DT_NEEDED entries either way)."""
    cudart = build_library(site / "nvidia/cuda_runtime/lib/libcudart.so.12", "int sct_rt(void){return 0;}",
                           "-Wl,-soname,libcudart.so.12")  # fmt: skip
    rpath = "$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/cusparse/lib"
    src = "int sct_sp(void); int sct_torch(void){return sct_sp();}" if calls else "int sct_torch(void){return 0;}"
    return build_library(site / "torch/lib/libtorch_cuda.so", src,
                         "-Wl,--no-as-needed", "-Wl,--disable-new-dtags", f"-Wl,-rpath,{rpath}", f"-L{cusparse_dir}",
                         "-l:libcusparse.so.12", f"-L{cudart.parent}", "-l:libcudart.so.12")  # fmt: skip


def torch_cuda_site(tmp: Path) -> Path:
    """`tmp`/site: torch/lib/libtorch_cuda.so (torch_stand_in) -> nvidia/cusparse/lib/libcusparse.so.12 (RUNPATH to
    nvjitlink, needing __nvJitLinkComplete_12_4) -> nvidia/nvjitlink/lib/libnvJitLink.so.12 with minors 0-4."""
    site = tmp / "site"
    new = jitlink(site / "nvidia/nvjitlink/lib", [0, 1, 2, 3, 4])
    build_library(site / "nvidia/cusparse/lib/libcusparse.so.12",
                  "int __nvJitLinkComplete_12_4(void); int sct_sp(void){return __nvJitLinkComplete_12_4();}",
                  "-Wl,-soname,libcusparse.so.12", "-Wl,--enable-new-dtags",
                  "-Wl,-rpath,$ORIGIN:$ORIGIN/../../nvjitlink/lib", f"-L{new.parent}", f"-l:{JIT}",
                  script="SCT_SP { global: sct_sp; local: *; };")  # fmt: skip
    torch_stand_in(site, site / "nvidia/cusparse/lib")
    return site


def torch_facts(site: Path) -> dict[str, Any]:
    """The facts of a torch 2.5.1 installed in `site`."""
    return {"packages": {"torch": {"installed": True, "version": "2.5.1", "location": str(site)}}}
