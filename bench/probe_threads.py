"""Per-probe CPU and wall in a real command, two (or more) trees side by side: where the probe threads' time goes.

    python bench/probe_threads.py [--runs 21] [--json FILE] [--args "audit --format json"] TREE [TREE ...]

Each run is a fresh process (`python -c CHILD ARGS...`, PYTHONPATH the tree then this script's own
PYTHONPATH, bytecode cached, each tree its own cache directory) that runs stackcheck.cli.main in process with
the probe runner's thread body (stackcheck.probes.runner._Slot.run) wrapped: each probe's own thread CPU
(time.thread_time over its run: what it spends holding or wanting the interpreter lock, not its waits), its
wall from start to end (the waits for the lock included: what makes a probe finish last) and its end since
the process started, and the command's wall and CPU. Trees are interleaved run by run, the first run of each
only warms the bytecode and the caches. Prints medians per probe and tree, and each tree less the first.
Standard library only; the product has no timing code."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
from typing import Any

CHILD = r"""
import contextlib, io, json, sys, time
t_start, c_start = time.perf_counter(), time.process_time()
import stackcheck.probes.runner as runner
seen = {}
run = runner._Slot.run
def timed(self, ctx, done):
    w0, c0 = time.perf_counter(), time.thread_time()
    try:
        return run(self, ctx, done)
    finally:
        seen[self.probe.name] = {"cpu": (time.thread_time() - c0) * 1e3, "wall": (time.perf_counter() - w0) * 1e3,
                                 "end": (time.perf_counter() - t_start) * 1e3}
runner._Slot.run = timed
from stackcheck.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    rc = main(sys.argv[1:])
seen["(command)"] = {"cpu": (time.process_time() - c_start) * 1e3, "wall": (time.perf_counter() - t_start) * 1e3,
                     "end": (time.perf_counter() - t_start) * 1e3}
print(json.dumps({"rc": rc, "probes": seen}))
"""


def once(tree: str, cache: str, argv: list[str]) -> dict[str, Any]:
    # the tree first, then a PYTHONPATH given to this script (a directory of stand-in distributions, say)
    path = os.pathsep.join(p for p in (tree, os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path, STACKCHECK_CACHE_DIR=cache)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, env=env, cwd=tree,
                         check=True)  # fmt: skip
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", metavar="TREE")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--args", default="audit --format json", help="the stackcheck arguments (shell words)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    argv = shlex.split(args.args)
    trees = [os.path.abspath(t) for t in args.trees]
    caches = [tempfile.mkdtemp(prefix="stackcheck-probe-threads-") for _ in trees]
    samples: dict[str, dict[str, dict[str, list[float]]]] = {t: {} for t in trees}
    for i in range(args.runs + 1):
        order = list(zip(trees, caches, strict=True))
        for tree, cache in order if i % 2 == 0 else order[::-1]:
            got = once(tree, cache, argv)
            if i == 0:
                continue
            for name, fig in got["probes"].items():
                per = samples[tree].setdefault(name, {})
                for k, v in fig.items():
                    per.setdefault(k, []).append(v)
    names = sorted({n for t in trees for n in samples[t]}, key=lambda n: (n != "(command)", n))
    print(
        f"{args.runs} runs of `stackcheck {args.args}`, medians in ms (cpu: the probe thread's CPU; wall: its start "
        "to its end; end: its end since the process started; (command): the process's CPU and wall)"
    )
    cols = [f"T{j} {k}" for j in range(len(trees)) for k in ("cpu", "wall", "end")]
    cols += [f"T{j}-T0 {k}" for j in range(1, len(trees)) for k in ("cpu", "end")]
    print("probe".ljust(16) + "".join(f"{c:>11}" for c in cols))
    table: dict[str, Any] = {"args": argv, "runs": args.runs, "trees": trees, "medians": {}}
    for name in names:
        meds = []
        for tree in trees:
            per = samples[tree].get(name, {})
            med = {k: statistics.median(v) for k, v in per.items()}
            table["medians"].setdefault(tree, {})[name] = med
            meds.append(med)
        cells = [m.get(k, float("nan")) for m in meds for k in ("cpu", "wall", "end")]
        cells += [m.get(k, float("nan")) - meds[0].get(k, float("nan")) for m in meds[1:] for k in ("cpu", "end")]
        print(name.ljust(16) + "".join(f"{c:11.1f}" for c in cells))
    for j, tree in enumerate(trees):
        print(f"T{j} = {tree}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(table, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
