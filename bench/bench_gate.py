"""The gate's added latency before exec: process start to exec of /bin/true.

Rows (median and p90 of N runs, wall time of the whole process tree, measured from the parent):
  /bin/true alone;
  python -c pass (the interpreter's own start-up);
  python importing pynvml and initialising NVML (what any GPU check costs at least), if pynvml imports;
  stackcheck gate --facts F -- /bin/true (no SGLang flag: nothing to evaluate);
  stackcheck gate --facts F -- /bin/true --tp 8 --attention-backend flashinfer (an SGLang command line:
  derive, load the manifests and facts, evaluate, decide, exec);
  the same with a refusal (SM120 facts, --enable-torch-symm-mem: evaluation plus the plan).

    python bench/bench_gate.py [-n 30] [--facts tests/cases/h200-newest/facts.json]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NVML = "import pynvml; pynvml.nvmlInit(); pynvml.nvmlDeviceGetCount(); pynvml.nvmlShutdown()"


def timed(cmd: list[str], n: int, ok: set[int]) -> tuple[float, float] | str:
    times = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")}
    for _ in range(n):
        start = time.perf_counter()
        r = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, env=env)
        times.append((time.perf_counter() - start) * 1000)
        if r.returncode not in ok:
            return f"exit {r.returncode}"
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.9))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--facts", default=str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json"))
    args = ap.parse_args()
    true = shutil.which("true") or "/bin/true"
    py = sys.executable
    # -P: never the source tree in the working directory (it has no manifests), always the installed package
    gate = [py, "-P", "-m", "stackcheck", "gate", "--facts", args.facts, "--"]
    sm120 = str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")
    rows: list[tuple[str, list[str], set[int]]] = [
        ("/bin/true", [true], {0}),
        ("python -c pass", [py, "-c", "pass"], {0}),
        ("python: import pynvml, nvmlInit", [py, "-c", NVML], {0}),
        ("gate -- /bin/true", [*gate, true], {0}),
        (
            "gate -- /bin/true --tp 8 --attention-backend flashinfer",
            [*gate, true, "--tp", "8", "--attention-backend", "flashinfer"],
            {0},
        ),
        (
            "gate refusal (SM120, --enable-torch-symm-mem)",
            [
                py,
                "-P",
                "-m",
                "stackcheck",
                "gate",
                "--facts",
                sm120,
                "--",
                true,
                "--tp",
                "8",
                "--enable-torch-symm-mem",
            ],
            {1},
        ),
    ]
    print(f"{'command':58} {'median ms':>10} {'p90 ms':>8}   (n={args.n}, python {sys.version.split()[0]})")
    base = None
    for name, cmd, ok in rows:
        res = timed(cmd, args.n, ok)
        if isinstance(res, str):
            print(f"{name:58} {'n/a':>10} {'':>8}   {res}")
            continue
        med, p90 = res
        base = med if base is None else base
        print(f"{name:58} {med:10.1f} {p90:8.1f}   (+{med - base:.1f} over /bin/true)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
