"""Each probe of an audit run alone, in the main thread, on the facts of one full run first: its wall time (min and
median of --runs) and, for the probes named in --profile, a cProfile of one run (cumulative and own-time tops). It
tells which probe's own work is long, apart from the waves and the interpreter lock of a real run (bench/main_thread.py
gives those).

    python bench/probe_profile.py [--runs 7] [--profile jit,environments]

Run from the tree to measure (it is put first on sys.path). Standard library only."""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.getcwd())

from stackcheck.probes import DEFAULT_PROBES, ProbeContext, lazy_registry
from stackcheck.probes.runner import run_probes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="jit,environments", help="comma-separated probe names to profile")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    ctx = ProbeContext()
    t0 = time.perf_counter()
    facts, outcomes = run_probes(list(DEFAULT_PROBES), ctx)
    print(f"full run {1000 * (time.perf_counter() - t0):.1f} ms")
    for outcome in outcomes:
        print(f"  {outcome['name']:18s} {outcome['status']:8s} {outcome['duration_ms']:7.1f} ms")
    registry = lazy_registry()
    probes = {name: registry[name].load()() for name in DEFAULT_PROBES}
    for name, probe in probes.items():
        times = []
        for _ in range(args.runs):
            run_ctx = ctx.replace(facts=dict(facts), deadline=time.monotonic() + 30)
            t0 = time.perf_counter()
            try:
                probe.run(run_ctx)
            except Exception as exc:  # (a probe that raises alone is reported, the others still measured)
                print(f"{name}: raised {type(exc).__name__}: {exc}")
                break
            times.append(1000 * (time.perf_counter() - t0))
        if times:
            times.sort()
            print(f"{name:18s} min {times[0]:7.1f} med {times[len(times) // 2]:7.1f} ms")
    for name in filter(None, args.profile.split(",")):
        profiler = cProfile.Profile()
        run_ctx = ctx.replace(facts=dict(facts), deadline=time.monotonic() + 30)
        profiler.enable()
        probes[name].run(run_ctx)
        profiler.disable()
        for order, count in (("cumulative", 30), ("tottime", 20)):
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats(order).print_stats(count)
            print(f"== {name} by {order}\n{out.getvalue()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
