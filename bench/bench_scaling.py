"""How cost grows: audit time against the number of GPUs (1, 8, 72, simulated through the tests' fake NVML),
triage time against log size, and fleet time against the number of reports (read from bench_fleet.py's
table, given as N=SECONDS pairs). Prints one table and, if matplotlib is importable, draws docs/scaling.png.

    python bench/bench_scaling.py [--fleet 1000=0.15 10000=1.1 100000=8.0] [--png docs/scaling.png]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the fake NVML lives with the tests, never in the product


def audit_vs_gpus(counts: list[int], runs: int) -> list[tuple[int, float]]:
    from fake_nvml import FakeNVML, synthetic_doc  # type: ignore[import-not-found]

    from stackcheck.context import Context
    from stackcheck.manifest_loader import load
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.runner import run_probes
    from stackcheck.verdicts import evaluate_all

    manifests = load([], env={})
    out = []
    for n in counts:
        doc = synthetic_doc(n, nvswitch=False, name="NVIDIA RTX PRO 6000 Blackwell Server Edition", cc="12.0")
        times = []
        for _ in range(runs + 1):
            t = time.perf_counter()
            facts, _ = run_probes(["nvml", "packages", "system"], ProbeContext(nvml=FakeNVML(doc)), budget_s=60)
            evaluate_all(Context(facts=facts, manifests=manifests))
            times.append(time.perf_counter() - t)
        out.append((n, statistics.median(times[1:])))
    return out


def triage_vs_size(sizes_mb: list[int]) -> list[tuple[int, float]]:
    sys.path.insert(0, str(ROOT / "bench"))
    from gen_log import generate  # type: ignore[import-not-found]

    from stackcheck.triage import triage_file

    out = []
    with tempfile.TemporaryDirectory() as tmp:
        for mb in sizes_mb:
            path = Path(tmp) / f"{mb}.log"
            generate(path, mb)
            t = time.perf_counter()
            triage_file(str(path))
            out.append((mb, time.perf_counter() - t))
            path.unlink()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fleet", nargs="*", default=[], help="N=SECONDS pairs from bench_fleet.py's table")
    ap.add_argument("--png", default=str(ROOT / "docs" / "scaling.png"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--log-sizes", type=int, nargs="+", default=[16, 64, 256])
    args = ap.parse_args()

    gpus = audit_vs_gpus([1, 8, 72], args.runs)
    logs = triage_vs_size(args.log_sizes)
    fleet: list[tuple[int, float]] = []
    for pair in args.fleet:
        n, _, secs = pair.partition("=")
        fleet.append((int(n), float(secs)))
    print(f"{'series':<34} {'x':>10} {'seconds':>9}")
    for n, s in gpus:
        print(f"{'audit (fake NVML) vs GPUs':<34} {n:>10} {s:>9.4f}")
    for mb, s in logs:
        print(f"{'triage vs log MB':<34} {mb:>10} {s:>9.3f}  ({mb / s:.0f} MB/s)")
    for n, s in fleet:
        print(f"{'fleet vs reports':<34} {n:>10} {s:>9.2f}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not importable: no plot drawn)")
        return 0
    panels = [("audit vs GPUs (fake NVML)", "GPUs", gpus), ("triage vs log size", "MB", logs)]
    if fleet:
        panels.append(("fleet vs reports", "reports", fleet))
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.2))
    for ax, (title, xlabel, series) in zip(axes, panels, strict=True):
        xs, ys = [x for x, _ in series], [y for _, y in series]
        ax.plot(xs, ys, marker="o")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("seconds")
        ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)
    print(f"plot: {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
