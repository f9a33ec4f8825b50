"""Ground truth for readings the probes take without running anything (run on the device; prints, never fails).

The jit probe reads, without loading or running them, the NCCL version a library was built as (its "NCCL version
X.Y.Z" string: `nccl_so_path_version`) and GNU ld's version (its --version text in .rodata: `gnu_ld_version`). Here
the real box answers the same questions by running them: each libnccl.so* the box has is loaded with ctypes and asked
`ncclGetVersion` (NCCL encodes X.Y.Z as X*10000 + Y*100 + Z from 2.9), and the PATH's `ld --version` is run. The
CUDA build the probe reads from the same string (`nccl_library_build`) is set beside a plain byte search of the whole
file for "+cuda", and for each C++ compiler the box has (CXX unset, g++ / g++-N on the PATH, /opt/gcc/bin/g++) the ld
the probe says a torch extension's link runs is set beside the one that compiler's link really runs (`$CXX -x c++ -
-Wl,--version`: collect2 passes --version to the ld it chose, which prints its own banner). The script prints one line
per reading: the probe's answer, the box's answer, and whether they agree.

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

import re
import shutil

from stackcheck.probes.jit import gnu_ld_version, nccl_library_build, nccl_so_path
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


def compilers() -> list[str]:
    found = [""]
    for name in ("g++", "g++-12", "g++-13", "g++-14", "/opt/gcc/bin/g++", "/opt/gcc/bin/c++"):
        path = shutil.which(name) if "/" not in name else (name if os.path.exists(name) else None)
        if path and path not in found:
            found.append(path)
    return found


def linked_ld(cxx: str) -> str:
    """The first line the ld a real link by `cxx` runs prints for --version."""
    try:
        run = subprocess.run(
            [*cxx.split(), "-x", "c++", "-", "-o", "/tmp/h200-ld-probe.out", "-Wl,--version"],
            input="int main() { return 0; }\n",
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"not run: {exc}"
    lines = [ln for ln in run.stdout.splitlines() if ln.startswith("GNU ld") or "LLD" in ln or "gold" in ln]
    m = re.search(r"(\d+)\.(\d+)", lines[0].rsplit(")", 1)[-1]) if lines else None
    return f"{lines[0]} -> {m.group(1)}.{m.group(2)}" if m else f"rc={run.returncode} {run.stderr.strip()[:160]!r}"


def main() -> int:
    view = HostView()
    for path in libraries():
        facts = nccl_so_path(dict(os.environ, SGLANG_NCCL_SO_PATH=path), view)
        probe = facts.get("nccl_so_path_version") or f"null ({facts.get('nccl_so_path_version_reason')})"
        truth = loaded_version(path)
        print(f"nccl {path}: probe {probe} / ncclGetVersion {truth}: {'agree' if probe == truth else 'DIFFER'}")
        _, cuda, _ = nccl_library_build(view, path)
        with open(path, "rb") as f:
            raw = sorted(
                {m.group(1).decode() for m in re.finditer(rb"NCCL version [0-9.]+[^+\0]*\+cuda([0-9.]+)", f.read())}
            )
        same = [cuda] == raw
        print(f"nccl {path}: probe CUDA build {cuda} / bytes say {raw}: {'agree' if same else 'DIFFER'}")
    for cxx in compilers():
        env = dict(os.environ)
        env.pop("CXX", None)
        if cxx:
            env["CXX"] = cxx
        version, why = gnu_ld_version(env, view)
        truth = linked_ld(cxx or "c++")
        probe = f"{version[0]}.{version[1]}" if version else None
        agree = "agree" if probe and truth.endswith(" " + probe) else ("unknown (probe)" if not probe else "DIFFER")
        print(f"CXX={cxx or '(unset)'}: probe {probe} {why[:160]!r} / link runs: {truth}: {agree}")
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
