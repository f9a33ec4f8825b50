"""Where the --deep probes spend their CPU on this box: the binary probe (facts.binaries) and the library
probe (facts.libs) run under cProfile on the packages this box has, each `--runs` times after one warm-up
(the page cache), with the top functions by own time.

    PYTHONPATH=$PWD python3 bench/profile_deep.py [--runs 5] [--top 25]

The packages' facts come from `stackcheck probe --format json` run in this process first (this box, the
interpreter stackcheck picks). It prints, per probe: CPU ms per run (median), files scanned and bytes read per
package, and the cProfile table of the last run. Standard library only; nothing touches the network."""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def probed_facts() -> dict[str, object]:
    from stackcheck.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["probe", "--format", "json"])
    doc = json.loads(out.getvalue())
    return dict(doc.get("facts", doc))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    sys.path.insert(0, ROOT)
    from stackcheck.readers.binaries import probe_binaries
    from stackcheck.readers.libs import probe_libs

    facts = probed_facts()
    print(f"python {sys.version.split()[0]}; packages: {', '.join(sorted(facts.get('packages') or {}))}")
    env = {"LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH", "")}
    probes = {"binaries": lambda: probe_binaries(facts), "libs": lambda: probe_libs(facts, env)}
    for name, run in probes.items():
        run()  # warm-up: the page cache
        cpu: list[float] = []
        prof = cProfile.Profile()
        result: dict[str, object] = {}
        for i in range(args.runs):
            last = i == args.runs - 1
            t = time.thread_time()
            if last:
                prof.enable()
            result = run()
            if last:
                prof.disable()
            else:
                cpu.append((time.thread_time() - t) * 1e3)
        print(f"\n== {name}: {statistics.median(cpu) if cpu else float('nan'):.1f} ms CPU per run (median)")
        if name == "binaries":
            for pkg, section in sorted(result.items()):
                if isinstance(section, dict):
                    print(
                        f"  {pkg}: files_scanned {section.get('files_scanned')}, with GPU code "
                        f"{len(section.get('files') or [])}, bytes_read {section.get('bytes_read')}, "
                        f"{section.get('truncated') or section.get('skipped') or ''}"
                    )
        text = io.StringIO()
        pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(args.top)
        print("\n".join(line for line in text.getvalue().splitlines() if line.strip())[:6000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
