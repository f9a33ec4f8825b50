"""iperf38 (issue 21): what the seventeenth session's additions cost a probed audit and gate on a target environment
that holds FlashInfer's cubins: two trees, interleaved runs pinned to two cores (taskset -c 0,1), CPU (user + system
of the command) and wall medians, one callgrind count per row and tree (the command's own process: the forked NVML
reader is not followed).

The target is a venv with flashinfer-python and flashinfer-cubin installed --no-deps from the real wheels (0.6.13:
the cubin wheel's newest release; its checksums.txt files 2.4 MB, 490 KB, 35 KB, 19 KB, 16,015 files):

    python3 -m venv /tmp/iperf38-tenv
    /tmp/iperf38-tenv/bin/pip download --no-deps flashinfer-python==0.6.13 flashinfer-cubin==0.6.13 -d WHEELS
    /tmp/iperf38-tenv/bin/pip install --no-deps WHEELS/*.whl
    python3 bench/iperf38_ab.py TREE_A [TREE_B] --target /tmp/iperf38-tenv/bin/python [--runs 21] [--rows ...]

Rows: `python -c pass`; `audit --python TARGET --format json`; `gate --dry-run --format json -- TARGET -m
sglang.launch_server ...` (sglang itself not installed: the gate still runs its probes, and refuses); `srun` and
`mpirun`: that gate behind `nice srun ... taskset` / `mpirun -np 1 ...` (the runner readers); `probe`: the
flashinfer_cubins probe's own function on the audit's packages facts, 15 calls in one process (the tree without the
probe prints '-'). Each tree has a cache directory of its own; its answer/ and gate/ directories are removed before
every run (no kept verdict or gate answer is served), deep/ (readers.kept: the probes' per-file answers) is kept
between runs unless --cold. A tree: git archive REV -- stackcheck manifests schemas pyproject.toml tests/cases."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = ["taskset", "-c", "0,1"]
WRAP = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "w = time.perf_counter() - t\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(r.ru_utime + r.ru_stime, w, p.returncode)\n"
)
PROBE = (
    "import json, sys, time\n"
    "try:\n"
    "    from stackcheck.probes.flashinfer_cubins import probe_cubins\n"
    "except ImportError:\n"
    "    print('-'); sys.exit(0)\n"
    "from stackcheck.readers.fsview import HostView\n"
    "import inspect\n"
    "facts = json.load(open(sys.argv[1]))\n"
    "kw = {'cache_dir': sys.argv[2]} if 'cache_dir' in inspect.signature(probe_cubins).parameters else {}\n"
    "ws, cs = [], []\n"
    "for _ in range(15):\n"
    "    t, c = time.perf_counter(), time.process_time()\n"
    "    probe_cubins(facts, {'HOME': '/nonexistent'}, HostView(), **kw)\n"
    "    ws.append(time.perf_counter() - t); cs.append(time.process_time() - c)\n"
    "ws.sort(); cs.sort()\n"
    "print(cs[7] * 1000, ws[7] * 1000)\n"
)


SRUN = ["nice", "-n", "5", "srun", "-N", "1", "-n", "1", "--gpus-per-task", "1", "--mem", "64G", "taskset", "-c", "0-7"]
MPIRUN = ["mpirun", "-np", "1", "--bind-to", "none", "-x", "NCCL_DEBUG=INFO"]


def rows(target: str) -> dict[str, list[str]]:
    sg = [target, "-m", "sglang.launch_server", "--model-path", "/nonexistent/model", "--tp", "1"]
    return {
        "pass": ["-c", "pass"],
        "audit": ["-m", "stackcheck", "audit", "--python", target, "--format", "json"],
        "gate": ["-m", "stackcheck", "gate", "--dry-run", "--format", "json", "--", *sg],
        # the runner readers (runners.py's allow-list, srun's options, mpirun -np 1's files) on the same launch
        "srun": ["-m", "stackcheck", "gate", "--dry-run", "--format", "json", "--", *SRUN, *sg],
        "mpirun": ["-m", "stackcheck", "gate", "--dry-run", "--format", "json", "--", *MPIRUN, *sg],
    }


def _env(tree: str, cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "STACKCHECK_", "FLASHINFER_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("VIRTUAL_ENV", None)
    return {**env, "PYTHONPATH": tree, "STACKCHECK_CACHE_DIR": cache}


def _fresh(cache: str, cold: bool) -> None:
    for leaf in ("answer", "gate", *(("deep",) if cold else ())):
        shutil.rmtree(os.path.join(cache, leaf), ignore_errors=True)


def instructions(py: str, tree: str, args: list[str], cache: str, cold: bool) -> int:
    _fresh(cache, cold)
    with tempfile.TemporaryDirectory(prefix="iperf38-cg-") as d:
        out = os.path.join(d, "cg.out")
        cmd = [*PIN, "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", py, *args]
        subprocess.run(cmd, cwd=tree, env=_env(tree, cache), capture_output=True, check=False, timeout=900)
        try:
            with open(out) as f:
                m = re.search(r"^(?:summary|totals):\s+(\d+)", f.read(), re.M)
        except OSError:
            return -1
        return int(m.group(1)) if m else -1


def once(py: str, tree: str, args: list[str], cache: str, cold: bool) -> tuple[float, float, int]:
    _fresh(cache, cold)
    out = subprocess.run(
        [*PIN, py, "-c", WRAP, py, *args], cwd=tree, env=_env(tree, cache), capture_output=True, text=True,
        check=True, timeout=600,
    )  # fmt: skip
    cpu, wall, rc = out.stdout.split()
    return float(cpu) * 1000, float(wall) * 1000, int(rc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree_a")
    ap.add_argument("tree_b", nargs="?", default=str(ROOT))
    ap.add_argument("--target", required=True, help="the target environment's python")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--rows", default="pass,audit,gate,probe")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cold", action="store_true", help="remove deep/ (the probes' kept answers) before every run")
    ap.add_argument("--no-callgrind", action="store_true")
    args = ap.parse_args()
    trees = {"A": os.path.abspath(args.tree_a), "B": os.path.abspath(args.tree_b)}
    table = rows(args.target)
    print(f"A {trees['A']}\nB {trees['B']}\ntarget {args.target}, {'cold' if args.cold else 'warm'} deep/")
    print(f"load averages before {os.getloadavg()}")
    head = f"{'row':6} {'Ir A (M)':>9} {'Ir B (M)':>9} {'dIr':>7}  {'CPU A':>7} {'CPU B':>7}"
    print(f"{head}  {'wall A':>7} {'wall B':>7}  rc")
    tmp = tempfile.mkdtemp(prefix="iperf38-ab-")
    try:
        for name in args.rows.split(","):
            caches = {t: tempfile.mkdtemp(prefix=f"cache-{t}-", dir=tmp) for t in trees}
            if name == "probe":
                _probe_row(args, trees, caches, tmp)
                continue
            row = table[name]
            cpu: dict[str, list[float]] = {t: [] for t in trees}
            wall: dict[str, list[float]] = {t: [] for t in trees}
            rcs: dict[str, set[int]] = {t: set() for t in trees}
            for i in range(args.runs + 1):  # (the first of each: a warm-up that keeps the prepared manifests)
                order = list(trees.items()) if i % 2 else list(reversed(trees.items()))
                for t, tree in order:
                    c, w, rc = once(args.python, tree, row, caches[t], args.cold)
                    rcs[t].add(rc)
                    if i:
                        cpu[t].append(c)
                        wall[t].append(w)
            ir = {
                t: -1 if args.no_callgrind else instructions(args.python, tree, row, caches[t], args.cold)
                for t, tree in trees.items()
            }
            d = (ir["B"] - ir["A"]) / ir["A"] * 100 if ir["A"] > 0 else float("nan")
            mc = {t: statistics.median(v) for t, v in cpu.items()}
            mw = {t: statistics.median(v) for t, v in wall.items()}
            print(
                f"{name:6} {ir['A'] / 1e6:9.1f} {ir['B'] / 1e6:9.1f} {d:+6.1f}%  {mc['A']:7.1f} {mc['B']:7.1f}  "
                f"{mw['A']:7.1f} {mw['B']:7.1f}  A {sorted(rcs['A'])} B {sorted(rcs['B'])}",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load averages after {os.getloadavg()}")
    return 0


def _probe_row(args: argparse.Namespace, trees: dict[str, str], caches: dict[str, str], tmp: str) -> None:
    """The probe's function alone, 15 calls in one process per tree (medians of CPU and wall, ms)."""
    facts_file = os.path.join(tmp, "packages.json")
    if not os.path.exists(facts_file):
        out = subprocess.run(
            [args.python, "-m", "stackcheck", "audit", "--python", args.target, "--format", "json"],
            cwd=trees["B"], env=_env(trees["B"], caches["B"]), capture_output=True, text=True, check=True,
            timeout=600,
        )  # fmt: skip
        with open(facts_file, "w") as f:
            json.dump({"packages": json.loads(out.stdout)["facts"]["packages"]}, f)
    for t, tree in trees.items():
        t0 = time.perf_counter()
        out = subprocess.run(
            [*PIN, args.python, "-c", PROBE, facts_file, "" if args.cold else caches[t]], cwd=tree,
            env=_env(tree, caches[t]), capture_output=True, text=True, check=False, timeout=600,
        )  # fmt: skip
        got = out.stdout.split() or [out.stderr.strip()[-200:]]
        print(f"probe  {t}: CPU / wall median ms {' / '.join(got)}  ({time.perf_counter() - t0:.1f} s)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
