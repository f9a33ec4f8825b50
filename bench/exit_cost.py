"""What a probed `stackcheck audit` / `gate` costs between its os._exit and its parent's wait returning (issue 21,
iperf31: bench/critical_path.py's `exit` -> `end`, 16 ms on the lent H100 against ~10 ms for all of `python -c
pass`), with what the process holds when it leaves, and variants that each take one suspect off that stretch.

    python bench/exit_cost.py [--runs 15] [--rows audit,gate] [--init-ms 28] [--real-nvml] [--python3 PY] [TREE]

Each run is a fresh process, `python -c CHILD ARGS...` (the package run as `-m` runs it, as bench/critical_path.py
does) whose os._exit, in the command's own process only, first reads what the process holds (/proc/self: VmRSS,
RssAnon, RssFile, VmHWM, VmPTE, threads, open descriptors, mappings; whether the forked NVML reader is still
running, a zombie or gone; atexit's callbacks still registered), then does the variant's step, then takes `exit`
(time.perf_counter) and writes it, with the rest, to a pipe the spawning process reads after its wait4 (no file is
written after `exit`: critical_path's marks file is, and `marked` says what that costs), then calls the real
os._exit. Where cli.run takes the ordinary exit instead (sys.exit: a thread that is not a daemon or threading's
exit hook waits), the same is done in sys.exit, the row says so (`exits:`, with the threads then running), and `reap`
then holds the interpreter's whole teardown. `reap` is wait4's return less `exit` (the same clock, CLOCK_MONOTONIC,
in both processes). Variants, interleaved run by run:
- `plain`: the program as it leaves;
- `marked`: bench/critical_path.py's marks file written between `exit` and os._exit, as critical_path does (the
  bench's own share of its `exit` -> `end`);
- `reaped`: the forked reader waited for (waitpid, blocking) before `exit` (`step` is that wait): `reap` without a
  reader still shutting NVML down when the command leaves (its PR_SET_PDEATHSIG kill and reparenting);
- `trimmed`: glibc's malloc_trim(0) before `exit` (`step` is the trim): `reap` with the heap's free pages already
  given back (what is left is the pages in use, the mappings, the page tables);
- `bare` (one row): `python -c` that sleeps 50 ms (so the spawning process is in wait4 when it leaves) then
  os._exit: the floor of a process's teardown and the parent's wake-up on this box.
By default NVML is bench/sleepy_nvml with critical_path's stand-in libnvidia-ml.so.1 (--init-ms: 28 puts the answer
near where the lent H100's driver puts it); --real-nvml uses the box's pynvml and driver. Medians (and the lowest
`reap`); standard library only; no stackcheck code changed by it."""

from __future__ import annotations

import argparse
import json
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
import os, sys, time, json
_fd, _variant = int(os.environ["EXIT_COST_FD"]), os.environ["EXIT_COST_VARIANT"]
_pid, _fork, _exit, _readers = os.getpid(), os.fork, os._exit, []
def _f():
    pid = _fork()
    if pid > 0 and os.getpid() == _pid:
        _readers.append(pid)
    return pid
def _held():
    got = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM", "VmPTE"):
                got[key] = float(value.split()[0]) / 1024
            elif key == "Threads":
                got[key] = float(value)
    got["fds"] = float(len(os.listdir("/proc/self/fd")))
    with open("/proc/self/maps") as fh:
        got["maps"] = float(sum(1 for _ in fh))
    state = "gone"
    for pid in _readers:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = "zombie" if fh.read().rpartition(")")[2].split()[0] == "Z" else "running"
        except OSError:
            pass
    got["reader"] = state
    return got
def _leave(path):
    held = _held()
    held["path"] = path
    held["atexit"] = float(sys.modules["atexit"]._ncallbacks()) if "atexit" in sys.modules else 0.0
    threads = sys.modules.get("threading")
    held["names"] = sorted(t.name for t in threads.enumerate()) if threads else []
    t = time.perf_counter()
    if _variant == "reaped":
        for pid in _readers:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
    elif _variant == "trimmed":
        import ctypes
        ctypes.CDLL(None).malloc_trim(0)
    held["step"] = (time.perf_counter() - t) * 1e3
    exit_at = time.perf_counter()
    held["exit"] = exit_at
    os.write(_fd, json.dumps(held).encode())
    if _variant == "marked":
        with open(os.environ["EXIT_COST_MARKS"], "w") as fh:
            fh.write(f"exit={exit_at!r} selfcpu={time.process_time()!r}")
def _x(code):
    if os.getpid() == _pid:
        _leave("os._exit")
    _exit(code)
_sysexit = sys.exit
def _sx(code=None):
    if os.getpid() == _pid:
        _leave("sys.exit")  # (cli.run's ordinary exit: a thread that is not a daemon or an atexit callback waits)
    _sysexit(code)
os.fork, os._exit, sys.exit = _f, _x, _sx
sys.argv = ["stackcheck", *sys.argv[1:]]
import runpy
runpy._run_module_as_main("stackcheck")
"""
BARE = r"""
import os, time, json
time.sleep(0.05)
os.write(int(os.environ["EXIT_COST_FD"]), json.dumps({"exit": time.perf_counter()}).encode())
os._exit(0)
"""
VARIANTS = ("plain", "marked", "reaped", "trimmed")
KEYS = ("reap", "step", "VmRSS", "RssAnon", "RssFile", "VmHWM", "VmPTE", "Threads", "fds", "maps", "atexit")


def once(argv: list[str], env: dict[str, str], cwd: str) -> dict[str, float | str] | None:
    r, w = os.pipe()
    env = dict(env, EXIT_COST_FD=str(w))
    proc = subprocess.Popen(argv, env=env, cwd=cwd, pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    os.wait4(proc.pid, 0)
    end = time.perf_counter()
    chunks = []
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(r)
    if not chunks:
        return None
    got: dict[str, float | str] = json.loads(b"".join(chunks))
    got["reap"] = (end - float(got.pop("exit"))) * 1e3
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tree", nargs="?", default=os.path.dirname(HERE))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--rows", default="audit,gate")
    ap.add_argument("--init-ms", type=float, default=28.0)
    ap.add_argument("--real-nvml", action="store_true")
    ap.add_argument("--python3", help="this interpreter first on PATH as `python3` (the gate row's target)")
    ns = ap.parse_args()
    tree = os.path.abspath(ns.tree)
    scratch = tempfile.mkdtemp(prefix="stackcheck-ec-")
    try:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        first = [tree] if ns.real_nvml else [os.path.join(HERE, "sleepy_nvml"), tree]
        env["PYTHONPATH"] = os.pathsep.join([*first, *inherited])
        env["STACKCHECK_BENCH_NVML_INIT_MS"] = str(ns.init_ms)
        if not ns.real_nvml:
            tempfile.tempdir = scratch
            lib = stub_library()
            tempfile.tempdir = None
            if lib is not None:
                env["LD_LIBRARY_PATH"] = lib + os.pathsep + env.get("LD_LIBRARY_PATH", "")
        if ns.python3:
            bindir = os.path.join(scratch, "bin")
            os.mkdir(bindir)
            os.symlink(os.path.realpath(ns.python3), os.path.join(bindir, "python3"))
            env["PATH"] = bindir + os.pathsep + env.get("PATH", "")
        env["STACKCHECK_CACHE_DIR"] = os.path.join(scratch, "cache")
        env["EXIT_COST_MARKS"] = os.path.join(scratch, "marks")
        rows = [r.strip() for r in ns.rows.split(",") if r.strip()]
        cells = [(row, v) for row in rows for v in VARIANTS]
        got: dict[tuple[str, str], list[dict[str, float | str]]] = {c: [] for c in [*cells, ("bare", "")]}
        for i in range(ns.runs + 1):  # run 0: bytecode, page cache, the kept answers
            order = cells if i % 2 == 0 else cells[::-1]
            for row, variant in [("bare", ""), *order]:
                argv = [sys.executable, "-c", BARE] if row == "bare" else [sys.executable, "-c", CHILD, *ROWS[row]]
                sample = once(argv, dict(env, EXIT_COST_VARIANT=variant), tree)
                if i and sample is not None:
                    got[(row, variant)].append(sample)
        nvml = "real" if ns.real_nvml else f"stand-in, init {ns.init_ms:g} ms"
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {ns.runs} runs, NVML {nvml}")
        print("reap: ms from os._exit to the parent's wait4; memory in MiB; medians (reap's lowest in brackets)")
        head = f"{'row':<8}{'variant':<9}{'n':>3}{'reap':>7}{'(min)':>7}" + "".join(f"{k:>8}" for k in KEYS[1:])
        print(head + "  reader")
        for (row, variant), samples in got.items():
            if not samples:
                print(f"{row:<8}{variant:<9}  0 (no exit seen)")
                continue
            line = f"{row:<8}{variant:<9}{len(samples):>3}"
            reaps = [float(s["reap"]) for s in samples]
            line += f"{statistics.median(reaps):7.2f}({min(reaps):5.2f})"
            for k in KEYS[1:]:
                vals = [float(s[k]) for s in samples if k in s]
                line += f"{statistics.median(vals):8.1f}" if vals else f"{'':8}"
            states = [str(s["reader"]) for s in samples if "reader" in s]
            line += "  " + ", ".join(f"{st} {states.count(st)}" for st in sorted(set(states)))
            paths = [str(s["path"]) for s in samples if "path" in s]
            if any(p != "os._exit" for p in paths):  # the ordinary exit: `reap` holds the interpreter's teardown
                line += "  exits: " + ", ".join(f"{p} {paths.count(p)}" for p in sorted(set(paths)))
                names = sorted({n for s in samples for n in s.get("names", []) if isinstance(s.get("names"), list)})
                line += f"  threads: {', '.join(names)}"
            print(line)
        print(f"tree = {tree}")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
