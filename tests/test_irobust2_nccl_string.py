"""The NCCL version string of the library SGLANG_NCCL_SO_PATH names, read in bounded time (irobust2, an adversarial
pass over igap40's reading of "NCCL version X.Y.Z<NCCL_SUFFIX>+cudaA.B").

Found: the patch was read as an unbounded run of digits, free to split with the suffix (whose characters include
digits), so where a long run of digits followed "NCCL version X.Y." and no "+cuda" came, every split was tried: about
0.9 s a megabyte of digits. A library of a few such runs (16 MB, under the 64 MB read) took the jit probe past its 4 s:
it timed out and every jit fact was lost. Now the run is taken whole, up to 16 digits (the patch as before; a longer
run is no such string). The library is a small fake of NCCL's shape (tests/elfwriter.py), read by a fresh process."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import (
    clean_env,
    run_stackcheck,
    scrubbed_environ,  # noqa: F401 (the autouse fixture)
)
from elfwriter import build_so

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_WINDOW


def test_long_digit_runs_after_an_nccl_version_are_read_in_time(tmp_path: Path) -> None:
    # fails on the parent: "probe timed out after 4s", and the jit facts were empty
    lib = tmp_path / "lib" / "libnccl.so.2"
    lib.parent.mkdir()
    runs = b"".join(b"\0NCCL version 2.27." + b"7" * (4 << 20) + b"\0" for _ in range(4))
    lib.write_bytes(build_so(defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW], soname="libnccl.so.2") + runs
                    + b"\0NCCL version 2.27.7+cuda12.9\0")  # fmt: skip
    env = clean_env(SGLANG_NCCL_SO_PATH=str(lib), XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = run_stackcheck("probe", "--format", "json", env=env, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    assert next(p for p in doc["probes"] if p["name"] == "jit")["status"] == "ok", doc["probes"]
    jit = doc["facts"]["jit"]
    assert jit["nccl_so_path_version"] == "2.27.7" and jit["nccl_so_path_cuda"] == "12.9", jit
