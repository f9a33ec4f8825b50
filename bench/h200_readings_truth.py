"""Ground truth for readings the probes take without running anything (run on the device; prints, never fails).

The jit probe reads, without loading or running them, the NCCL version a library was built as (its "NCCL version
X.Y.Z" string: `nccl_so_path_version`) and GNU ld's version (its --version text in .rodata: `gnu_ld_version`). Here
the real box answers the same questions by running them: each libnccl.so* the box has is loaded with ctypes and asked
`ncclGetVersion` (NCCL encodes X.Y.Z as X*10000 + Y*100 + Z from 2.9), and the PATH's `ld --version` is run. The
script prints one line per reading: the probe's answer, the box's answer, and whether they agree.

    python3 bench/h200_readings_truth.py
"""

from __future__ import annotations

import ctypes
import glob
import os
import site
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from stackcheck.probes.jit import gnu_ld_version, nccl_so_path
from stackcheck.readers.fsview import HostView


def libraries() -> list[str]:
    dirs = [*site.getsitepackages(), site.getusersitepackages()]
    pats = ["/usr/lib/x86_64-linux-gnu/libnccl.so*", "/usr/local/cuda*/lib64/libnccl.so*"]
    pats += [f"{d}/nvidia/*/lib/libnccl.so*" for d in dirs]
    for prefix in ("/opt", "/usr/local/lib"):
        pats += [f"{prefix}/*/.venv/lib/python3*/site-packages/nvidia/*/lib/libnccl.so*"]
    return sorted({os.path.realpath(p) for pat in pats for p in glob.glob(pat)})


def loaded_version(path: str) -> str:
    try:
        lib = ctypes.CDLL(path)
        code = ctypes.c_int()
        if lib.ncclGetVersion(ctypes.byref(code)) != 0:
            return "ncclGetVersion failed"
    except (OSError, AttributeError) as exc:
        return f"not loaded: {exc}"
    v = code.value
    return f"{v // 10000}.{v % 10000 // 100}.{v % 100}"


def main() -> int:
    view = HostView()
    for path in libraries():
        facts = nccl_so_path(dict(os.environ, SGLANG_NCCL_SO_PATH=path), view)
        probe = facts.get("nccl_so_path_version") or f"null ({facts.get('nccl_so_path_version_reason')})"
        truth = loaded_version(path)
        print(f"nccl {path}: probe {probe} / ncclGetVersion {truth}: {'agree' if probe == truth else 'DIFFER'}")
    version, why = gnu_ld_version(dict(os.environ), view)
    try:
        run = subprocess.run(["ld", "--version"], check=False, capture_output=True, text=True, timeout=30)
        first = run.stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError) as exc:
        first = f"ld not run: {exc}"
    print(f"ld: probe {version} {why!r} / ld --version: {first}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
