"""bench/h200_kernel_symbols.py (torch's own libraries as stand-in extensions) on a fake torch/lib: a library torch
loads as a member of torch._C's group (as torch 2.11's libtorch_nvshmem.so, whose DT_NEEDED does not reach
libc10_cuda.so) may leave names missing from its own closure that the group defines; those are counted apart and
do not fail the run, while a name no library of the group defines still does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import write_so

ROOT = Path(__file__).resolve().parents[2]
GET = "_ZN3c104cuda14getDeviceCountEv"  # a c10::cuda function, exported by libc10_cuda.so


def _run(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "h200_kernel_symbols.py"), str(site), "--runs", "1"],
        capture_output=True, text=True, timeout=120, check=False, env={"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": ""},
    )  # fmt: skip


def test_names_resolved_in_torchs_own_group_are_not_missing(tmp_path: Path) -> None:
    lib = tmp_path / "torch" / "lib"
    lib.mkdir(parents=True)
    write_so(lib / "libc10.so", defined=["_ZN3c1019UndefinedTensorImpl10_singletonE"])
    write_so(lib / "libc10_cuda.so", defined=[GET], needed=["libc10.so"])
    write_so(lib / "libtorch_cuda.so", needed=["libc10_cuda.so", "libtorch_nvshmem.so"])
    write_so(lib / "libtorch_python.so", needed=["libtorch_cuda.so"])
    write_so(lib / "libtorch_nvshmem.so", undefined=[GET], needed=["libc10.so"])  # resolves through _C's group
    out = _run(tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "missing: 0; resolved in torch._C's group: 1;" in out.stdout, out.stdout
    write_so(
        lib / "libtorch_nvshmem.so", undefined=[GET, GET + "_gone"], needed=["libc10.so"]
    )  # defined nowhere: a real miss
    out = _run(tmp_path)
    assert out.returncode == 1 and "missing: 1; resolved in torch._C's group: 1;" in out.stdout, out.stdout
