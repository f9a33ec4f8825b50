"""Where the CPU of `stackcheck gate` goes, thread by thread, beside the audit's: the accounting behind
bench/breakdown.py's "other" (issue 21's gate goal), for one tree or two (A and B, interleaved), as medians of
fresh processes.

    python bench/gate_cpu.py [--runs 11] [--rows gate,audit] [--first-run] [TREE [TREE_B]]

Each run is a fresh process (`python -c CHILD TREE ARGS...`, its bytecode cached) that wraps, from outside, the
threads' run methods, the gate's loading-thread steps (commands.gate._import_later and _prepare, plan_cache.prepare)
and the main thread's waits (pipeline.Background.get), then calls stackcheck.cli.main. It reports CPU time
(time.thread_time) per thread when each thread ends: the main thread before its first wait on the probes, its waits'
own CPU, and after them ("after the facts"); each loading thread by what it runs (the manifests' read, the probes'
runner, build_report's preload and, inside it, the gate's _import_later, _prepare and the plan key's preparation);
every probe thread; the process's CPU (getrusage) and its children's (the forked NVML reader, the tools the probes
run). Rows: `gate` is bench/h200_perf.py's goal row (`gate --dry-run -- python3 -m sglang.launch_server
--model-path x --tp 1`), `audit` is `audit --format json`, `gate --facts` the saved H200 box
(tests/cases/h200-newest, `--model-path M --tp 2`). The process leaves as the `stackcheck` program does (os._exit
after flushing). Standard library only; nothing touches the network."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
ROWS = {
    "gate": ["gate", "--dry-run", "--", *SGLANG],
    "audit": ["audit", "--format", "json"],
    "gate --facts": [
        "gate", "--dry-run", "--facts", "tests/cases/h200-newest/facts.json", "--",
        "python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "2",
    ],
}  # fmt: skip

CHILD = r"""
import os, sys, time, threading, resource, json, io, contextlib
out_path, tree, variant = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, tree)
sys.argv = [sys.argv[0], *sys.argv[4:]]
W0 = time.perf_counter()
rows = {}
def add(key, ms):
    rows[key] = rows.get(key, 0.0) + ms
lock = threading.Lock()
real_run = threading.Thread.run
def names(fn):
    code = getattr(fn, "__code__", None)
    return (*getattr(code, "co_names", ()), *getattr(code, "co_freevars", ()))
def label(thread):
    target = getattr(thread, "_target", None)
    owner = getattr(target, "__self__", None)
    fn = getattr(owner, "_fn", None)
    if fn is not None:  # a pipeline.Background: what it runs
        if "load_manifests" in names(fn):
            return "thread: manifests read"
        if "gather" in names(fn):
            return "thread: probes' runner (gather)"
        if "preload" in names(fn):
            return "thread: build_report preload"
        return "thread: " + getattr(fn, "__qualname__", "?")
    return "thread: " + thread.name
def run(self):
    key = label(self)  # (before the run: Thread.run drops its target)
    try:
        real_run(self)
    finally:
        with lock:
            add(key, time.thread_time() * 1e3)
threading.Thread.run = run
main_ident = threading.get_ident()
state = {"waited": False, "wait_cpu": 0.0, "pre": None}
def wrap(module, name, key):
    real = getattr(module, name)
    def wrapper(*a, **k):
        t0 = time.thread_time()
        try:
            return real(*a, **k)
        finally:
            with lock:
                add(key, (time.thread_time() - t0) * 1e3)
    setattr(module, name, wrapper)
import stackcheck.assembly.pipeline as pipeline
real_get = pipeline.Background.get
def get(self):
    if threading.get_ident() != main_ident:
        return real_get(self)
    t0 = time.thread_time()
    if state["pre"] is None and "gather" in names(self._fn):
        state["pre"] = t0 * 1e3
    try:
        return real_get(self)
    finally:
        state["wait_cpu"] += (time.thread_time() - t0) * 1e3
pipeline.Background.get = get
real_build = pipeline.build_report
def build_report(*a, **k):
    try:
        return real_build(*a, **k)
    finally:
        state["after_from"] = time.thread_time() * 1e3
pipeline.build_report = build_report
try:
    import stackcheck.commands.gate as gate_command
    wrap(gate_command, "_import_later", "  in preload: gate._import_later")
    wrap(gate_command, "_prepare", "  in preload: gate._prepare")
except ImportError:
    pass
import stackcheck.assembly.plan_cache as plan_cache
wrap(plan_cache, "prepare", "  in preload: plan_cache.prepare")
if variant == "probes-first":  # the experiment: the gate's main thread lets the probes start before its own work
    import stackcheck.probes.runner as runner
    entered = threading.Event()
    real_rp = runner.run_probes
    def run_probes(*a, **k):
        entered.set()
        return real_rp(*a, **k)
    runner.run_probes = run_probes
    started = [0]
    real_start = threading.Thread.start
    def start(self):
        if self.name.startswith("probe-"):
            started[0] += 1
        return real_start(self)
    threading.Thread.start = start
    gate_command = sys.modules.get("stackcheck.commands.gate")
    real_dw = gate_command._decide_with
    def decide_with(*a, **k):
        entered.wait(1.0)
        seen, still = -1, 0
        while still < 2 and time.perf_counter() - W0 < 5:  # until no probe has started for two 0.5 ms looks
            time.sleep(0.0005)
            still = still + 1 if started[0] == seen else 0
            seen = started[0]
        return real_dw(*a, **k)
    gate_command._decide_with = decide_with
from stackcheck import cli
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    import gc
    gc.disable()
    rc = cli.main(sys.argv[1:])
end = time.thread_time() * 1e3
add("wall: from this child's start to cli.main's end", (time.perf_counter() - W0) * 1e3)
if state.get("after_from") is not None:
    add("main: after build_report returns", end - state["after_from"])
if state["pre"] is not None:
    add("main: before the probes' wait", state["pre"])
add("main: whole", end)
ru = resource.getrusage(resource.RUSAGE_SELF)
rc_ = resource.getrusage(resource.RUSAGE_CHILDREN)
add("process CPU", (ru.ru_utime + ru.ru_stime) * 1e3)
add("children CPU", (rc_.ru_utime + rc_.ru_stime) * 1e3)
with open(out_path, "w") as f:
    json.dump({"rc": rc, "rows": rows}, f)
sys.stdout.flush()
os._exit(0)
"""


def once(tree: str, args: list[str], env: dict[str, str], variant: str = "plain") -> dict[str, float]:
    with tempfile.NamedTemporaryFile("r", suffix=".json") as f:
        subprocess.run(
            [sys.executable, "-c", CHILD, f.name, tree, variant, *args],
            env={**env, "PYTHONPATH": tree},
            cwd=tree,
            capture_output=True,
            timeout=120,
            check=False,
        )
        text = f.read()
    return dict(json.loads(text)["rows"]) if text else {}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", default=[ROOT])
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--rows", default="gate,audit", help=f"comma-separated, from: {', '.join(ROWS)}")
    ap.add_argument(
        "--probes-first",
        action="store_true",
        help="an experiment on B (give the same tree twice to see it alone): the gate's main thread waits until the "
        "probes' runner has started its probes before it imports, parses and derives (is the gate late because its "
        "probes start late?)",
    )
    ap.add_argument(
        "--first-run",
        action="store_true",
        help="the gate's first run: each tree a cache directory of its own whose kept decisions (gate/) are removed "
        "before every run (without it, the gate rows after run 0 are served from the decision run 0 kept)",
    )
    ns = ap.parse_args()
    trees = [os.path.abspath(t) for t in ns.trees][:2]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    labels = [r.strip() for r in ns.rows.split(",") if r.strip()]
    got: dict[tuple[str, int], list[dict[str, float]]] = {(r, n): [] for r in labels for n in range(len(trees))}
    with tempfile.TemporaryDirectory() as caches:
        for i in range(ns.runs + 1):  # run 0: bytecode, page cache, the plan cache
            for row in labels:
                order = list(enumerate(trees)) if i % 2 else list(enumerate(trees))[::-1]
                for n, tree in order:
                    variant = "probes-first" if ns.probes_first and n == 1 else "plain"
                    run_env = env
                    if ns.first_run:  # (the plan run 0 kept is still read, as bench/ab_trees.py's first-run rows)
                        run_env = {**env, "STACKCHECK_CACHE_DIR": os.path.join(caches, str(n))}
                        shutil.rmtree(os.path.join(run_env["STACKCHECK_CACHE_DIR"], "gate"), ignore_errors=True)
                    rows = once(tree, ROWS[row], run_env, variant)
                    if i:
                        got[(row, n)].append(rows)
    for row in labels:
        print(f"\n{row}: {' '.join(ROWS[row])}  (CPU ms, medians of {ns.runs} runs)")
        keys = sorted({k for n in range(len(trees)) for r in got[(row, n)] for k in r})
        head = "".join(f"{'A' if n == 0 else 'B':>9}" for n in range(len(trees)))
        print(f"  {'':52}{head}" + ("      B-A" if len(trees) == 2 else ""))
        for key in sorted(keys, key=lambda k: (not k.startswith(("process", "children", "main")), k)):
            meds = [statistics.median(r.get(key, 0.0) for r in got[(row, n)]) for n in range(len(trees))]
            line = f"  {key:52}" + "".join(f"{m:9.1f}" for m in meds)
            if len(meds) == 2:
                line += f"{meds[1] - meds[0]:+9.1f}"
            print(line)
    for n, t in enumerate(trees):
        print(f"{'A' if n == 0 else 'B'} = {t}" + (" (probes first)" if ns.probes_first and n == 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
