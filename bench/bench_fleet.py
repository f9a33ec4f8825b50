"""Time `stackcheck fleet` over generated reports and print one table: seconds and peak RSS.

    python bench/bench_fleet.py [N ...] [--dir DIR] [--jsonl] [--jobs 0 1]

For each N (default 1000 10000 100000) the reports are generated once with bench/gen_reports.py into
DIR/N (or DIR/N.jsonl) and reused. Each measurement runs in a fresh Python process that reads the fleet,
builds the summary and renders the table and JSON formats, then prints its own peak RSS and that of its
worker processes (resource.getrusage). The files are in the page cache (they were just written or read):
these are warm-cache figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from stackcheck.documents.fleet import read_fleet
from stackcheck.render.fleet import render_text
t0 = time.perf_counter()
fleet = read_fleet([sys.argv[2]], jobs=int(sys.argv[3]))
summary = fleet.summary()
render_text(summary)
json.dumps(summary)
dt = time.perf_counter() - t0
me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": dt, "rss_kib": me, "worker_rss_kib": kids, "hosts": len(fleet.hosts),
                  "documents": fleet.documents, "bad": len(fleet.bad), "dropped": len(fleet.dropped)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("n", type=int, nargs="*", default=[1000, 10000, 100000])
    ap.add_argument("--dir", default="/tmp/stackcheck-fleet-bench")
    ap.add_argument("--jsonl", action="store_true", help="one JSON Lines file per N instead of a directory")
    ap.add_argument("--jobs", type=int, nargs="+", default=[0], help="worker processes (0: one per CPU)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    from gen_reports import generate

    rows = []
    for n in args.n:
        target = Path(args.dir) / (f"{n}.jsonl" if args.jsonl else str(n))
        if not target.exists():
            t0 = time.perf_counter()
            generate(n, str(target))
            print(f"generated {n} reports into {target} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        size = target.stat().st_size if args.jsonl else sum(e.stat().st_size for e in os.scandir(target) if e.is_file())
        for jobs in args.jobs:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(ROOT), str(target), str(jobs)],
                capture_output=True,
                text=True,
                check=True,
                timeout=3600,
            )
            r = json.loads(out.stdout)
            rows.append((n, size, jobs, r))
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"stackcheck fleet, {cpus} CPUs, {'one JSON Lines file' if args.jsonl else 'one file per report'}")
    print(
        f"{'reports':>8} {'MB':>7} {'jobs':>4} {'hosts':>7} {'bad':>5} {'dup':>5} {'seconds':>8} "
        f"{'peak RSS MiB':>12} {'worker RSS MiB':>14} {'µs/report':>9}"
    )
    for n, size, jobs, r in rows:
        print(
            f"{n:>8} {size / 1e6:>7.0f} {jobs or 'auto':>4} {r['hosts']:>7} {r['bad']:>5} {r['dropped']:>5} "
            f"{r['seconds']:>8.2f} {r['rss_kib'] / 1024:>12.1f} {r['worker_rss_kib'] / 1024:>14.1f} "
            f"{r['seconds'] / n * 1e6:>9.1f}"
        )


if __name__ == "__main__":
    main()
