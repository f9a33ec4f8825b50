"""What a command does after its facts arrive, with a slow driver simulated: the work a GPU box adds on top of
the driver's own start, measured on a box without one.

    python bench/after_facts.py [--runs 21] [--sleep-ms 200] [--json out.json] [--rows "gate --facts,..."]
                                TREE [TREE ...]

Each run is a fresh process (`python -c CHILD ARGV...` with PYTHONPATH set to the tree, bytecode cached, each
tree its own cache directory) that runs stackcheck.cli.main in process with stackcheck.assembly.pipeline.gather
wrapped: it first sleeps --sleep-ms (the GIL released, as NVML's calls release it while the driver starts),
then gathers as usual. What runs beside the probes (the manifests, the imports, whatever a command prepares in
its loading thread) overlaps the sleep; what runs after gather returns is timed: wall and the process's CPU
from that moment to the end of main (the output goes to a buffer). Trees and rows are interleaved run by run;
the first run of each only warms the bytecode and caches. Prints medians and p90 of wall, medians of CPU, and
each tree less the first. Standard library only."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Any

SGLANG_TP2 = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "2"]
ASSUMED = ["--assume-gpu", "9.0x2", "--assume-driver", "580.82.07"]
ROWS: dict[str, list[str]] = {
    "gate --facts": ["gate", "--dry-run", "--facts", "tests/cases/h200-newest/facts.json", "--", *SGLANG_TP2],
    "audit --facts": ["audit", "--facts", "tests/cases/writeup-after/facts.json", "--format", "json"],
    # probes run, but the driver and GPUs are assumed (no NVML here): the H200's launch, this box's Python
    "gate (assumed H200)": ["gate", "--dry-run", *ASSUMED, "--", *SGLANG_TP2],
    "audit (assumed H200)": ["audit", *ASSUMED, "--format", "json"],
}

CHILD = r"""
import contextlib, io, json, sys, time
sleep_s = float(sys.argv[1])
import stackcheck.assembly.pipeline as pipeline
gather, mark = pipeline.gather, {}
def slow(opts, manifests=None):
    time.sleep(sleep_s)
    out = gather(opts, manifests)
    mark["wall"], mark["cpu"] = time.perf_counter(), time.process_time()
    return out
pipeline.gather = slow
from stackcheck.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    rc = main(sys.argv[2:])
wall, cpu = time.perf_counter(), time.process_time()
print(json.dumps({"rc": rc, "wall": (wall - mark["wall"]) * 1e3, "cpu": (cpu - mark["cpu"]) * 1e3}))
"""


def once(tree: str, cache: str, sleep_s: float, argv: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=tree, STACKCHECK_CACHE_DIR=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    argv = [sys.executable, "-c", CHILD, str(sleep_s), *argv]
    out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tree, check=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", metavar="TREE")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--sleep-ms", type=float, default=200.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--rows", default=None, help=f"a comma-separated subset of: {', '.join(ROWS)} (default all)")
    args = ap.parse_args()
    rows = {k: v for k, v in ROWS.items() if not args.rows or k in args.rows.split(",")}
    trees = [os.path.abspath(t) for t in args.trees]
    caches = [tempfile.mkdtemp(prefix="after-facts-cache-") for _ in trees]
    got: dict[str, dict[str, list[dict[str, Any]]]] = {r: {t: [] for t in trees} for r in rows}
    for i in range(args.runs + 1):
        order = list(zip(trees, caches, strict=True))
        if i % 2:
            order.reverse()
        for row, argv in rows.items():
            for tree, cache in order:
                r = once(tree, cache, args.sleep_ms / 1e3, argv)
                if i:
                    got[row][tree].append(r)
    table: dict[str, Any] = {}
    for row in rows:
        table[row] = {}
        for tree in trees:
            rs = got[row][tree]
            walls = sorted(r["wall"] for r in rs)
            table[row][tree] = {
                "wall_ms": round(statistics.median(walls), 2),
                "wall_p90_ms": round(walls[int(0.9 * (len(walls) - 1))], 2),
                "cpu_ms": round(statistics.median(r["cpu"] for r in rs), 2),
                "exit": sorted({r["rc"] for r in rs}),
            }
        first = table[row][trees[0]]
        print(f"{row}:")
        for tree in trees:
            t = table[row][tree]
            diff = "" if tree == trees[0] else (
                f"  B-A wall {t['wall_ms'] - first['wall_ms']:+.2f} cpu {t['cpu_ms'] - first['cpu_ms']:+.2f}"
            )  # fmt: skip
            print(f"  {tree}: wall {t['wall_ms']:.2f} (p90 {t['wall_p90_ms']:.2f}) cpu {t['cpu_ms']:.2f} "
                  f"exit {t['exit']}{diff}")  # fmt: skip
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"runs": args.runs, "sleep_ms": args.sleep_ms, "trees": trees, "rows": table}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
