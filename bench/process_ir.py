"""The whole process's instructions (callgrind) of the probed rows, tree A against tree B: audit, gate (a hit of
the kept decision and a first run), audit --deep, and the gate of a venv holding a stand-in SGLang
(bench/fake_sglang_env.py). Issue 21's H200 goals are on the process's total work under the interpreter lock, which a
shared 2-core machine's CPU ms do not show to a few percent; a callgrind count does not move with its load.

    python bench/process_ir.py [--runs 1] [--rows "audit,gate,audit --deep"] TREE_A TREE_B

Every row runs once per tree to warm its caches (the plan, the gate's kept decision, what --deep kept), as the H200
rows read them after their warm-up (bench/h200_perf.py); a `(first run)` row then removes its kept decisions (gate/)
and kept --deep answers (deep/) before it is counted. The count is the sum over every process callgrind followed
(the command and a forked NVML reader, which on a box without a driver answers at once), with the main process's
own share beside. The warm-up runs under callgrind too: it sets LD_LIBRARY_PATH, which the audit reads into its
facts, so a plan kept by a run outside callgrind would not be this run's (a miss: the planner's ~200 M).
Prints millions of instructions per row and tree, those over `python -c pass`, and B less A.
Needs valgrind. Standard library only."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
SGLANG_TP8 = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "8"]
ROWS: dict[str, list[str]] = {
    "audit": ["audit", "--format", "json"],
    "gate": ["gate", "--dry-run", "--", *SGLANG],
    "gate (first run)": ["gate", "--dry-run", "--", *SGLANG],
    "gate tp8 (first run)": ["gate", "--dry-run", "--", *SGLANG_TP8],
    "audit --deep": ["audit", "--deep", "--format", "json"],
    "audit --deep (first run)": ["audit", "--deep", "--format", "json"],
    "gate --python (fake SGLang)": ["gate", "--dry-run", "--python", "{fake}", "--", *SGLANG],
    "gate --python (fake SGLang) (first run)": ["gate", "--dry-run", "--python", "{fake}", "--", *SGLANG],
    "audit --python (fake SGLang)": ["audit", "--format", "json", "--python", "{fake}"],
}
COLLECTED = re.compile(r"==(\d+)== Collected : (\d+)")
FIRST_PID = re.compile(r"==(\d+)==")


def count(argv: list[str], env: dict[str, str], cwd: str, out_dir: str) -> tuple[float, float]:
    """(millions of instructions of every process, of the first one) of one command."""
    run = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_dir}/cg.%p", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
        timeout=600,
    )
    found = COLLECTED.findall(run.stderr)
    if not found:
        raise SystemExit(f"callgrind gave no count for {' '.join(argv)}: {run.stderr[-300:]}")
    head = FIRST_PID.search(run.stderr)  # (the command's lines come first: its pid, as pids may wrap)
    first = int(head.group(1)) if head is not None else int(found[0][0])
    total = sum(int(n) for _, n in found)
    main_count = sum(int(n) for pid, n in found if int(pid) == first)
    return total / 1e6, main_count / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--rows", default="audit,gate,audit --deep", help=f"comma-separated, of: {', '.join(ROWS)}")
    parser.add_argument("trees", nargs=2)
    args = parser.parse_args()
    names = [n.strip() for n in args.rows.split(",") if n.strip()]
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        print(f"unknown rows: {', '.join(unknown)} (known: {', '.join(ROWS)})", file=sys.stderr)
        return 2
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="process-ir-") as tmp:
        fake = ""
        if any("{fake}" in ROWS[n] for n in names):
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from fake_sglang_env import build  # bench/fake_sglang_env.py, beside this script

            fake = build(os.path.join(tmp, "venv"))
        base = dict(os.environ)
        base.pop("PYTHONDONTWRITEBYTECODE", None)
        floor = statistics.median(count([sys.executable, "-c", "pass"], base, tmp, tmp)[0] for _ in range(args.runs))
        print(f"python -c pass: {floor:.1f} M instructions")
        heads = ("A (M)", "B (M)", "A main", "B main", "A-pass", "B-pass")
        print(f"{'row':<40} " + " ".join(f"{h:>8}" for h in heads) + f" {'B-A':>7}")
        trees = [os.path.abspath(t) for t in args.trees]
        for name in names:
            row = [fake if word == "{fake}" else word for word in ROWS[name]]
            got: list[tuple[float, float]] = []
            for n, tree in enumerate(trees):
                cache = os.path.join(tmp, f"cache-{n}-{len(got)}-{abs(hash(name))}")
                env = {**base, "PYTHONPATH": tree, "STACKCHECK_CACHE_DIR": cache}
                argv = [sys.executable, "-m", "stackcheck", *row]
                # warm: the bytecode, then under callgrind (which sets LD_LIBRARY_PATH, a fact of the audit, so a
                # plan kept by a run outside it is another box's: a miss) the plan, the decision, --deep's answers
                subprocess.run(argv, capture_output=True, env=env, cwd=tree, check=False, timeout=120)
                count(argv, env, tree, tmp)
                counts = []
                for _ in range(args.runs):
                    if name.endswith("(first run)"):
                        shutil.rmtree(os.path.join(cache, "gate"), ignore_errors=True)
                        shutil.rmtree(os.path.join(cache, "deep"), ignore_errors=True)
                    counts.append(count(argv, env, tree, tmp))
                got.append((statistics.median(c[0] for c in counts), statistics.median(c[1] for c in counts)))
            (a, am), (b, bm) = got
            cells = (a, b, am, bm, a - floor, b - floor)
            print(f"{name:<40} " + " ".join(f"{c:>8.1f}" for c in cells) + f" {b - a:>+7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
