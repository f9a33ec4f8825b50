"""The first run of `plan --want torch-symm-mem` on a box never seen before (issue 21's 2-core goal: <= 30 ms of CPU
over `python -c pass`), interleaved with `python -c pass` in every round.

    python bench/bench_want_first.py [--runs 21] [--json out.json] [--want torch-symm-mem] [TREE ...]

Boxes: the write-up box before its upgrade (tests/cases/writeup-before), and two others that no release fixes
torch-symm-mem on (rtxpro6000-pcie-iommu-translated: SM120, PCIe; rtx4090-pcie-sglang044: SM89, SGLang 0.4.4).
Each run reads a copy of the box's facts whose host name carries the round's number, so no kept answer matches.
Two ways of "never seen":
  cold     a new, empty cache directory for every run (XDG_CACHE_HOME; STACKCHECK_CACHE_DIR unset): nothing kept,
           not even the prepared manifests (a first run after installing).
  new box  one cache directory per tree, warmed by round 0 (its prepared manifests kept) with its answer/ directory
           removed before every run: stackcheck has run on this machine before, never on this box.
Every TREE (default: this script's tree) runs each row in every round, the trees' order alternating from round to
round. The table gives medians of wall and CPU time (the child's getrusage, bench/floor.py's wrapper) and the
medians of each run's wall and CPU less its round's `python -c pass`. Standard library only; cache directories
live under one temporary directory, removed at the end."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from floor import WRAPPER  # bench/floor.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
BOXES = ("writeup-before", "rtxpro6000-pcie-iommu-translated", "rtx4090-pcie-sglang044")


def once(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, env=env, cwd=cwd, check=True, timeout=60
    )
    wall, cpu, rc = out.stdout.split()
    return float(wall) * 1e3, float(cpu) * 1e3, int(rc)


def box_copy(tree: str, box: str, tag: str, tmp: str) -> str:
    with open(os.path.join(tree, "tests", "cases", box, "facts.json"), encoding="utf-8") as fh:
        doc = json.load(fh)
    doc["host"]["hostname"] = f"bench-want-first-{tag}"
    path = os.path.join(tmp, f"{box}-{tag}.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
    return path


def tree_env(tree: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("STACKCHECK_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
    env["PYTHONPATH"] = tree
    env.update(extra)
    return env


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="*", metavar="TREE", default=[os.path.dirname(HERE)])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--want", default="torch-symm-mem")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    trees = [os.path.abspath(t) for t in args.trees]
    tmp = tempfile.mkdtemp(prefix="stackcheck-want-first-")
    try:
        kept = [os.path.join(tmp, f"kept-{i}") for i in range(len(trees))]
        samples: dict[str, list[tuple[float, float, int]]] = {"python -c pass": []}
        over: dict[str, list[float]] = {}
        over_wall: dict[str, list[float]] = {}
        for i in range(args.runs + 1):
            wall, cpu, rc = once([sys.executable, "-c", "pass"], tree_env(trees[0]), trees[0])
            if i:
                samples["python -c pass"].append((wall, cpu, rc))
            order = list(range(len(trees))) if i % 2 else list(reversed(range(len(trees))))
            for box in BOXES:
                for mode in ("cold", "new box"):
                    for t in order:
                        facts = box_copy(trees[t], box, f"{i}-{t}", tmp)
                        if mode == "cold":
                            cache = tempfile.mkdtemp(prefix="cold-", dir=tmp)
                        else:
                            cache = kept[t]
                            shutil.rmtree(os.path.join(cache, "stackcheck", "answer"), ignore_errors=True)
                        env = tree_env(trees[t], XDG_CACHE_HOME=cache)
                        argv = [sys.executable, "-m", "stackcheck", "plan", "--facts", facts, "--want", args.want]
                        got = once(argv, env, trees[t])
                        if mode == "cold":
                            shutil.rmtree(cache, ignore_errors=True)
                        if i:
                            key = f"{box} {mode} [{t}]"
                            samples.setdefault(key, []).append(got)
                            over.setdefault(key, []).append(got[1] - cpu)
                            over_wall.setdefault(key, []).append(got[0] - wall)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    load = os.getloadavg()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} rounds, load {load[0]:.1f}")
    for t, tree in enumerate(trees):
        print(f"[{t}] = {tree}")
    print(f"{'row':<44} {'wall':>7} {'CPU':>7} {'wall-pass':>9} {'CPU-pass':>9}  exit")
    result: dict[str, dict[str, object]] = {}
    for k, rows in samples.items():
        r: dict[str, object] = {
            "wall_ms": round(statistics.median(w for w, _, _ in rows), 1),
            "cpu_ms": round(statistics.median(c for _, c, _ in rows), 1),
            "exit": sorted({rc for _, _, rc in rows}),
        }
        if k in over:
            r["cpu_over_pass_ms"] = round(statistics.median(over[k]), 1)
            r["wall_over_pass_ms"] = round(statistics.median(over_wall[k]), 1)
        result[k] = r
        extra = f"{r['wall_over_pass_ms']:9.1f} {r['cpu_over_pass_ms']:9.1f}" if k in over else f"{'':19}"
        print(f"{k:<44} {r['wall_ms']:7.1f} {r['cpu_ms']:7.1f} {extra}  {r['exit']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"trees": trees, "runs": args.runs, "rows": result}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
