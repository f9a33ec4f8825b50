"""H200 proof for the `--enable-symm-mem` hops (isymm, isymm2): what the jit probe predicts for torch's load_inline
build of SGLang's NCCL allocator, against a real build of the same shape on the box.

SGLang 0.5.1-0.5.23 build their symmetric-memory allocator at start with torch.utils.cpp_extension.load_inline
(C++ sources only, with_cuda=True, extra_ldflags=['-lnccl']; manifests/checks.json symm-mem-allocator-* cite the
wheels). This script builds an extension of that shape, with a source written here (one C++ function that includes
cuda_runtime.h as SGLang 0.5.5+'s allocator source does, nothing of SGLang's), in the system Python's real torch, and
compares the first step that fails with the first hop the probe's facts say fails (in torch's order: ninja, the CUDA
home, the C++ compiler, cuda_runtime.h, the -lnccl link). Run on an H100 (2026-12-05) with a source that included
nothing, CUDA_HOME empty compiled and then failed the link at `cannot find -lcudart` (torch's with_cuda link adds
-L<CUDA home>/lib64 -lcudart), a hop the probe does not read: "cudart_link" below.

    PYTHONPATH=$PWD python3 bench/h200_symm_link_proof.py --out "$OUT"

Variants:
1. the box as it is;
2. LIBRARY_PATH pointed at a temporary directory holding a `libnccl.so` link to the NCCL library torch loads
   (the pip wheel's libnccl.so.2), the fix the rule's message names: the probe must then say found, and the link
   must succeed (only run when variant 1 got as far as the link);
3. each earlier hop broken on purpose: ninja's directory taken off PATH, `CXX` naming an absent compiler, CUDA_HOME
   an empty directory (the probe and torch's build must name the same first failure).

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
           "jit": {k: jit.get(k) for k in ("ninja_found", "chosen_by", "cxx_found", "cxx", "cxx_cuda_runtime_h_found",
                                           "libnccl_so_found", "libnccl_so", "libnccl_so_dirs")}}  # fmt: skip
    print(f"{name}: predicted {want!r}, observed {got!r}: {'PROOF OK' if ok else 'PROOF FAILED'}")
    print("  jit facts:", json.dumps(row["jit"])[:600])
    if got == "other":
        print("  build output tail:", text[-1500:])
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT") or tempfile.mkdtemp())
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    rows = [variant("as-is", env, out)]
    if rows[0]["observed_first_failure"] == "link":
        import importlib.util

        spec = importlib.util.find_spec("nvidia")
        libs = []
        for base in list(spec.submodule_search_locations or []) if spec else []:
            libs += glob.glob(os.path.join(base, "nccl", "lib", "libnccl.so.2"))
        if libs:
            d = tempfile.mkdtemp(prefix="sc-nccl-link-")
            os.symlink(libs[0], os.path.join(d, "libnccl.so"))
            lp = env.get("LIBRARY_PATH")
            rows.append(variant("library-path", {**env, "LIBRARY_PATH": d + (":" + lp if lp else "")}, out))
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
    (out / "symm_link_proof.json").write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
