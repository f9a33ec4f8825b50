"""iperf36 (issue 21): two trees' cost per verb on a box never seen before ("new box": a cache directory of the tree's
own whose prepared manifests a warm-up run kept, its answer/ and gate/ directories removed before every run, so no
plan, verdict or gate answer kept for these facts is read), as instruction counts (valgrind --tool=callgrind, one run
each) and CPU time medians (user + system of the command, the two trees' runs interleaved), every command pinned to
two cores (taskset -c 0,1). Rows: `python -c pass` (the floor), plan --want torch-symm-mem and plain plan of the
write-up box before its upgrade (tests/cases/writeup-before, text), audit --facts of that box (json), gate --facts
--dry-run of an SGLang-shaped line on tests/cases/h200-newest (bench/bench_gate.py's). bench/iperf35_ab.py measures
the same verbs with the cache kept between runs.

    python3 bench/iperf36_ab.py TREE_A [TREE_B] [--runs 11] [--rows pass,want,plan,audit,gate] [--python PY]

(TREE_B defaults to this tree; a base tree: git archive REV -- stackcheck manifests schemas pyproject.toml tests/cases.
--no-callgrind: CPU medians only.)"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WU = str(ROOT / "tests" / "cases" / "writeup-before" / "facts.json")
H200 = str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json")
SG = ["--", "/bin/true", "--tp", "8", "--attention-backend", "flashinfer"]
ROWS = {
    "pass": ["-c", "pass"],
    "want": ["-m", "stackcheck", "plan", "--facts", WU, "--want", "torch-symm-mem"],
    "plan": ["-m", "stackcheck", "plan", "--facts", WU],
    "audit": ["-m", "stackcheck", "audit", "--facts", WU, "--format", "json"],
    "gate": ["-m", "stackcheck", "gate", "--facts", H200, "--dry-run", "--format", "json", *SG],
}
WRAP = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(r.ru_utime + r.ru_stime, p.returncode)\n"
)
PIN = ["taskset", "-c", "0,1"]


def _env(tree: str, cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "STACKCHECK_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return {**env, "PYTHONPATH": tree, "STACKCHECK_CACHE_DIR": cache}


def _new_box(cache: str) -> None:
    """The cache as on a machine where stackcheck ran before, never on this box: the kept answers removed."""
    for leaf in ("answer", "gate"):
        shutil.rmtree(os.path.join(cache, leaf), ignore_errors=True)


def instructions(py: str, tree: str, args: list[str], cache: str) -> int:
    _new_box(cache)
    with tempfile.TemporaryDirectory(prefix="iperf36-cg-") as d:
        out = os.path.join(d, "cg.out")
        cmd = [*PIN, "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", py, *args]
        subprocess.run(cmd, cwd=tree, env=_env(tree, cache), capture_output=True, check=False, timeout=600)
        with open(out) as f:
            m = re.search(r"^(?:summary|totals):\s+(\d+)", f.read(), re.M)
        return int(m.group(1)) if m else -1


def cpu_once(py: str, tree: str, args: list[str], cache: str) -> tuple[float, int]:
    _new_box(cache)
    out = subprocess.run(
        [*PIN, py, "-c", WRAP, py, *args], cwd=tree, env=_env(tree, cache), capture_output=True, text=True,
        check=True, timeout=600,
    )  # fmt: skip
    cpu, rc = out.stdout.split()
    return float(cpu) * 1000, int(rc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree_a")
    ap.add_argument("tree_b", nargs="?", default=str(ROOT))
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--no-callgrind", action="store_true")
    args = ap.parse_args()
    trees = {"A": os.path.abspath(args.tree_a), "B": os.path.abspath(args.tree_b)}
    print(f"A {trees['A']}\nB {trees['B']}\nload averages before {os.getloadavg()}")
    print(f"{'row':8} {'Ir A (M)':>9} {'Ir B (M)':>9} {'dIr':>7}  {'CPU A ms':>8} {'CPU B ms':>8}  rc")
    tmp = tempfile.mkdtemp(prefix="iperf36-ab-")
    try:
        for name in args.rows.split(","):
            row = ROWS[name]
            caches = {t: tempfile.mkdtemp(prefix=f"cache-{t}-", dir=tmp) for t in trees}
            cpu: dict[str, list[float]] = {t: [] for t in trees}
            rcs: dict[str, set[int]] = {t: set() for t in trees}
            for i in range(args.runs + 1):  # (the first of each: a warm-up that keeps the prepared manifests)
                order = list(trees.items()) if i % 2 else list(reversed(trees.items()))
                for t, tree in order:
                    ms, rc = cpu_once(args.python, tree, row, caches[t])
                    rcs[t].add(rc)
                    if i:
                        cpu[t].append(ms)
            ir = {
                t: -1 if args.no_callgrind else instructions(args.python, tree, row, caches[t])
                for t, tree in trees.items()
            }
            d = (ir["B"] - ir["A"]) / ir["A"] * 100 if ir["A"] > 0 else float("nan")
            med = {t: statistics.median(v) for t, v in cpu.items()}
            print(
                f"{name:8} {ir['A'] / 1e6:9.1f} {ir['B'] / 1e6:9.1f} {d:+6.1f}%  {med['A']:8.1f} {med['B']:8.1f}  "
                f"A {sorted(rcs['A'])} B {sorted(rcs['B'])}",
                flush=True,
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load averages after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
