"""Throughput and peak memory of `stackcheck triage` on a generated log.

    python bench/bench_triage.py [--mb 1024] [--keep PATH]

Prints one table: size, lines, seconds, MB/s, peak RSS (resource.getrusage), root cause found.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from gen_log import generate

from stackcheck.launch.triage import load_signatures, triage_file


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1024, help="log size in MiB (default 1024)")
    ap.add_argument("--keep", type=Path, default=None, help="write the log here and keep it")
    args = ap.parse_args()
    tmp = None
    if args.keep is not None:
        path = args.keep
    else:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / "bench.log"
    if not path.exists() or path.stat().st_size < args.mb * 1024 * 1024:
        generate(path, args.mb)
    load_signatures()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    result = triage_file(path)
    dt = time.perf_counter() - t0
    rss_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    mb = result.bytes_read / (1024 * 1024)
    rc = result.root_cause
    found = f"{rc.signature.id if rc and rc.signature else None} @ line {rc.line if rc else '-'}"
    print(f"{'MiB':>8} {'lines':>12} {'seconds':>8} {'MiB/s':>8} {'RSS before':>11} {'RSS peak':>9}  root cause")
    print(
        f"{mb:8.0f} {result.lines_read:12d} {dt:8.2f} {mb / dt:8.1f} {rss_before / 1024:9.1f}MB "
        f"{rss_peak / 1024:7.1f}MB  {found}"
    )
    if tmp is not None:
        tmp.cleanup()


if __name__ == "__main__":
    main()
