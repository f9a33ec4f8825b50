"""Whose interpreter-lock work a probed `stackcheck audit` / served `gate` is: each thread's own CPU time (the main
thread from the process's start, so the interpreter's start is in it; the loading thread, each probe thread), their
sum, and the process's wall time, medians of fresh runs. Where the sum of the threads' CPU (less the interpreter's
start) is about the wall time after it, the work under the lock is the critical path and only cuts in it move the
row; where the wall time is well above it, something waits (the driver's answer, a tool, a file) and the wait is.

    python bench/thread_cpu.py [--runs 15] [--rows audit,gate] [--init-ms 43] [--real-nvml] [--python3 PY] [TREE]

Each run is `python -c CHILD TREE ARGS...`: it starts the NVML reader as `python -m stackcheck` does
(stackcheck.__main__), wraps threading.Thread.run from outside to read time.thread_time at each thread's end, and
runs stackcheck.cli.run; os._exit writes the figures. The gate row is served from the decision run 0 kept (a cache
directory of its own per tree). NVML is bench/sleepy_nvml with the stand-in libnvidia-ml.so.1 of
bench/critical_path.py (--init-ms) unless --real-nvml. Standard library only."""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from critical_path import ROWS, stub_library  # noqa: E402  (bench/critical_path.py, beside this script)

CHILD = r"""
import gc, os, sys, threading, time
out_path, tree = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree)
sys.argv = ["stackcheck", *sys.argv[3:]]
gc.disable()
from stackcheck.driver_words import reads_driver, verb_of
if reads_driver(verb_of(sys.argv[1:]), sys.argv[1:]):
    from stackcheck.probes import nvml_early
    nvml_early.start(usage=verb_of(sys.argv[1:]) == "gate")
cpu = {}
_run = threading.Thread.run
def run(self):
    try:
        _run(self)
    finally:
        name = self.name.split(" ")[0] if self.name.startswith("Thread-") else self.name
        name = "other" if name.startswith("Thread-") else name
        cpu[name] = cpu.get(name, 0.0) + time.thread_time()
threading.Thread.run = run
_exit = os._exit
def leave(code):
    cpu["main"] = time.thread_time()
    with open(out_path, "w") as fh:
        fh.write(repr(cpu))
    _exit(code)
os._exit = leave
from stackcheck import cli
cli.run()
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", nargs="?", default=os.path.dirname(HERE))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rows", default="audit,gate")
    ap.add_argument("--init-ms", type=float, default=43.0)
    ap.add_argument("--real-nvml", action="store_true")
    ap.add_argument("--python3", metavar="PY", help="put this interpreter first on PATH as `python3` (the gate row)")
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="stackcheck-thread-cpu-")
    try:
        tree = os.path.abspath(args.tree)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["STACKCHECK_CACHE_DIR"] = os.path.join(scratch, "cache")
        if not args.real_nvml:
            env["PYTHONPATH"] = os.path.join(HERE, "sleepy_nvml")
            env["STACKCHECK_BENCH_NVML_INIT_MS"] = str(args.init_ms)
            tempfile.tempdir = scratch
            lib = stub_library()
            tempfile.tempdir = None
            if lib is not None:
                old = env.get("LD_LIBRARY_PATH")
                env["LD_LIBRARY_PATH"] = lib + (os.pathsep + old if old else "")
        if args.python3:
            bindir = os.path.join(scratch, "bin")
            os.makedirs(bindir)
            os.symlink(os.path.realpath(args.python3), os.path.join(bindir, "python3"))
            env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        out = os.path.join(scratch, "cpu")
        rows = {r: ROWS[r] for r in args.rows.split(",")}
        got: dict[str, list[tuple[float, dict[str, float]]]] = {r: [] for r in rows}
        pass_wall: list[float] = []
        for i in range(args.runs + 1):  # run 0 warms: bytecode, the plan, the gate's kept decision
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], env=env, check=False)
            if i:
                pass_wall.append((time.perf_counter() - t0) * 1e3)
            for row, argv in rows.items():
                t0 = time.perf_counter()
                subprocess.run(
                    [sys.executable, "-c", CHILD, out, tree, *argv],
                    env=env,
                    cwd=tree,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                )
                wall = (time.perf_counter() - t0) * 1e3
                try:
                    with open(out, encoding="utf-8") as fh:
                        cpu = {k: v * 1e3 for k, v in ast.literal_eval(fh.read()).items()}
                    os.unlink(out)
                except (OSError, ValueError, SyntaxError):
                    cpu = {}
                if i and cpu:
                    got[row].append((wall, cpu))
        nvml = "real" if args.real_nvml else f"stand-in, init {args.init_ms:g} ms"
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} runs, NVML {nvml}; ms, medians")
        print(f"python -c pass wall {statistics.median(pass_wall):.1f}")
        for row, runs in got.items():
            if not runs:
                print(f"{row}: no run reported")
                continue
            names = sorted({k for _, c in runs for k in c}, key=lambda k: (k != "main", k))
            med = {k: statistics.median(c.get(k, 0.0) for _, c in runs) for k in names}
            wall = statistics.median(w for w, _ in runs)
            total = statistics.median(sum(c.values()) for _, c in runs)
            others = statistics.median(sum(v for k, v in c.items() if k != "main") for _, c in runs)
            print(f"{row}: wall {wall:.1f}, threads' CPU {total:.1f} (main {med['main']:.1f}, others {others:.1f})")
            print("  " + ", ".join(f"{k} {v:.1f}" for k, v in med.items() if k != "main" and v >= 0.05))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
