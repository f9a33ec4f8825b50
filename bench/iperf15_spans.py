"""What the main thread of a probed `stackcheck audit --format json` / served `gate --dry-run` does once its facts are
gathered, step by step, and what every thread of the process spends: tree A against tree B (iperf15, issue 21).

    python bench/iperf15_spans.py [--runs 15] [--init-ms 20] [--rows audit,gate] [--python3 PY] TREE [TREE ...]

Each run is a fresh process (`python -c CHILD ARGS...`, bytecode cached, each tree its own cache directory, run 0
warms) that wraps, from outside, as their modules are imported (none earlier than the run imports it), the functions
named in SPANS (the entry `NAME>` and return `NAME<` of the first outermost call of each: a recursive call is inside
its caller's span) and threading.Thread.run (each thread's CPU when it ends), then runs the package as `python -m
stackcheck` does. The NVML is bench/critical_path.py's stand-in (bench/sleepy_nvml and its libnvidia-ml.so.1, whose
start takes --init-ms: 20 is about what the H200's forked reader takes from its fork to its answer, critical_path.py
--real-nvml there, so that the main thread, not the driver, is the critical path as on the H200). Printed per row
and tree, medians: each mark's main-thread wall and CPU (time.thread_time) since the facts (gather's return: the
audit's; the main thread's first Background.get: the gate's), then the CPU of the main thread and of each other
thread for the whole run (the main thread's includes the interpreter's start). Standard library only."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from critical_path import ROWS, stub_library  # noqa: E402  (bench/critical_path.py, beside this script)

#: (module, attribute, mark): the steps after the facts (and gather itself, the facts' arrival)
SPANS = [
    ("stackcheck.assembly.pipeline", "gather", "gather"),
    ("stackcheck.assembly.pipeline", "build_report", "build_report"),
    ("stackcheck.assembly.plan_cache", "key_of", "key_of"),
    ("stackcheck.assembly.plan_cache", "load_entry", "load_entry"),
    ("stackcheck.documents.report", "base_report", "base_report"),
    ("stackcheck.knowledge.sources", "normalize", "normalize"),
    ("stackcheck.redact", "_strings", "strings"),
    ("stackcheck.redact", "masked_texts", "masked_texts"),
    ("stackcheck.render.jsonout", "json_document", "json_document"),
    ("stackcheck.commands.arguments", "emit", "emit"),
    # the served gate: its probes' facts (the main thread's first Background.get), their digest, the kept decision
    ("stackcheck.assembly.pipeline", "Background.get", "facts"),
    ("stackcheck.assembly.gate_cache", "facts_digest", "facts_digest"),
    ("stackcheck.commands.gate", "Kept.serve", "serve"),
]
CHILD = r"""
import json, os, sys, threading, time
spans = json.loads(os.environ["SPANS_JSON"])
marks, threads = [], {}
def mark(k):
    if threading.current_thread() is threading.main_thread() and k not in seen:
        seen.add(k)
        marks.append((k, time.perf_counter() * 1e3, time.thread_time() * 1e3))
seen = set()
depth = {}
def wrap(mod, attr, label):
    f = getattr(mod, attr)
    def w(*a, **k):
        depth[label] = depth.get(label, 0) + 1
        if depth[label] == 1:
            mark(label + ">")
        try:
            return f(*a, **k)
        finally:
            depth[label] -= 1
            if not depth[label]:
                mark(label + "<")
    setattr(mod, attr, w)
wanted = {}
for modname, attr, label in spans:
    wanted.setdefault(modname, []).append((attr, label))
class Finder:  # wraps a module's functions once it is imported, where the run imports it (nothing imported early)
    @staticmethod
    def find_spec(name, path=None, target=None):
        if name not in wanted:
            return None
        from importlib.machinery import PathFinder
        spec = PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        run_module = spec.loader.exec_module
        def exec_module(module):
            run_module(module)
            for attr, label in wanted[name]:
                owner, _, attr = attr.rpartition(".")
                where = getattr(module, owner, None) if owner else module
                if where is not None and hasattr(where, attr):
                    wrap(where, attr, label)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Finder)
run = threading.Thread.run
def trun(self):
    try:
        run(self)
    finally:
        threads[self.name.split(" (")[0]] = threads.get(self.name.split(" (")[0], 0.0) + time.thread_time() * 1e3
threading.Thread.run = trun
pid, _exit, _sysexit = os.getpid(), os._exit, sys.exit
def leave():
    if os.getpid() == pid:
        mark("exit")
        threads["main"] = time.thread_time() * 1e3
        with open(os.environ["SPANS_OUT"], "w") as fh:
            json.dump({"marks": marks, "threads": threads}, fh)
def x(code):
    leave()
    _exit(code)
def sx(code=None):
    leave()
    _sysexit(code)
os._exit, sys.exit = x, sx
sys.argv = ["stackcheck", *sys.argv[1:]]
import runpy
runpy._run_module_as_main("stackcheck")
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", metavar="TREE")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--init-ms", type=float, default=20.0)
    ap.add_argument("--rows", default="audit,gate")
    ap.add_argument("--python3", metavar="PY", help="the gate row's `python3` (see bench/critical_path.py)")
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="stackcheck-spans-")
    tempfile.tempdir = scratch
    try:
        lib_dir = stub_library()
        extra_path = None
        if args.python3:
            extra_path = tempfile.mkdtemp()
            os.symlink(os.path.realpath(args.python3), os.path.join(extra_path, "python3"))
        trees = [os.path.abspath(t) for t in args.trees]
        envs = []
        for i, tree in enumerate(trees):
            env = dict(os.environ)
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPATH"] = os.path.join(HERE, "sleepy_nvml") + os.pathsep + tree
            env["STACKCHECK_BENCH_NVML_INIT_MS"] = str(args.init_ms)
            env["STACKCHECK_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"cache-{i}-")
            env["SPANS_OUT"] = os.path.join(tempfile.mkdtemp(prefix=f"out-{i}-"), "spans.json")
            env["SPANS_JSON"] = json.dumps(SPANS)
            if lib_dir:
                env["LD_LIBRARY_PATH"] = lib_dir + (
                    os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else ""
                )
            if extra_path:
                env["PATH"] = extra_path + os.pathsep + env.get("PATH", "")
            envs.append(env)
        rows = args.rows.split(",")
        got: dict[tuple[str, int], list[dict]] = defaultdict(list)
        for r in range(args.runs + 1):
            order = list(range(len(trees)))[:: -1 if r % 2 else 1]
            for row in rows:
                for t in order:
                    subprocess.run(
                        [sys.executable, "-c", CHILD, *ROWS[row]], env=envs[t], cwd=trees[t],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120, check=False,
                    )  # fmt: skip
                    try:
                        with open(envs[t]["SPANS_OUT"], encoding="utf-8") as fh:
                            data = json.load(fh)
                        os.unlink(envs[t]["SPANS_OUT"])
                    except (OSError, ValueError):
                        continue
                    if r:
                        got[(row, t)].append(data)
        print(
            f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} runs, NVML stand-in {args.init_ms} ms"
        )
        for row in rows:
            print(f"\n{row}: main-thread marks since the facts (gather's, else the first Background.get's return)")
            table: dict[str, dict[int, tuple[float, float]]] = defaultdict(dict)
            cpu: dict[str, dict[int, float]] = defaultdict(dict)
            for t in range(len(trees)):
                per: dict[str, list[tuple[float, float]]] = defaultdict(list)
                thr: dict[str, list[float]] = defaultdict(list)
                for data in got[(row, t)]:
                    first = {k: (w, c) for k, w, c in data["marks"]}
                    ref = "gather<" if "gather<" in first else "facts<"  # (the gate gathers in a thread of its own)
                    if ref not in first:
                        continue
                    w0, c0 = first[ref]
                    for k, (w, c) in first.items():
                        per[k].append((w - w0, c - c0))
                    for k, v in data["threads"].items():
                        thr[k].append(v)
                for k, v in per.items():
                    table[k][t] = (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
                for k, v in thr.items():
                    cpu[k][t] = statistics.median(v)
            head = "".join(f"{'tree ' + ('AB'[t] if t < 2 else str(t)):>18}" for t in range(len(trees)))
            print(f"  {'mark':<16}{head}")
            for k in sorted(table, key=lambda k: table[k].get(0, (0.0, 0.0))[0]):
                cells = "".join(
                    f"{table[k][t][0]:>9.2f}/{table[k][t][1]:<8.2f}" if t in table[k] else f"{'':>18}"
                    for t in range(len(trees))
                )
                print(f"  {k:<16}{cells}")
            print(f"  {'thread CPU':<16}")
            for k in sorted(cpu, key=lambda k: -cpu[k].get(0, 0.0)):
                cells = "".join(f"{cpu[k][t]:>18.2f}" if t in cpu[k] else f"{'':>18}" for t in range(len(trees)))
                print(f"  {k[:16]:<16}{cells}")
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
