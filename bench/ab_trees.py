"""Before and after, side by side: the same stackcheck commands run from two source trees (a checkout of the
parent commit and this one, say), interleaved, with the bare-NVML floor and `python -c pass` in every round.

    python bench/ab_trees.py [--runs 21] [--json out.json] [--rows "audit --facts,gate --facts"] [--fake-sglang]
                             TREE_A TREE_B

Each round runs the floor, `python -c pass`, then every row from tree A and tree B (their order alternating
from round to round, so that a drift of the machine falls on both), each a fresh process
(`python -m stackcheck ...` with PYTHONPATH set to the tree, bytecode cached as an installed copy has it; each
tree its own cache directory, so each reads its own kept plan). Round 0 only warms the page cache, the
bytecode and the caches. The table gives, per row and tree, the medians of wall and CPU time (the process and
its children, from getrusage of a one-child wrapper), the 90th percentile of wall, the ratio of wall to the
floor's, and B less A. Where NVML is absent the floor fails fast (its row says so) and the ratios say nothing.
`--fake-sglang` adds the row `gate --python (fake SGLang)`: the gate of an SGLang command line whose target
interpreter is a venv, built under a temporary directory by bench/fake_sglang_env.py, holding a stand-in
`sglang` distribution with real-shaped Requires-Dist lines, so that the gate's `dependencies` check reads them
on a box without SGLang. `--fresh-answers` removes each tree's kept answers of `plan` command lines (the
answer/ directory of its cache, stackcheck.assembly.plan_cache.Answer) before every run: the plan rows then show
the first run of each command line (the plan entry an earlier run kept is still read), not the answer served.
A tree that keeps the gate's decisions (stackcheck.assembly.gate_cache) serves the gate rows from them after
round 0 (the same launch on the same box: a hit); the rows named `(first run)` run with a cache directory of their
own per tree, whose kept decisions (its gate/ directory) are removed before every run: a miss, with the plan that
round 0 kept there still read; for `audit --deep (first run)` its deep/ directory (what --deep learned of each file,
stackcheck.readers.kept) is removed too: every file read, as after a change to the environment.
Standard library only."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from typing import Any

from floor import FLOOR, WRAPPER  # bench/floor.py, beside this script

SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
SGLANG_TP2 = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "2"]
H200_FACTS = "tests/cases/h200-newest/facts.json"
ROWS: dict[str, list[str]] = {
    # the 2-core goal's row: saved facts, nothing probed (relative to each tree: both hold the case)
    "audit --facts": ["audit", "--facts", "tests/cases/writeup-after/facts.json", "--format", "json"],
    # the gate's and the planner's own work, nothing probed: an H200 box's saved facts, the write-up box's
    "gate --facts": ["gate", "--dry-run", "--facts", "tests/cases/h200-newest/facts.json", "--", *SGLANG_TP2],
    "gate --facts (first run)": ["gate", "--dry-run", "--facts", H200_FACTS, "--", *SGLANG_TP2],
    "plan": ["plan", "--facts", "tests/cases/writeup-after/facts.json"],
    # the 2-core goal's `--want` row: a feature no release fixes (the planner runs: no kept plan answers it)
    "plan --want": ["plan", "--facts", "tests/cases/writeup-after/facts.json", "--want", "torch-symm-mem"],
    # the same two of the write-up's box before its upgrade (a six-step plan, eleven features still blocked)
    "plan (before)": ["plan", "--facts", "tests/cases/writeup-before/facts.json"],
    "plan --want (before)": ["plan", "--facts", "tests/cases/writeup-before/facts.json", "--want", "torch-symm-mem"],
    "audit": ["audit", "--format", "json"],
    "gate": ["gate", "--dry-run", "--", *SGLANG],
    "gate (first run)": ["gate", "--dry-run", "--", *SGLANG],
    "audit --deep": ["audit", "--deep", "--format", "json"],
    "audit --deep (first run)": ["audit", "--deep", "--format", "json"],
}


def once(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, env=env, cwd=cwd, check=True
    )
    wall, cpu, rc = out.stdout.split()
    return float(wall) * 1e3, float(cpu) * 1e3, int(rc)


def tree_env(tree: str, cache: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = tree
    env["STACKCHECK_CACHE_DIR"] = cache
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs=2, metavar="TREE")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--json", default=None)
    ap.add_argument("--fake-sglang", action="store_true", help="add the gate row of a venv with a stand-in sglang")
    ap.add_argument(
        "--fresh-answers", action="store_true", help="remove the kept answers of plan command lines before every run"
    )
    ap.add_argument("--rows", default=None, help=f"a comma-separated subset of: {', '.join(ROWS)} (default all)")
    args = ap.parse_args()
    fake = ("gate --python (fake SGLang)", "gate --python (fake SGLang) (first run)")  # (--fake-sglang's rows)
    chosen = args.rows.split(",") if args.rows else None
    if chosen:
        unknown = [r for r in chosen if r not in ROWS and not (args.fake_sglang and r in fake)]
        if unknown:
            ap.error(f"unknown rows: {', '.join(unknown)}")
        for row in [r for r in ROWS if r not in chosen]:
            del ROWS[row]
    if args.fake_sglang and (chosen is None or any(r in chosen for r in fake)):
        from fake_sglang_env import build  # bench/fake_sglang_env.py, beside this script

        python = build(os.path.join(tempfile.mkdtemp(prefix="stackcheck-ab-sglang-"), "venv"))
        for row in fake:
            if chosen is None or row in chosen:
                ROWS[row] = ["gate", "--dry-run", "--python", python, "--", *SGLANG]
    trees = [os.path.abspath(t) for t in args.trees]
    caches = [tempfile.mkdtemp(prefix=f"stackcheck-ab-{i}-") for i in range(2)]
    envs = [tree_env(t, c) for t, c in zip(trees, caches, strict=True)]
    # the `(first run)` rows: a cache of their own, so that removing their kept decisions leaves the other rows'
    first_caches = [tempfile.mkdtemp(prefix=f"stackcheck-ab-first-{i}-") for i in range(2)]
    first_envs = [tree_env(t, c) for t, c in zip(trees, first_caches, strict=True)]
    samples: dict[str, list[tuple[float, float, int]]] = {"floor": [], "python -c pass": []}
    for row in ROWS:
        for label in ("A", "B"):
            samples[f"{row} [{label}]"] = []
    for i in range(args.runs + 1):
        got = {"floor": once([sys.executable, "-c", FLOOR], envs[0], trees[0]),
               "python -c pass": once([sys.executable, "-c", "pass"], envs[0], trees[0])}  # fmt: skip
        order = [0, 1] if i % 2 else [1, 0]
        for row, argv in ROWS.items():
            for t in order:
                if args.fresh_answers:
                    shutil.rmtree(os.path.join(caches[t], "answer"), ignore_errors=True)
                env = envs[t]
                if row.endswith("(first run)"):  # (the decisions a tree keeps: gate_cache; none in an older tree)
                    env = first_envs[t]
                    shutil.rmtree(os.path.join(first_caches[t], "gate"), ignore_errors=True)
                    shutil.rmtree(os.path.join(first_caches[t], "deep"), ignore_errors=True)
                got[f"{row} [{'AB'[t]}]"] = once([sys.executable, "-m", "stackcheck", *argv], env, trees[t])
        if i:
            for k, v in got.items():
                samples[k].append(v)
    floor_ok = all(rc == 0 for _, _, rc in samples["floor"])
    floor_wall = statistics.median(w for w, _, _ in samples["floor"])
    result: dict[str, dict[str, Any]] = {}
    for k, rows in samples.items():
        walls = sorted(w for w, _, _ in rows)
        result[k] = {
            "wall_ms": round(statistics.median(walls), 1),
            "wall_p90_ms": round(walls[int(0.9 * (len(walls) - 1))], 1),
            "cpu_ms": round(statistics.median(c for _, c, _ in rows), 1),
            "exit": sorted({rc for _, _, rc in rows}),
        }
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, {args.runs} rounds; A = {trees[0]}, B = {trees[1]}")
    print(f"{'row':<36} {'wall':>7} {'p90':>7} {'CPU':>7} {'/floor':>7}  exit")
    for k, r in result.items():
        ratio = f"{r['wall_ms'] / floor_wall:6.2f}x" if floor_ok else "     - "
        print(f"{k:<36} {r['wall_ms']:7.1f} {r['wall_p90_ms']:7.1f} {r['cpu_ms']:7.1f} {ratio}  {r['exit']}")
    for row in ROWS:
        a, b = result[f"{row} [A]"], result[f"{row} [B]"]
        print(f"{row}: B - A = {b['wall_ms'] - a['wall_ms']:+.1f} ms wall, {b['cpu_ms'] - a['cpu_ms']:+.1f} ms CPU")
    if not floor_ok:
        print("the floor did not run cleanly (no NVML here?): its ratios say nothing about the driver", file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"trees": trees, "runs": args.runs, "floor_ok": floor_ok, "rows": result}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
