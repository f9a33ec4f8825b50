"""The cuda_libs probe's cost per soname list (igap48 added CPython's libpython3.10-3.14.so.1.0 for Mooncake
0.3.8-0.3.9's EP module): median of N runs of probe_cuda_libs on this host, without and with them.

    PYTHONPATH=$PWD python bench/bench_cudalibs_sonames.py [N]
"""

from __future__ import annotations

import os
import statistics
import sys
import time

from stackcheck.probes.cudalibs import SONAMES, probe_cuda_libs
from stackcheck.readers.fsview import HostView


def _median_ms(sonames: tuple[str, ...], runs: int) -> float:
    view, env, times = HostView(), dict(os.environ), []
    for _ in range(runs):
        start = time.perf_counter()
        probe_cuda_libs(env, view, sonames=sonames)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    without = tuple(s for s in SONAMES if not s.startswith("libpython"))
    for _ in range(2):
        print(f"without libpython: {len(without)} sonames {_median_ms(without, runs):.3f} ms; "
              f"with: {len(SONAMES)} sonames {_median_ms(SONAMES, runs):.3f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
