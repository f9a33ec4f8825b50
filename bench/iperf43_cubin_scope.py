"""iperf43 (issue 21): what the cubin probe costs on a real flashinfer-cubin install when the GPUs the verdicts judge
load its families (a B200: compute capability 10.0; the kept answer's per-name check of imend16 runs) and when they
do not (an H200: 9.0; families_unread_for, no family read). In one process, CPU (process_time) and wall medians of
--runs calls of probe_cubins on the site-packages of a venv with flashinfer-python and flashinfer-cubin installed
(bench/iperf38_ab.py's target), its kept answers in --cache (warm: one call first). Writes only under --cache.

    PYTHONPATH=TREE python3 bench/iperf43_cubin_scope.py --site T/lib/python3.X/site-packages --cache DIR [--runs 31]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--site", required=True)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--runs", type=int, default=31)
    args = ap.parse_args()
    os.environ["STACKCHECK_CACHE_DIR"] = args.cache
    from stackcheck.probes.flashinfer_cubins import families_unread_for, probe_cubins
    from stackcheck.readers.fsview import HostView

    version = "0.6.13"
    pkgs = {
        "flashinfer-python": {"installed": True, "version": version, "location": args.site},
        "flashinfer-cubin": {"installed": True, "version": version, "location": args.site},
    }
    facts = {"packages": pkgs}
    env = {"HOME": "/nonexistent"}
    rows = {"b200 (10.0)": [{"compute_capability": "10.0"}], "h200 (9.0)": [{"compute_capability": "9.0"}]}
    for name, gpus in rows.items():
        unread = families_unread_for(gpus)
        probe_cubins(facts, env, HostView(), cache_dir=args.cache, unread=unread)  # (warm: kept answers written)
        cpu, wall = [], []
        for _ in range(args.runs):
            c, w = time.process_time(), time.perf_counter()
            got = probe_cubins(facts, env, HostView(), cache_dir=args.cache, unread=unread)
            cpu.append((time.process_time() - c) * 1000)
            wall.append((time.perf_counter() - w) * 1000)
        assert got is not None
        listed = sum(f.get("listed") or 0 for f in got["families"].values())
        print(
            f"{name:12} CPU {statistics.median(cpu):7.2f} ms  wall {statistics.median(wall):7.2f} ms  "
            f"names checked {listed:6}  ready {got['ready']}",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
