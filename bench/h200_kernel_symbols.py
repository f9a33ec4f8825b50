"""The kernel symbol probe's reader on a real box without sgl-kernel: torch's own extension libraries stand in
for common_ops. Each ELF file under torch/ (torch/_C*.so and torch/lib/*.so) has its undefined torch C++
symbols looked up in the torch libraries its DT_NEEDED names (as the probe does for sgl-kernel), and its CUDA
driver API calls in the driver's libcuda.so.1 (found as the probe finds it). A negative control (each name with a
suffix added) must all be missing.

"Missing" here is not always a fault: the probe's scope is an extension's own DT_NEEDED closure (what the loader
searches for a module imported with RTLD_LOCAL), but torch's own libraries are loaded as members of torch._C's
load group, and each resolves in the whole group (libtorch_python.so and everything it needs). torch 2.11's
libtorch_nvshmem.so is one: its DT_NEEDED does not reach libc10_cuda.so, so 16 of its names are missing from its
own closure while torch loads it fine (H200, 2026-12-02). Such a name, defined somewhere in torch._C's group and
needed by a library of that group, is counted apart as "resolved in torch._C's group"; on a working install
only those may be non-zero, and "missing" (names no library of the group defines) must be 0.
Run with any Python 3.10+:

    python3 bench/h200_kernel_symbols.py /opt/torch/.venv/lib/python3.*/site-packages [--runs 11]

Prints one line per file (names needed, missing, libraries read), the driver library, the time of one full
pass (median of --runs, page cache warm) and the bytes read. Exit 1 when a name is missing (not even in
torch._C's group) or a control is found. Imports neither torch nor anything outside stackcheck and the
standard library.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    from stackcheck.probes.kernel_symbols import find_libcuda
    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import _Libraries, is_driver_symbol, is_torch_symbol, torch_closure

    ap = argparse.ArgumentParser()
    ap.add_argument("site", help="the site-packages directory holding torch/")
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    site = args.site.rstrip("/")
    torch_lib = f"{site}/torch/lib"
    view = HostView("/")
    libcuda = find_libcuda(os.environ, view)
    print(f"libcuda: {libcuda}")
    files = sorted(str(p) for p in Path(site, "torch").glob("_C*.so")) + sorted(
        str(p) for p in Path(torch_lib).glob("*.so") if not p.is_symlink()
    )

    def one_pass(report: bool) -> tuple[int, int, int, int]:
        libs, drivers = _Libraries(view), _Libraries(view)
        bad = controls = in_group = 0
        # torch._C's load group: _C, libtorch_python.so and the torch libraries they need, breadth first
        group = torch_closure(libs, torch_lib, ["libtorch_python.so"])
        try:
            for path in files:
                got = libs.get(path)
                if isinstance(got, str):
                    print(f"{path}: {got}") if report else None
                    bad += 1
                    continue
                undefined = got[1].undefined()
                names = [n for n in undefined if is_torch_symbol(n)]
                calls = [n for n in undefined if is_driver_symbol(n)]
                where = [p for p in torch_closure(libs, torch_lib, list(got[1].needed)) if p != path]
                missing = [n for n in names if not any(libs.defines(p, n) for p in where)]
                grouped: list[str] = []
                if path in group:  # loaded by torch as a member of _C's group: the group's scope applies
                    grouped = [n for n in missing if any(libs.defines(p, n) for p in group if p != path)]
                    missing = [n for n in missing if n not in grouped]
                    in_group += len(grouped)
                dmissing = [n for n in calls if libcuda and not drivers.defines(libcuda, n)]
                control = [n for n in names[:20] if any(libs.defines(p, n + "_x") for p in where)]
                control += [n for n in calls[:20] if libcuda and drivers.defines(libcuda, n + "_x")]
                bad += len(missing) + len(dmissing)
                controls += len(control)
                if report:
                    libnames = ",".join(p.rsplit("/", 1)[-1] for p in where)
                    print(
                        f"{path.rsplit('/', 1)[-1]}: torch names {len(names)} missing {len(missing)} {missing[:2]}"
                        f" (+{len(grouped)} resolved in _C's group); "
                        f"driver calls {len(calls)} missing {len(dmissing)} {dmissing[:2]}; control hits {len(control)}"
                        f"; in [{libnames}]"
                    )
            return bad, controls, in_group, libs.bytes_read() + drivers.bytes_read()
        finally:
            libs.close()
            drivers.close()

    bad, controls, in_group, nbytes = one_pass(True)
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        one_pass(False)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"{len(files)} files; one pass: median {statistics.median(times):.1f} ms; {nbytes} bytes read")
    print(f"missing: {bad}; resolved in torch._C's group: {in_group}; negative-control hits: {controls}")
    return 1 if bad or controls else 0


if __name__ == "__main__":
    sys.exit(main())
