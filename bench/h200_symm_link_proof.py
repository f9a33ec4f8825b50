"""H200 proof for the `--enable-symm-mem` hops (isymm, isymm2): what the jit probe predicts for torch's load_inline
build of SGLang's NCCL allocator, against a real build of the same shape on the box.

SGLang 0.5.1-0.5.23 build their symmetric-memory allocator at start with torch.utils.cpp_extension.load_inline
(C++ sources only, with_cuda=True, extra_ldflags=['-lnccl']; manifests/checks.json symm-mem-allocator-* cite the
wheels). This script builds an extension of that shape, with a source written here (one C++ function that includes
cuda_runtime.h as SGLang 0.5.5+'s allocator source does, nothing of SGLang's), in the system Python's real torch, and
compares the first step that fails with the first hop the probe's facts say fails (in torch's order: ninja, the CUDA
home, the C++ compiler, cuda_runtime.h, the -lnccl link). Run on an H100 (2026-12-05) with a source that included
nothing, CUDA_HOME empty compiled and then failed the link at `cannot find -lcudart` (torch's with_cuda link adds
-L<CUDA home>/lib64 -lcudart), a hop the probe did not read then: igap24 added it (jit.libcudart_so_found, rule
symm-mem-allocator-cudart-link), "cudart_link" below, after the -lnccl hop (ld reports both; -lnccl is read first).

    PYTHONPATH=$PWD python3 bench/h200_symm_link_proof.py --out "$OUT"

Variants:
1. the box as it is;
2. LIBRARY_PATH pointed at a temporary directory holding a `libnccl.so` link to the NCCL library torch loads
   (the pip wheel's libnccl.so.2), the fix the rule's message names: the probe must then say found, and the link
   must succeed (only run when variant 1 got as far as the link);
3. each earlier hop broken on purpose: ninja's directory taken off PATH, `CXX` naming an absent compiler, CUDA_HOME
   an empty directory (the probe and torch's build must name the same first failure);
4. cuda-home-no-libcudart-so (igap24): CUDA_HOME a temporary copy of the box's CUDA home made of links to its
   entries (bin, include, nvvm, targets, version.json...) but with a lib64 that holds only the versioned
   libcudart.so.N, as a CUDA home of pip wheels has (nvidia-cuda-runtime: lib/libcudart.so.12 / .13): headers found,
   then 'cannot find -lcudart' unless a libcudart.so is elsewhere on the link (LIBRARY_PATH, /usr/lib/<triplet>),
   which the probe must then find too; the libnccl.so of variant 2 on LIBRARY_PATH where variant 1 lacked one, so
   the -lnccl hop does not hide it;
5. pip-cuda-home (igap24): CUDA_HOME the system Python's nvidia/cu13 (nvidia-cuda-nvcc 13 and nvidia-cuda-runtime 13
   wheels: bin/nvcc, include/cuda_runtime.h, lib/libcudart.so.13), only where that directory holds bin/nvcc and
   include/cuda_runtime.h.

Prints PROOF OK or PROOF FAILED per variant; writes $OUT/symm_link_proof.json.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HOPS = (
    ("ninja", "ninja_found"),
    ("cuda_home", "chosen_by"),
    ("cxx", "cxx_found"),
    ("cuda_runtime_h", "cxx_cuda_runtime_h_found"),
    ("link", "libnccl_so_found"),
    ("cudart_link", "libcudart_so_found"),
)

BUILD = r"""
import sys, traceback
from torch.utils.cpp_extension import load_inline
src = "#include <cuda_runtime.h>\nint sc_probe_one() { return (int)cudaSuccess + 1; }"
try:
    m = load_inline(name="sc_symm_link_probe", cpp_sources=[src], functions=["sc_probe_one"], with_cuda=True,
                    extra_ldflags=["-lnccl"], build_directory=sys.argv[1], verbose=True)
    print("BUILD-OK", m.sc_probe_one())
except BaseException as exc:
    print("BUILD-FAILED", type(exc).__name__, str(exc)[-4000:])
    traceback.print_exc()
"""


def predicted(jit: dict[str, Any]) -> str | None:
    """The first hop the facts say fails (None: all pass; 'unknown:HOP' where a hop was not read)."""
    for hop, key in HOPS:
        value = jit.get(key)
        if key == "chosen_by":
            if value == "none":
                return hop
            if value is None:
                return f"unknown:{hop}"
            continue
        if value is False:
            return hop
        if value is None:
            return f"unknown:{hop}"
    return None


def observed(text: str) -> str | None:
    if "BUILD-OK" in text:
        return None
    low = text.lower()
    if "ninja is required" in low or "ninja --version" in low:
        return "ninja"
    if "cuda_home" in low and ("not set" in low or "environment variable" in low):
        return "cuda_home"
    if "cuda_runtime.h" in low and "no such file" in low:
        return "cuda_runtime_h"
    if "cannot find -lnccl" in low or "unable to find library -lnccl" in low:
        return "link"
    if "cannot find -lcudart" in low:
        return "cudart_link"  # torch's with_cuda link (-L<CUDA home>/lib64 -lcudart): a hop the probe does not read
    if ("c++" in low or "g++" in low) and ("not found" in low or "no such file or directory" in low):
        return "cxx"
    return "other"


def audit_jit(env: dict[str, str]) -> dict[str, Any]:
    argv = [sys.executable, "-m", "stackcheck", "audit", "--format", "json"]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, env=env, timeout=300)
    doc = json.loads(proc.stdout)
    return dict(doc.get("facts", {}).get("jit") or {})


def variant(name: str, env: dict[str, str], out: Path) -> dict[str, Any]:
    env = {**env, "STACKCHECK_CACHE_DIR": tempfile.mkdtemp(prefix="sc-cache-"), "STACKCHECK_PLAN_CACHE": "0"}
    jit = audit_jit(env)
    build_dir = tempfile.mkdtemp(prefix="sc-build-")
    t0 = time.monotonic()
    argv = [sys.executable, "-c", BUILD, build_dir]
    proc = subprocess.run(argv, check=False, capture_output=True, text=True, env=env, timeout=400)
    text = proc.stdout + proc.stderr
    (out / f"build-{name}.log").write_text(text, encoding="utf-8")
    want, got = predicted(jit), observed(text)
    ok = want == got
    row = {"variant": name, "predicted_first_failure": want, "observed_first_failure": got, "agree": ok,
           "build_s": round(time.monotonic() - t0, 1),
           "jit": {k: jit.get(k) for k in ("ninja_found", "chosen_by", "toolkit", "cxx_found", "cxx",
                                           "cxx_cuda_runtime_h_found", "libnccl_so_found", "libnccl_so",
                                           "libcudart_so_found", "libcudart_so", "libcudart_so_reason",
                                           "libnccl_so_dirs")}}  # fmt: skip
    print(f"{name}: predicted {want!r}, observed {got!r}: {'PROOF OK' if ok else 'PROOF FAILED'}")
    print("  jit facts:", json.dumps(row["jit"])[:600])
    if got == "other":
        print("  build output tail:", text[-1500:])
    return row


def _nvidia_dirs() -> list[str]:
    """The system Python's `nvidia` namespace package directories (where the pip CUDA and NCCL wheels install)."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    return list(spec.submodule_search_locations or []) if spec else []


def _pip_home(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "bin", "nvcc")) and os.path.isfile(
        os.path.join(path, "include", "cuda_runtime.h")
    )


def no_libcudart_home(home: str) -> str | None:
    """A temporary CUDA home: a link to each entry of `home` but lib64 and lib, and a lib64 holding links to its
    versioned libcudart.so.N files only (None where `home` has none)."""
    real_lib = os.path.join(home, "lib64") if os.path.isdir(os.path.join(home, "lib64")) else os.path.join(home, "lib")
    versioned = sorted(glob.glob(os.path.join(real_lib, "libcudart.so.*")))
    if not versioned:
        return None
    fake = tempfile.mkdtemp(prefix="sc-cuda-no-cudart-")
    for name in os.listdir(home):
        if name not in ("lib64", "lib"):
            os.symlink(os.path.join(home, name), os.path.join(fake, name))
    os.mkdir(os.path.join(fake, "lib64"))
    for path in versioned:
        os.symlink(os.path.realpath(path), os.path.join(fake, "lib64", os.path.basename(path)))
    return fake


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or tempfile.mkdtemp())
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    rows = [variant("as-is", env, out)]
    nccl_env: dict[str, str] = {}  # LIBRARY_PATH with a libnccl.so link, where the box lacks one
    if rows[0]["observed_first_failure"] == "link":
        libs = []
        for base in _nvidia_dirs():
            libs += glob.glob(os.path.join(base, "nccl", "lib", "libnccl.so.2"))
        if libs:
            d = tempfile.mkdtemp(prefix="sc-nccl-link-")
            os.symlink(libs[0], os.path.join(d, "libnccl.so"))
            lp = env.get("LIBRARY_PATH")
            nccl_env = {"LIBRARY_PATH": d + (":" + lp if lp else "")}
            rows.append(variant("library-path", {**env, **nccl_env}, out))
        else:
            print("library-path: skipped (no nvidia/nccl/lib/libnccl.so.2 in the system Python)")
    # each hop broken on purpose, in a copy of the box's environment: the probe must name the same first failure
    # that torch's build meets (the box itself passes every hop, so the as-is variant alone proves no failure)
    path_dirs = env.get("PATH", "").split(os.pathsep)
    no_ninja = [d for d in path_dirs if d and not os.path.exists(os.path.join(d, "ninja"))]
    if len(no_ninja) < len(path_dirs):
        rows.append(variant("no-ninja", {**env, "PATH": os.pathsep.join(no_ninja)}, out))
    rows.append(variant("cxx-absent", {**env, "CXX": "/nonexistent/bin/g++"}, out))
    empty = tempfile.mkdtemp(prefix="sc-empty-cuda-")
    rows.append(variant("cuda-home-empty", {**env, "CUDA_HOME": empty, "CUDA_PATH": empty}, out))
    # igap24: a CUDA home with its headers and no unversioned libcudart.so (the -lcudart hop broken on purpose)
    home = rows[0]["jit"].get("toolkit")
    if isinstance(home, str) and os.path.isdir(os.path.join(home, "include")):
        fake = no_libcudart_home(home)
        if fake is None:
            print("cuda-home-no-libcudart-so: skipped (no libcudart.so.N in the box's CUDA home)")
        else:
            rows.append(variant("cuda-home-no-libcudart-so", {**env, **nccl_env, "CUDA_HOME": fake, "CUDA_PATH": fake},
                                out))  # fmt: skip
    else:
        print(f"cuda-home-no-libcudart-so: skipped (the probe named no CUDA home with include/: {home!r})")
    pip_home = next((os.path.join(b, "cu13") for b in _nvidia_dirs() if _pip_home(os.path.join(b, "cu13"))), None)
    if pip_home is not None:
        rows.append(variant("pip-cuda-home", {**env, **nccl_env, "CUDA_HOME": pip_home, "CUDA_PATH": pip_home}, out))
    else:
        print("pip-cuda-home: skipped (no nvidia/cu13 with bin/nvcc and include/cuda_runtime.h in the system Python)")
    (out / "symm_link_proof.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
