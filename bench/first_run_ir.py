"""Instructions of the first run of a `plan` command line, tree A against tree B, counted by callgrind (a count
that the load of a shared 2-core machine does not move, unlike its CPU ms): each row runs once to keep its plan
(the plan cache's entry, as ab_trees.py's rows do in round 0), then its kept answer (the answer/ directory) is
removed and the row runs under `valgrind --tool=callgrind`; `python -c pass` is counted beside.

    python bench/first_run_ir.py [--runs 1] [--rows "plan,audit --facts"] TREE_A TREE_B

Each tree has a cache directory of its own (STACKCHECK_CACHE_DIR under a temporary directory), its bytecode
written as an installed copy has it. Prints per row and tree the instructions (millions; the median of --runs),
those over `python -c pass`, and B less A. `audit --facts` (the 2-core goal's row, kept by no answer cache) counts
the audit of the same saved facts after its warming run. Needs valgrind. Standard library only."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROWS: dict[str, list[str]] = {
    "plan": ["plan", "--facts", "tests/cases/writeup-after/facts.json"],
    "plan --want": ["plan", "--facts", "tests/cases/writeup-after/facts.json", "--want", "torch-symm-mem"],
    "plan (before)": ["plan", "--facts", "tests/cases/writeup-before/facts.json"],
    "plan --want (before)": ["plan", "--facts", "tests/cases/writeup-before/facts.json", "--want", "torch-symm-mem"],
    "audit --facts": ["audit", "--facts", "tests/cases/writeup-after/facts.json", "--format", "json"],
}
COLLECTED = re.compile(r"Collected : (\d+)")


def count(argv: list[str], env: dict[str, str], cwd: str, out_dir: str) -> float:
    """Millions of instructions of one process (callgrind's total)."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_dir}/cg.%p", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=600,
    )
    found = COLLECTED.search(run.stderr)
    if found is None:
        raise SystemExit(f"callgrind gave no count for {' '.join(argv)}: {run.stderr[-300:]}")
    return int(found.group(1)) / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--rows", default=",".join(ROWS), help="the rows to count, by name, comma-separated")
    parser.add_argument("trees", nargs=2)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="first-run-ir-") as tmp:
        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        floor = statistics.median(count([sys.executable, "-c", "pass"], base, tmp, tmp) for _ in range(args.runs))
        print(f"python -c pass: {floor:.1f} M instructions")
        print(f"{'row':<22} {'A (M)':>9} {'B (M)':>9} {'A-pass':>9} {'B-pass':>9} {'B-A':>8}")
        names = [n.strip() for n in args.rows.split(",") if n.strip()]
        unknown = [n for n in names if n not in ROWS]
        if unknown:
            print(f"unknown rows: {', '.join(unknown)} (known: {', '.join(ROWS)})", file=sys.stderr)
            return 2
        for name in names:
            row = ROWS[name]
            got: list[float] = []
            for n, tree in enumerate(args.trees):
                cache = os.path.join(tmp, f"cache{n}")
                env = {**base, "PYTHONPATH": os.path.abspath(tree), "STACKCHECK_CACHE_DIR": cache}
                argv = [sys.executable, "-m", "stackcheck", *row]
                subprocess.run(argv, capture_output=True, env=env, cwd=tree, check=False, timeout=120)
                counts = []
                for _ in range(args.runs):
                    shutil.rmtree(os.path.join(cache, "answer"), ignore_errors=True)
                    counts.append(count(argv, env, tree, tmp))
                got.append(statistics.median(counts))
            a, b = got
            print(f"{name:<22} {a:>9.1f} {b:>9.1f} {a - floor:>9.1f} {b - floor:>9.1f} {b - a:>+8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
