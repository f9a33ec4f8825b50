"""The probes of issue 16 (jit, cuda_libs, pcie) on a real box: what they read, what they cost, and what the
audit's new stack checks say there. Run from a checkout, with the Python that has nvidia-ml-py:

    python3 bench/bench_issue16_probes.py [--runs 21]

It prints (1) the `jit`, `cuda_libs` and `pcie` facts and each probe's outcome from `stackcheck probe`, (2) the
median time of each new probe function in-process, (3) the audit's median wall and CPU time in-process with
the new probes and without them (the default probes less jit, cuda_libs and pcie), alternated
run by run, and (4) the statuses of the new stack checks. Nothing is written anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEW_CHECKS = (
    "jit-toolchain", "triton-ptxas", "deepgemm-arch", "kernel-runtime-libs", "kernel-release-known",
    "sgl-kernel-torch-pair-old", "nccl", "pcie-p2p-path", "driver-api", "cudnn-torch", "torch-cuda-build",
    "gpu-peer-access",
)  # fmt: skip


def probe_facts() -> dict[str, object]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-P", "-m", "stackcheck", "probe", "--format", "json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    doc: dict[str, object] = json.loads(out.stdout)
    return doc


def time_probe_functions(runs: int) -> dict[str, float]:
    from stackcheck.probes.cudalibs import probe_cuda_libs
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.jit import probe_jit
    from stackcheck.probes.pcie import probe_pcie
    from stackcheck.probes.toolkits import ToolkitsProbe
    from stackcheck.readers.fsview import HostView

    env = dict(os.environ)
    view = HostView("/")
    toolkits = ToolkitsProbe().run(ProbeContext()).facts
    fns = {
        "cuda_libs": lambda: probe_cuda_libs(env, view),
        "pcie": lambda: probe_pcie(view),
        "jit": lambda: probe_jit(toolkits, env, view),
    }
    out = {}
    for name, fn in fns.items():
        xs = []
        for _ in range(runs):
            t = time.perf_counter()
            fn()
            xs.append(time.perf_counter() - t)
        out[name] = statistics.median(xs) * 1000
    return out


def time_audits(runs: int) -> dict[str, tuple[float, float]]:
    import stackcheck.probes as probes
    from stackcheck.cli import main

    full = tuple(probes.DEFAULT_PROBES)
    before = tuple(n for n in full if n not in ("jit", "cuda_libs", "pcie"))
    results: dict[str, list[tuple[float, float]]] = {"with the new probes": [], "without jit, cuda_libs, pcie": []}
    for i in range(runs + 1):
        for label, times in results.items():
            probes.DEFAULT_PROBES = full if label == "with the new probes" else before  # read by pipeline.gather
            t, c = time.perf_counter(), time.process_time()
            with contextlib.redirect_stdout(io.StringIO()):
                main(["audit", "--format", "json"])
            if i:
                times.append((time.perf_counter() - t, time.process_time() - c))
    probes.DEFAULT_PROBES = full
    return {k: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for k, v in results.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))

    doc = probe_facts()
    facts = doc.get("facts") or {}
    assert isinstance(facts, dict)
    print("== facts of the new probes (stackcheck probe)")
    for section in ("jit", "cuda_libs", "pcie"):
        print(f"{section}: {json.dumps(facts.get(section), sort_keys=True)}")
    for p in doc.get("probes") or []:  # type: ignore[union-attr]
        print(f"probe {p.get('name')}: {p.get('status')} {p.get('duration_ms')} ms {p.get('reason') or ''}")

    print("\n== each new probe, in-process (median ms)")
    for name, ms in time_probe_functions(args.runs).items():
        print(f"{name}: {ms:.3f} ms")

    print(f"\n== audit in-process, {args.runs} runs each, alternated (median wall s / CPU s)")
    for label, (wall, cpu) in time_audits(args.runs).items():
        print(f"{label}: {wall:.4f} / {cpu:.4f}")

    print("\n== the new stack checks on this box")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run(
        [sys.executable, "-P", "-m", "stackcheck", "audit", "--format", "json"],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    report = json.loads(out.stdout)
    for c in report.get("checks") or []:
        if c.get("id") in NEW_CHECKS:
            first = next((r for r in c.get("reasons") or [] if r.get("result") != "pass"), None)
            print(f"{c['id']}: {c['status']}" + (f" ({first.get('message')})" if first else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
