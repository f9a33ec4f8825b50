"""Time and peak memory of stackcheck against what a user would otherwise run, in one run, as ratios.

Each command runs as a fresh process, several times after a warm-up; the table gives the median wall time,
the spread (min-max), the median peak RSS of that process (from getrusage of a one-child wrapper), and the
ratio against the baseline rows:

- floor: a bare Python script that imports pynvml, initialises NVML and reads the driver version and each
  GPU's compute capability (the least any audit must do);
- collect_env: `python -m torch.utils.collect_env`, what bug reports ask for today (only if torch is installed).

    python3 bench/bench_audit.py --runs 7 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from typing import Any

from floor import FLOOR  # bench/floor.py: the NVML floor and the timing wrapper every bench shares

WRAPPER = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "dt = time.perf_counter() - t\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(dt, r.ru_maxrss, p.returncode, r.ru_utime + r.ru_stime)\n"
)


def stackcheck() -> list[str]:
    exe = shutil.which("stackcheck")
    return [exe] if exe else [sys.executable, "-P", "-m", "stackcheck"]


def measure(argv: list[str], runs: int) -> dict[str, Any]:
    times, rss, cpu, codes = [], [], [], set()
    for i in range(runs + 1):
        out = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, check=True)
        dt, kb, rc, cpu_s = out.stdout.split()
        if i == 0:
            continue  # warm-up: page cache, bytecode
        times.append(float(dt))
        cpu.append(float(cpu_s))
        rss.append(int(kb) / 1024)
        codes.add(int(rc))
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "cpu_s": statistics.median(cpu),  # user + system CPU: not quantised like wall time on a VM's clock
        "rss_mb": statistics.median(rss),
        "exit_codes": sorted(codes),
        "runs": runs,
    }


def has_module(name: str) -> bool:
    code = f"import importlib.util, sys; sys.exit(0 if importlib.util.find_spec({name!r}) else 1)"
    return subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", default=None)
    ap.add_argument("--facts", default=None, help="also time the core alone on a saved facts file")
    args = ap.parse_args()

    rows: dict[str, list[str]] = {}
    if has_module("pynvml"):
        rows["floor: import pynvml, init, driver + capabilities"] = [sys.executable, "-c", FLOOR]
    rows["stackcheck probe --format json"] = [*stackcheck(), "probe", "--format", "json"]
    rows["stackcheck audit --format json"] = [*stackcheck(), "audit", "--format", "json"]
    rows["stackcheck audit --deep --format json"] = [*stackcheck(), "audit", "--deep", "--format", "json"]
    # the allow path (torch-cuda-arch needs only torch and the GPUs): probes, evaluation, exec
    rows["stackcheck gate --require torch-cuda-arch -- /bin/true"] = [
        *stackcheck(),
        "gate",
        "--require",
        "torch-cuda-arch",
        "--",
        "/bin/true",
    ]
    if args.facts:
        rows["stackcheck audit --facts FILE (core only)"] = [
            *stackcheck(),
            "audit",
            "--facts",
            args.facts,
            "--format",
            "json",
        ]
    if has_module("torch"):
        rows["python -m torch.utils.collect_env"] = [sys.executable, "-m", "torch.utils.collect_env"]

    started = time.time()
    results = {name: measure(argv, args.runs) for name, argv in rows.items()}
    floor = next((r for n, r in results.items() if n.startswith("floor")), None)
    collect = results.get("python -m torch.utils.collect_env")
    header = (
        f"{'command':<58} {'median s':>9} {'min-max s':>15} {'cpu s':>6} {'peak MB':>8} {'÷floor':>7} "
        f"{'cpu÷floor':>9} {'collect_env÷':>12}"
    )
    print(header)
    print("-" * len(header))
    for name, r in results.items():
        vs_floor = f"{r['median_s'] / floor['median_s']:.2f}x" if floor else "-"
        cpu_floor = f"{r['cpu_s'] / floor['cpu_s']:.2f}x" if floor and floor["cpu_s"] else "-"
        vs_collect = (
            f"{collect['median_s'] / r['median_s']:.1f}x / {collect['rss_mb'] / r['rss_mb']:.1f}x"
            if collect and name != "python -m torch.utils.collect_env"
            else "-"
        )
        print(
            f"{name:<58} {r['median_s']:>9.3f} {r['min_s']:>7.3f}-{r['max_s']:<7.3f} {r['cpu_s']:>6.3f} "
            f"{r['rss_mb']:>8.1f} {vs_floor:>7} {cpu_floor:>9} {vs_collect:>12}"
        )
    print(
        f"({args.runs} runs each after one warm-up; collect_env÷ is time / memory ratio; "
        f"took {time.time() - started:.0f} s)"
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
