"""The kernel symbol probe's cost (stackcheck/readers/kernelsymbols.py), and the audit with and without it.

    python3 bench/bench_kernel_symbols.py --python /path/to/venv/bin/python [--runs 21] [--libcuda PATH]
    python3 bench/bench_kernel_symbols.py --site DIR [--runs 21]    # a site-packages directory, no audit
    python3 bench/bench_kernel_symbols.py --site DIR --kept          # also: served from the kept answers


The venv's site-packages must hold sgl_kernel and torch (a real install, or their wheels' libraries unpacked
there). It prints (1) the kernel_symbols section, (2) the probe function's median wall and CPU time
in-process (its files already in the page cache: what an audit after the first costs), and (3) the audit's
median wall and CPU time in-process with the default probes and without kernel_symbols, alternated run by
run. Nothing is written anywhere. It also prints the share of other packages' compiled extensions
(readers/kernelsymbols.py EXTENSIONS: torchao, DeepEP, LMCache, ...): the probe's median with them and with none
looked for, alternated run by run. With --site DIR, DIR holds torch/, sgl_kernel/ and any extensions (the wheels'
libraries unpacked or linked there); only the probe is timed. With --kept, a row more: the probe served from its
kept answers (readers/kernelsymbols.py _KeptAnswers, a document in a temporary directory removed after) against the
probe reading the files, alternated run by run, after checking that the served section is the read one (less ms).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _site_facts(python: str) -> dict[str, object]:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import gather

    facts, _, _ = gather(Options(python=python))
    return dict(facts)


def _extension_share(packages: dict[str, object], libcuda: str | None, runs: int) -> None:
    """The probe's median wall time with EXTENSIONS and with none, alternated run by run."""
    from stackcheck.readers import kernelsymbols
    from stackcheck.readers.fsview import HostView

    full = kernelsymbols.EXTENSIONS
    times: dict[str, list[float]] = {"with": [], "without": []}
    for i in range(2 * runs):
        label = "with" if i % 2 == 0 else "without"
        kernelsymbols.EXTENSIONS = full if label == "with" else {}
        t0 = time.perf_counter()
        kernelsymbols.probe_kernel_symbols(packages, HostView("/"), libcuda)
        times[label].append((time.perf_counter() - t0) * 1000)
    kernelsymbols.EXTENSIONS = full
    for label, w in times.items():
        print(f"probe {label} extensions: median wall {statistics.median(w):.2f} ms ({runs} runs)")


def _kept_share(packages: dict[str, object], libcuda: str | None, runs: int) -> None:
    """The probe's median wall time served from kept answers and read from the files, alternated run by run."""
    import os
    import tempfile

    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import probe_kernel_symbols

    os.environ["STACKCHECK_PLAN_CACHE"] = "1"  # (the caches' switch: on for this row)
    with tempfile.TemporaryDirectory(prefix="bench-kept-") as cache:
        first = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
        served = probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache)
        assert first is not None and served is not None
        if not os.path.exists(os.path.join(cache, "deep", "kernel_symbols.json")):
            print("kept: nothing kept (a file changed in the last 2 s, or an error entry): row not timed")
            return
        same = {k: v for k, v in first.items() if k != "ms"} == {k: v for k, v in served.items() if k != "ms"}
        print(f"kept: served section identical to the read one (less ms): {same}")
        times: dict[str, list[float]] = {"kept": [], "read": []}
        for i in range(2 * runs):
            label = "kept" if i % 2 == 0 else "read"
            t0 = time.perf_counter()
            probe_kernel_symbols(packages, HostView("/"), libcuda, cache_dir=cache if label == "kept" else "")
            times[label].append((time.perf_counter() - t0) * 1000)
    for label, w in times.items():
        print(f"probe {label}: median wall {statistics.median(w):.2f} ms ({runs} runs)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python")
    ap.add_argument("--site", help="a site-packages directory holding torch/ and sgl_kernel/ (no audit timed)")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--libcuda", default=None)
    ap.add_argument("--kept", action="store_true", help="also time the probe served from its kept answers")
    args = ap.parse_args()
    if bool(args.python) == bool(args.site):
        ap.error("give one of --python and --site")

    from stackcheck import probes
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import gather
    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import probe_kernel_symbols

    if args.site:
        site = str(Path(args.site).resolve())
        packages: object = {n: {"installed": True, "location": site} for n in ("sgl-kernel", "torch")}
    else:
        packages = _site_facts(args.python)["packages"]
    assert isinstance(packages, dict)
    section = probe_kernel_symbols(packages, HostView("/"), args.libcuda)
    print(json.dumps(section, indent=1))
    _extension_share(packages, args.libcuda, args.runs)
    if args.kept:
        _kept_share(packages, args.libcuda, args.runs)
    if args.site:
        return
    wall, cpu = [], []
    for _ in range(args.runs):
        t0, c0 = time.perf_counter(), time.process_time()
        probe_kernel_symbols(packages, HostView("/"), args.libcuda)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    print(
        f"probe: median wall {statistics.median(wall):.2f} ms, CPU {statistics.median(cpu):.2f} ms ({args.runs} runs)"
    )

    full = probes.DEFAULT_PROBES
    less = tuple(n for n in full if n != "kernel_symbols")
    times: dict[str, tuple[list[float], list[float]]] = {"with": ([], []), "without": ([], [])}
    for i in range(2 * args.runs):
        label, names = ("with", full) if i % 2 == 0 else ("without", less)
        probes.DEFAULT_PROBES = names
        t0, c0 = time.perf_counter(), time.process_time()
        with contextlib.redirect_stderr(io.StringIO()):
            gather(Options(python=args.python))
        times[label][0].append((time.perf_counter() - t0) * 1000)
        times[label][1].append((time.process_time() - c0) * 1000)
    probes.DEFAULT_PROBES = full
    for label, (w, c) in times.items():
        med_w, med_c = statistics.median(w), statistics.median(c)
        print(f"probes (gather) {label} kernel_symbols: median wall {med_w:.1f} ms, CPU {med_c:.1f} ms")


if __name__ == "__main__":
    main()
