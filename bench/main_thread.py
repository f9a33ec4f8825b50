"""What the command's main thread does, and when, in a served `stackcheck gate` and a probed `audit`: the marks of
bench/critical_path.py's question (is the main thread, not the driver, the critical path?) split by the main
thread's own steps, each with the main thread's CPU time (time.thread_time) beside the wall time.

    python bench/main_thread.py [--runs 11] [--rows gate,audit] [--init-ms 100] [--real-nvml] [--python3 PY] [TREE]

Each run is a fresh process (`python -c CHILD TREE ARGS...`, bytecode cached) that starts the NVML reader as
`python -m stackcheck` does (stackcheck.__main__), then wraps, from outside, the steps below and runs
stackcheck.cli.run. Times are milliseconds since the CHILD's first line (the interpreter's start is not in them);
`w` is wall, `c` the main thread's CPU. Marks in the main thread: `parser` (cli.build_parser's return), `slot`
(gate_cache.slot_for's return), `probes start` (the first pipeline.Background), `kept reads` (gate_cache.unchanged's
first return: the entry's reads made again), `wait` / `facts` (the main thread's first Background.get of the facts:
its call and return), `served` (commands.gate.Kept.serve's return), `exit` (os._exit). Marks of other threads (wall
only): `begin probe-NAME` (each probe thread's start; the NVML probe's takes the forked reader's answer), `answer`
(ForkSession._collect's return: the forked reader's answer read), `probes done` (run_probes's
return), `end probe-NAME` (each probe thread's end, latest last: the probes still running after the answer). The
gate row is served from the decision run 0 kept (its own cache directory). NVML is bench/sleepy_nvml with the
stand-in libnvidia-ml.so.1 of bench/critical_path.py (--init-ms) unless --real-nvml; --python3 puts that
interpreter first on PATH as `python3` (a pyenv shim is a script: its answer is not cached, and the gate would run
it every time). Medians; standard library only."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from critical_path import ROWS, stub_library  # noqa: E402  (bench/critical_path.py, beside this script)

CHILD = r"""
import os, sys, time, threading, json
T0, C0 = time.perf_counter(), time.thread_time()
out_path, tree = sys.argv[1], sys.argv[2]
sys.path.insert(0, tree)
sys.argv = ["stackcheck", *sys.argv[3:]]
marks = {}
def mark(name, cpu=True):
    if name not in marks:
        marks[name] = [(time.perf_counter() - T0) * 1e3, (time.thread_time() - C0) * 1e3 if cpu else None]
import gc
gc.disable()
from stackcheck.driver_words import reads_driver, verb_of
if reads_driver(verb_of(sys.argv[1:]), sys.argv[1:]):
    from stackcheck.probes import nvml_early
    nvml_early.start(usage=verb_of(sys.argv[1:]) == "gate")
import importlib
MAIN = threading.main_thread()
def wrap(modname, attr, before=None, after=None, anywhere=False):
    obj = importlib.import_module(modname)
    parts = attr.split(".")
    for p in parts[:-1]:
        obj = getattr(obj, p)
    real = getattr(obj, parts[-1])
    def w(*a, **k):
        main = threading.current_thread() is MAIN
        if before and main:
            mark(before)
        try:
            return real(*a, **k)
        finally:
            if after and (main or anywhere):
                mark(after, cpu=main)
    setattr(obj, parts[-1], w)
wrap("stackcheck.cli", "build_parser", after="parser")
wrap("stackcheck.assembly.gate_cache", "slot_for", after="slot")
wrap("stackcheck.assembly.gate_cache", "unchanged", after="kept reads")
wrap("stackcheck.assembly.pipeline", "Background.__init__", before="probes start")
wrap("stackcheck.assembly.pipeline", "Background.get", before="wait", after="facts")
wrap("stackcheck.commands.gate", "Kept.serve", after="served")
wrap("stackcheck.probes.nvml_early", "ForkSession._collect", after="answer", anywhere=True)
wrap("stackcheck.probes.runner", "run_probes", after="probes done", anywhere=True)
real_run = threading.Thread.run
def thread_run(self):
    name = self.name
    if name.startswith("probe-"):
        mark("begin " + name, cpu=False)
    try:
        real_run(self)
    finally:
        if name.startswith("probe-"):
            mark("end " + name, cpu=False)
threading.Thread.run = thread_run
real_exit = os._exit
def leave(code):
    mark("exit")
    with open(out_path, "w") as f:
        json.dump(marks, f)
    real_exit(code)
os._exit = leave
from stackcheck.cli import run
run()
"""
ORDER = ["parser", "slot", "probes start", "kept reads", "wait", "answer", "probes done", "facts"]
ORDER += ["served", "exit"]


def once(tree: str, args: list[str], env: dict[str, str]) -> dict[str, list[float | None]]:
    with tempfile.NamedTemporaryFile("r", suffix=".json") as f:
        subprocess.run(
            [sys.executable, "-c", CHILD, f.name, tree, *args],
            env=env,
            cwd=tree,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
            check=False,
        )
        text = f.read()
    return dict(json.loads(text)) if text else {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", nargs="?", default=os.path.dirname(HERE))
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--rows", default="gate,audit")
    ap.add_argument("--init-ms", type=float, default=100.0)
    ap.add_argument("--real-nvml", action="store_true")
    ap.add_argument("--python3", help="this interpreter first on PATH as `python3` (the gate row's target)")
    ns = ap.parse_args()
    tree = os.path.abspath(ns.tree)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]  # e.g. jsonschema's --target dir
    first = [tree] if ns.real_nvml else [os.path.join(HERE, "sleepy_nvml"), tree]
    env["PYTHONPATH"] = os.pathsep.join([*first, *inherited])
    env["STACKCHECK_BENCH_NVML_INIT_MS"] = str(ns.init_ms)
    if not ns.real_nvml:
        lib = stub_library()
        if lib is not None:
            env["LD_LIBRARY_PATH"] = lib + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    if ns.python3:
        bindir = tempfile.mkdtemp(prefix="stackcheck-mt-python3-")
        os.symlink(os.path.realpath(ns.python3), os.path.join(bindir, "python3"))
        env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
    env["STACKCHECK_CACHE_DIR"] = tempfile.mkdtemp(prefix="stackcheck-mt-cache-")
    labels = [r.strip() for r in ns.rows.split(",") if r.strip()]
    got: dict[str, list[dict[str, list[float | None]]]] = {r: [] for r in labels}
    for i in range(ns.runs + 1):  # run 0: bytecode, page cache, the decision kept
        for row in labels:
            marks = once(tree, ROWS[row], env)
            if i:
                got[row].append(marks)
    nvml = "real" if ns.real_nvml else f"stand-in, init {ns.init_ms:g} ms"
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {ns.runs} runs, NVML {nvml}; ms from the start")
    for row in labels:
        print(f"\n{row}: {' '.join(ROWS[row])}")
        print(f"  {'mark':14}{'wall':>8}{'main CPU':>10}{'runs':>6}")
        ends = {n for m in got[row] for n in m if n.startswith(("begin ", "end "))}
        ends_by = sorted(ends, key=lambda n: statistics.median(float(m[n][0] or 0.0) for m in got[row] if n in m))
        for name in [*ORDER, *ends_by]:
            seen = [m[name] for m in got[row] if name in m]
            if not seen:
                continue
            wall = statistics.median(float(s[0] or 0.0) for s in seen)
            cpus = [float(s[1]) for s in seen if s[1] is not None]
            cpu = f"{statistics.median(cpus):10.1f}" if cpus else f"{'':10}"
            print(f"  {name:14}{wall:8.1f}{cpu}{len(seen):6d}")
    print(f"tree = {tree}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
