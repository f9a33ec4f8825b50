"""How cost grows: audit time against the number of GPUs (1, 8, 72, simulated through the tests' fake NVML),
triage time against log size, and fleet time against the number of reports (read from bench_fleet.py's
table, given as N=SECONDS pairs). Prints one table and, if matplotlib is importable, draws docs/scaling.png.

    python bench/bench_scaling.py [--fleet 1000=0.15 10000=1.1 100000=8.0] [--png docs/scaling.png]
    python bench/bench_scaling.py --planner-only [--planner-png docs/plan-scaling.png]

The planner's cost against the number of releases in the manifests (issue 21): today's manifests, and
synthetic ones with x4 and x16 the releases of SGLang, torch, the kernel packages and FlashInfer (two more
years of releases, and more): each release copied with its major version moved up by 1000 per copy, its pins
and the gate tables of its package moved with it, so the copies form consistent stacks of their own. The
plan (default target, and a --want no release satisfies) of the write-up box before and after its upgrade,
in process, CPU time, median of --runs; the number of candidate stacks and of feature evaluations beside.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the fake NVML lives with the tests, never in the product


def audit_vs_gpus(counts: list[int], runs: int) -> list[tuple[int, float]]:
    from fake_nvml import FakeNVML, synthetic_doc  # type: ignore[import-not-found]

    from stackcheck.knowledge.loader import load
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.runner import run_probes
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

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

    from stackcheck.launch.triage import triage_file

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


_VERSION = re.compile(r"(?<![\w.+])(\d+)((?:\.\d+)*)")


def _shift(text: str, j: int) -> str:
    """Every version in a version or a specifier set with its major moved up by 1000*j (0.5.9 -> 1000.5.9)."""
    return _VERSION.sub(lambda m: f"{int(m.group(1)) + 1000 * j}{m.group(2)}", text)


def synthetic_manifests(factor: int) -> Any:
    """The shipped manifests with `factor` times the releases of the stack's packages (see the docstring)."""
    import copy

    from stackcheck.knowledge.loader import Manifests, load

    base = load([], env={})
    docs = copy.deepcopy(base.docs)
    stack = ("sglang", "torch", "sgl-kernel", "sglang-kernel", "flashinfer-python")
    pkgs = docs["components.json"]["packages"]
    for name in stack:
        originals = list(pkgs[name].get("releases") or [])
        for j in range(1, factor):
            for rel in originals:
                new = copy.deepcopy(rel)
                new["version"] = _shift(str(rel["version"]), j)
                req = new.get("requires")
                if isinstance(req, dict):
                    new["requires"] = {k: _shift(str(v), j) if k in stack else v for k, v in req.items()}
                pkgs[name]["releases"].append(new)
    for gate in docs["gates.json"]["gates"]:
        if gate.get("package") in stack:
            originals = list(gate.get("releases") or [])
            for j in range(1, factor):
                for rel in originals:
                    new = copy.deepcopy(rel)
                    new["versions"] = _shift(str(rel.get("versions", "")), j)
                    gate["releases"].append(new)
    return Manifests(docs=docs, origins=dict(base.origins))


def planner_vs_releases(factors: list[int], runs: int) -> list[dict[str, Any]]:
    from stackcheck.facts.model import load_facts_file
    from stackcheck.plan import hypothetical
    from stackcheck.plan.planner import plan_and_facts
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_all

    engines: list[Any] = []
    real_init = hypothetical.Engine.__init__

    def init(self: Any, *a: Any, **k: Any) -> None:
        real_init(self, *a, **k)
        engines.append(self)

    hypothetical.Engine.__init__ = init  # type: ignore[method-assign]
    out = []
    for factor in factors:
        m = synthetic_manifests(factor)
        n_releases = sum(
            len(m.releases(n)) for n in ("sglang", "torch", "sgl-kernel", "sglang-kernel", "flashinfer-python")
        )
        for case in ("writeup-before", "writeup-after"):
            facts = load_facts_file(str(ROOT / "tests" / "cases" / case / "facts.json"))
            for label, want in (("default", None), ("want torch-symm-mem", ["torch-symm-mem"])):
                times = []
                for _ in range(runs + 1):
                    ctx = Context(facts=facts, manifests=m)
                    features, _ = evaluate_all(ctx)
                    engines.clear()
                    t = time.process_time()
                    plan, _ = plan_and_facts(ctx, list(features), want=want)
                    times.append(time.process_time() - t)
                from stackcheck.plan.solver import Restrict, Space, enumerate_stacks, read_box

                stacks = sum(1 for _ in enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()))
                cpu_ms, first_ms = round(statistics.median(times[1:]) * 1e3, 2), round(times[0] * 1e3, 2)
                out.append({"factor": factor, "releases": n_releases, "case": case, "plan": label, "cpu_ms": cpu_ms,
                            "first_ms": first_ms, "stacks": stacks, "error": plan.error,
                            "evaluations": engines[0].evaluations if engines else None})  # fmt: skip
    hypothetical.Engine.__init__ = real_init  # type: ignore[method-assign]
    return out


def draw_planner(rows: list[dict[str, Any]], png: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not importable: no plot drawn)")
        return
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    series = sorted({(r["case"], r["plan"]) for r in rows})
    for case, label in series:
        pts = [r for r in rows if r["case"] == case and r["plan"] == label]
        xs = [r["releases"] for r in pts]
        axes[0].plot(xs, [r["cpu_ms"] for r in pts], marker="o", label=f"{case}, {label}")
        axes[1].plot(xs, [r["evaluations"] for r in pts], marker="o", label=f"{case}, {label}")
    first = [r for r in rows if r["factor"] == rows[0]["factor"]]
    x0 = first[0]["releases"]
    for ax, key in ((axes[0], "cpu_ms"), (axes[1], "evaluations")):
        y0 = max(r[key] for r in first)
        xs = sorted({r["releases"] for r in rows})
        ax.plot(xs, [y0 * x / x0 for x in xs], linestyle=":", color="grey", label="linear from x1")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("releases in the manifests (x1, x4, x16)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("plan CPU ms (median)")
    axes[1].set_ylabel("feature evaluations")
    axes[0].legend(fontsize=7)
    fig.suptitle("planner cost against the number of releases (bench/bench_scaling.py --planner-only)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    print(f"plot: {png}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fleet", nargs="*", default=[], help="N=SECONDS pairs from bench_fleet.py's table")
    ap.add_argument("--png", default=str(ROOT / "docs" / "scaling.png"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--log-sizes", type=int, nargs="+", default=[16, 64, 256])
    ap.add_argument("--planner-only", action="store_true", help="only the planner against the releases")
    ap.add_argument("--planner-png", default=str(ROOT / "docs" / "plan-scaling.png"))
    ap.add_argument("--factors", type=int, nargs="+", default=[1, 4, 16])
    args = ap.parse_args()

    planner = planner_vs_releases(args.factors, args.runs)
    print(f"{'releases':>8} {'case':<15} {'plan':<20} {'CPU ms':>8} {'first':>8} {'stacks':>7} {'evals':>6}")
    for r in planner:
        print(f"{r['releases']:>8} {r['case']:<15} {r['plan']:<20} {r['cpu_ms']:>8.1f} {r['first_ms']:>8.1f} "
              f"{r['stacks']:>7} {r['evaluations']!s:>6}")  # fmt: skip
    draw_planner(planner, args.planner_png)
    if args.planner_only:
        return 0

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
