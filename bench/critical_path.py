"""What stands on the critical path of a probed `stackcheck audit` / `gate` beside the driver's start, tree A against
tree B: the times, since the process was spawned, at which the interpreter hands over to `python -m stackcheck`, the
forked NVML reader starts, it writes its answer, the answer is read and the process leaves.

    python bench/critical_path.py [--runs 21] [--init-ms 100] [--rows audit,gate] [--real-nvml] [--python3 PY]
                                  [--switch-ms MS] TREE_A [TREE_B]

Each run is a fresh process, `python -c CHILD ARGS...` where CHILD wraps os.fork, os.pipe, os.read, os.write,
os._exit and sys.exit (nothing of stackcheck is imported before `python -m stackcheck` would import it) and then
runs the package as `-m` does (runpy._run_module_as_main). Times are CLOCK_MONOTONIC (time.perf_counter), the same
clock in the spawning process, so they are measured from just before the spawn:
- `start` the CHILD's first line (the interpreter's start and site), `fork` the NVML reader's fork, `cstart` the
  reader's first moment, `ready` its first write of its answer (both in the reader), `answer` the answer's first
  bytes read in the command, `exit` os._exit's call, `end` the wait's return (the process torn down);
- `init0` and `init1` when the reader's call that starts the driver (nvmlInitWithFlags, in its Warm thread) begins
  and returns (that call timed in the reader, nothing else of it changed: so `init0` is everything before the
  driver's start begins, the interpreter's own start included);
- `pre` is fork less start, `reader` ready less fork, `take` answer less ready (how long the written answer waits
  for the NVML probe's thread: the interpreter lock, held by the command's other threads, and the read), `after`
  exit less the later of ready and fork (what the command still does once the driver has answered), `tail` exit less
  init1 (what runs after the driver's start has returned: the reader's reads and answer included); `forkcpu` the
  process's CPU time when it forks (the interpreter's start included), `selfcpu` the process's own CPU time (its
  threads, not the reader) when it leaves, `cpu` the process's and the children it reaped in all (a reader still
  shutting NVML down when the command leaves is not reaped by it, and its CPU is not in that figure).
By default the NVML is bench/sleepy_nvml: a stand-in pynvml (tests/fake_nvml.py's H200) whose nvmlInit calls a
stand-in libnvidia-ml.so.1 (libnvml_stub.c, built here with the system C compiler) whose first start in a process
takes --init-ms, as the driver's start; --real-nvml uses the box's pynvml and driver. Trees interleaved run by run,
each its own cache directory; run 0 warms. Medians; standard library only. `--switch-ms MS` (iperf30) lowers the
interpreter's switch interval to MS in the last tree's runs while the NVML probe's thread waits for the answer (so
it takes the lock sooner once the answer is written), from CHILD, not from stackcheck: the same tree given twice
is an A/B of that setting alone (`take`, `after`, `end` and `cpu` say what it changes)."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from floor import FLOOR  # noqa: E402  (bench/floor.py, beside this script)

SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
ROWS = {
    "audit": ["audit", "--format", "json"],
    "gate": ["gate", "--dry-run", "--", *SGLANG],
    "audit --deep": ["audit", "--deep", "--format", "json"],
}
CHILD = r"""
import os, sys, time
_t = [("start", time.perf_counter())]
_pid = os.getpid()
_fork, _pipe, _read, _write, _exit = os.fork, os.pipe, os.read, os.write, os._exit
_fds, _wfds, _c = set(), set(), []
_i = []
def _f():
    _t.append(("fork", time.perf_counter()))
    _t.append(("forkcpu", time.process_time()))
    pid = _fork()
    early = sys.modules.get("stackcheck.probes.nvml_early")
    if pid == 0:
        _c.append(time.perf_counter())
        if early is not None:  # the driver's start in the reader (Warm's thread): its call timed, nothing else changed
            _open = early._open_driver
            def _opened():
                lib = _open()
                class _Timed:
                    def __getattr__(self, name):
                        got = getattr(lib, name)
                        if name != "nvmlInitWithFlags":
                            return got
                        def _init(flags):
                            _i.append(time.perf_counter())
                            try:
                                return got(flags)
                            finally:
                                _i.append(time.perf_counter())
                        return _init
                return _Timed()
            early._open_driver = _opened
    elif early is not None and os.environ.get("CRITICAL_PATH_SWITCH_MS"):
        # the interpreter's switch interval lowered while the NVML probe's thread waits for the reader's answer, put
        # back once it has the answer: the thread then takes the interpreter lock from the threads still at work
        # within that interval of the answer, not within the default 5 ms
        _switch = float(os.environ["CRITICAL_PATH_SWITCH_MS"]) / 1e3
        _collect = early.ForkSession._collect
        def _collect_fast(self):
            before = sys.getswitchinterval()
            sys.setswitchinterval(_switch)
            try:
                return _collect(self)
            finally:
                sys.setswitchinterval(before)
        early.ForkSession._collect = _collect_fast
    return pid
def _p():
    r, w = _pipe()
    _fds.add(r)
    _wfds.add(w)
    return r, w
def _r(fd, n):
    data = _read(fd, n)
    if fd in _fds and data and os.getpid() == _pid:
        _t.append(("answer", time.perf_counter()))
        _fds.discard(fd)
    return data
def _w(fd, data):
    if fd in _wfds and os.getpid() != _pid:
        _wfds.discard(fd)
        with open(os.environ["CRITICAL_PATH_OUT"] + ".child", "w") as fh:
            fh.write(f"ready={time.perf_counter()!r} cstart={_c[0]!r}")
            if len(_i) == 2:
                fh.write(f" init0={_i[0]!r} init1={_i[1]!r}")
    return _write(fd, data)
def _mark():
    if os.getpid() == _pid and not any(k == "exit" for k, _ in _t):
        _t.append(("exit", time.perf_counter()))
        _t.append(("selfcpu", time.process_time()))
        with open(os.environ["CRITICAL_PATH_OUT"], "w") as fh:
            fh.write(" ".join(f"{k}={v!r}" for k, v in _t))
def _x(code):
    _mark()
    _exit(code)
_sysexit = sys.exit
def _sx(code=None):
    _mark()  # (the ordinary exit, which cli.run takes where a thread or an atexit callback waits: no NVML here)
    _sysexit(code)
os.fork, os.pipe, os.read, os.write, os._exit, sys.exit = _f, _p, _r, _w, _x, _sx
sys.argv = ["stackcheck", *sys.argv[1:]]
import runpy
runpy._run_module_as_main("stackcheck")
"""


def once(args: list[str], env: dict[str, str], cwd: str) -> dict[str, float]:
    out = env["CRITICAL_PATH_OUT"]  # (the same path every run of a tree: the gate keys its kept decision on the
    # whole environment, so a name that changed from run to run made every gate a first run, never one served)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, *args], env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(proc.pid, 0)
    end = time.perf_counter()
    proc.returncode = os.waitstatus_to_exitcode(status)
    got: dict[str, float] = {"end": (end - t0) * 1e3, "cpu": (usage.ru_utime + usage.ru_stime) * 1e3}
    for path in (out, out + ".child"):
        try:
            with open(path, encoding="utf-8") as fh:
                for item in fh.read().split():
                    k, v = item.split("=")
                    got[k] = float(v) * 1e3 if k in ("forkcpu", "selfcpu") else (float(v) - t0) * 1e3
            os.unlink(path)
        except OSError:
            pass
    if "exit" in got:
        got["after"] = got["exit"] - max(got.get("ready", 0.0), got.get("fork", 0.0))
        if "init1" in got:
            got["tail"] = got["exit"] - got["init1"]
    if "answer" in got and "ready" in got:
        got["take"] = got["answer"] - got["ready"]
    if "fork" in got:
        got["pre"] = got["fork"] - got["start"]
        if "ready" in got:
            got["reader"] = got["ready"] - got["fork"]
    return got


def stub_library() -> str | None:
    """bench/sleepy_nvml/libnvml_stub.c built as libnvidia-ml.so.1 in a temporary directory (its path), or None
    where no C compiler is found (the sleepy pynvml then sleeps in Python)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    out = tempfile.mkdtemp(prefix="stackcheck-cp-lib-")
    source = os.path.join(HERE, "sleepy_nvml", "libnvml_stub.c")
    lib = os.path.join(out, "libnvidia-ml.so.1")
    done = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", lib, source, "-lpthread"], check=False)
    return out if done.returncode == 0 else None


def floor_once(argv: list[str], env: dict[str, str], cwd: str) -> dict[str, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, _status, usage = os.wait4(proc.pid, 0)
    return {"end": (time.perf_counter() - t0) * 1e3, "cpu": (usage.ru_utime + usage.ru_stime) * 1e3}


def main() -> int:
    scratch = tempfile.mkdtemp(prefix="stackcheck-cp-")
    tempfile.tempdir = scratch  # (every directory and file made below: removed at the end)
    try:
        return measure()
    finally:
        tempfile.tempdir = None
        shutil.rmtree(scratch, ignore_errors=True)


def measure() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", metavar="TREE")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--init-ms", type=float, default=100.0)
    ap.add_argument("--rows", default="audit,gate")
    ap.add_argument("--real-nvml", action="store_true")
    ap.add_argument(
        "--python3",
        metavar="PY",
        help="the gate row's `python3` is this interpreter (a directory holding it first on PATH): where `python3` is "
        "a shim (pyenv's runs bash and pyenv each time, ~100 ms beside the probes), the plain interpreter an H200 has",
    )
    ap.add_argument("--no-stub", action="store_true", help="no stand-in libnvidia-ml.so.1: the fake sleeps in Python")
    ap.add_argument(
        "--switch-ms",
        type=float,
        metavar="MS",
        help="in the runs of the last tree given (give one tree twice for an A/B of the setting alone), the switch "
        "interval (sys.setswitchinterval) is MS while the NVML probe's thread waits for the reader's answer, and "
        "put back once it has it (set from this script's child, not by stackcheck)",
    )
    args = ap.parse_args()
    lib_dir = None if args.real_nvml or args.no_stub else stub_library()
    python3_dir = None
    if args.python3:
        python3_dir = tempfile.mkdtemp(prefix="stackcheck-cp-python3-")
        os.symlink(os.path.realpath(args.python3), os.path.join(python3_dir, "python3"))
    rows = {r: ROWS[r] for r in args.rows.split(",")}
    trees = [os.path.abspath(t) for t in args.trees]
    envs = []
    for i, tree in enumerate(trees):
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPATH"] = tree if args.real_nvml else os.path.join(HERE, "sleepy_nvml") + os.pathsep + tree
        env["STACKCHECK_BENCH_NVML_INIT_MS"] = str(args.init_ms)
        env["STACKCHECK_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"stackcheck-cp-{i}-")
        env["CRITICAL_PATH_OUT"] = os.path.join(tempfile.mkdtemp(prefix=f"stackcheck-cp-out-{i}-"), "marks")
        if python3_dir is not None:
            env["PATH"] = python3_dir + os.pathsep + env.get("PATH", "")
        if lib_dir is not None:
            env["LD_LIBRARY_PATH"] = lib_dir + (
                os.pathsep + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else ""
            )
        envs.append(env)
    if args.switch_ms is not None:
        envs[-1]["CRITICAL_PATH_SWITCH_MS"] = str(args.switch_ms)
    bare = {"floor": [sys.executable, "-c", FLOOR], "python -c pass": [sys.executable, "-c", "pass"]}
    bare_samples: dict[str, list[dict[str, float]]] = {k: [] for k in bare}
    keys = ("start", "pre", "fork", "forkcpu", "cstart", "init0", "init1", "reader", "ready", "answer", "take")
    keys += ("exit", "after", "tail", "end", "selfcpu", "cpu")
    samples: dict[tuple[str, int], list[dict[str, float]]] = {(r, t): [] for r in rows for t in range(len(trees))}
    for i in range(args.runs + 1):
        order = list(range(len(trees)))
        if i % 2:
            order.reverse()
        for label, argv in bare.items():
            got = floor_once(argv, envs[0], trees[0])
            if i:
                bare_samples[label].append(got)
        for row, argv in rows.items():
            for t in order:
                got = once(argv, envs[t], trees[t])
                if i:
                    samples[(row, t)].append(got)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} rounds, NVML init {args.init_ms} ms")
    print(f"stand-in libnvidia-ml.so.1: {lib_dir or 'none'}")
    print(f"{'row':<20} {'tree':<4}" + "".join(f"{k:>8}" for k in keys))
    for label, runs in bare_samples.items():
        end, cpu = statistics.median(r["end"] for r in runs), statistics.median(r["cpu"] for r in runs)
        print(f"{label:<20} {'':<4}" + " " * 8 * keys.index("end") + f"{end:8.1f}" + " " * 8 + f"{cpu:8.1f}")
    med: dict[tuple[str, int], dict[str, float]] = {}
    for (row, t), runs in samples.items():
        med[(row, t)] = {k: statistics.median(r[k] for r in runs if k in r) for k in keys if any(k in r for r in runs)}
        print(
            f"{row:<20} {'AB'[t] if t < 2 else t:<4}"
            + "".join(f"{med[(row, t)].get(k, float('nan')):8.1f}" for k in keys)
        )
    if len(trees) > 1:
        for row in rows:
            a, b = med[(row, 0)], med[(row, 1)]
            print(f"{row}: B - A " + ", ".join(f"{k} {b[k] - a[k]:+.1f}" for k in keys if k in a and k in b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
