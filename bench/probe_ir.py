"""One probe's own instructions (callgrind), tree A against tree B: what a probe's run costs under the interpreter lock,
without the other threads of an audit (whose scheduling under callgrind moves a whole process's count by several
million from run to run: bench/process_ir.py's rows).

    python bench/probe_ir.py [--probe jit] [--runs 3] TREE_A [TREE_B]

For each tree: a probed `audit --format json` of this box gives the facts the probe reads (its needs, as the runner
hands them over); then a child imports the modules the first waves' probes import in an audit (python_env, packages,
toolkits, system, cudalibs, the ELF reader, readers.kept) and the probe's module, and runs the probe N times with a
ProbeContext of this environment, those facts and a cache directory of the tree's own. One run outside callgrind warms
the cache (what a probe keeps between runs, as an audit after the first finds it); then the child is counted with N=0
and N=1 (medians of --runs): the difference is one steady-state run of the probe. The environment is this one's (set
CUDA_HOME, STACKCHECK_PYTHON, PATH to make the box you want to measure). Needs valgrind; standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

CHILD = r"""
import json, os, sys
tree, probe, facts_path, cache, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
sys.path.insert(0, tree)
with open(facts_path, encoding="utf-8") as fh:
    facts = json.load(fh)["facts"]
import stackcheck.readers.elf, stackcheck.readers.kept  # noqa: E401 (what the first waves import in an audit)
import stackcheck.probes.python_env, stackcheck.probes.packages, stackcheck.probes.toolkits  # noqa: E401
import stackcheck.probes.system, stackcheck.probes.cudalibs  # noqa: E401
from stackcheck.probes import lazy_registry
from stackcheck.probes.interface import ProbeContext
cls = lazy_registry()[probe].load()
ctx = ProbeContext(env=dict(os.environ), cache_dir=cache).replace(facts=facts)
for _ in range(n):
    cls().run(ctx)
"""


def count(argv: list[str], env: dict[str, str], tmp: str) -> float:
    out = os.path.join(tmp, "callgrind.out")
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    got = re.search(r"Collected : (\d+)", done.stderr)
    if got is None:
        raise SystemExit(f"callgrind gave no count: {done.stderr[-400:]}")
    return int(got.group(1)) / 1e6


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", metavar="TREE")
    ap.add_argument("--probe", default="jit")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["STACKCHECK_PLAN_CACHE"] = "1"
    rows = []
    with tempfile.TemporaryDirectory(prefix="probe-ir-") as tmp:
        for i, tree in enumerate(os.path.abspath(t) for t in args.trees):
            facts = os.path.join(tmp, f"facts-{i}.json")
            cache = os.path.join(tmp, f"cache-{i}")
            run_env = {**env, "PYTHONPATH": tree, "STACKCHECK_CACHE_DIR": os.path.join(tmp, f"audit-cache-{i}")}
            with open(facts, "w", encoding="utf-8") as fh:
                subprocess.run(
                    [sys.executable, "-m", "stackcheck", "audit", "--format", "json"],
                    env=run_env,
                    cwd=tree,
                    stdout=fh,
                    stderr=subprocess.DEVNULL,
                    check=False,
                    timeout=120,
                )
            base = [sys.executable, "-c", CHILD, tree, args.probe, facts, cache]
            subprocess.run([*base, "1"], env=env, capture_output=True, check=True, timeout=120)  # warm
            zero = statistics.median(count([*base, "0"], env, tmp) for _ in range(args.runs))
            one = statistics.median(count([*base, "1"], env, tmp) for _ in range(args.runs))
            rows.append((tree, zero, one))
    print(f"probe {args.probe}: millions of instructions, medians of {args.runs}")
    print(f"{'tree':<6}{'N=0':>10}{'N=1':>10}{'one run':>10}")
    for i, (tree, zero, one) in enumerate(rows):
        print(f"{'AB'[i] if i < 2 else i:<6}{zero:>10.1f}{one:>10.1f}{one - zero:>10.1f}  {tree}")
    if len(rows) > 1:
        print(f"B - A, one run: {(rows[1][2] - rows[1][1]) - (rows[0][2] - rows[0][1]):+.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
