"""What auditing another interpreter costs: `--python` with a warm cache against the same audit run inside
that environment, and a cold `--python` (no cached answer) against one start of that interpreter.

Rows (medians of --runs fresh processes after a warm-up, wall time):
- in-env:    TARGET -m stackcheck audit --format json            (stackcheck's own interpreter is the target)
- warm:      STACKCHECK -m stackcheck audit --format json --python TARGET   (the answer is in the cache)
- cold:      the same with the cache emptied before each run      (the target runs its one-liner once)
- start:     TARGET -c pass,  and TARGET -S -c ONELINER           (what one interpreter start costs)

Budgets (issue 15): warm ≤ 1.05 × in-env; cold − warm ≤ one interpreter start (TARGET -c pass).

--inprocess measures the probing alone inside one process (pipeline.gather, many times, the modules
already imported): on a shared or busy machine the wall time of whole processes varies by more than what
is measured, and the gather is where the target is chosen and learned.

Without --target, a throwaway venv is made from this interpreter whose site-packages point (a .pth path
line) at this interpreter's own, so both audits read the same packages. On the H200:

    python3 bench/bench_target.py --target /usr/bin/python3 --stackcheck /tmp/scvenv/bin/python --runs 11
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def timed(argv: list[str], env: dict[str, str], before: Any = None) -> tuple[float, int, str]:
    if before is not None:
        before()
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, cwd="/")
    return time.perf_counter() - t, p.returncode, p.stdout


def series(argv: list[str], env: dict[str, str], runs: int, before: Any = None) -> dict[str, Any]:
    times, codes, last = [], set(), ""
    for i in range(runs + 1):
        dt, rc, out = timed(argv, env, before)
        if i == 0:
            continue  # warm-up: page cache, bytecode, the interpreter answer cached
        times.append(dt)
        codes.add(rc)
        last = out
    return {
        "median_s": statistics.median(times),
        "min_s": min(times),
        "max_s": max(times),
        "exit_codes": sorted(codes),
        "runs": runs,
        "_stdout": last,
    }


def make_target(tmp: Path) -> str:
    venv = tmp / "target"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    xy = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    site = venv / "lib" / xy / "site-packages"
    (site / "same-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(venv / "bin" / "python")


def inprocess(target: str, runs: int, cache: Path) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    os.environ["XDG_CACHE_HOME"] = str(cache)
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import gather, load_manifests

    manifests = load_manifests([])

    def median_ms(opts: Options, cold: bool) -> tuple[float, float, str]:
        total, probe, learned = [], [], ""
        for i in range(runs + 2):
            if cold:
                shutil.rmtree(cache, ignore_errors=True)
            t = time.perf_counter()
            facts, outcomes, _ = gather(opts, lambda: manifests)
            if i >= 2:
                total.append((time.perf_counter() - t) * 1000)
                probe.append(next(o["duration_ms"] for o in outcomes if o["name"] == "python"))
            learned = str(facts.get("python", {}).get("learned"))
        return round(statistics.median(total), 1), round(statistics.median(probe), 1), learned

    starts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([target, "-c", "pass"], check=False)
        starts.append((time.perf_counter() - t) * 1000)
    own, warm, cold = (
        median_ms(Options(), False),
        median_ms(Options(python=target), False),
        median_ms(Options(python=target), True),
    )
    out = {
        "own_gather_ms": own,
        "warm_gather_ms": warm,
        "cold_gather_ms": cold,
        "target_c_pass_ms": round(statistics.median(starts), 1),
    }
    out["cold_budget_ok"] = cold[0] - warm[0] <= out["target_c_pass_ms"]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--target", help="the interpreter to audit (default: a throwaway venv, see above)")
    ap.add_argument("--stackcheck", default=sys.executable, help="the interpreter stackcheck runs in")
    ap.add_argument("--deep", action="store_true", help="audit with --deep")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--inprocess", action="store_true", help="time pipeline.gather inside this process")
    args = ap.parse_args()
    if args.inprocess:
        with tempfile.TemporaryDirectory(prefix="bench-target-") as tmpdir:
            target = args.target or make_target(Path(tmpdir))
            result = inprocess(target, args.runs, Path(tmpdir) / "cache")
        print("(gather ms, python probe ms, learned) medians; target -c pass ms")
        print(json.dumps(result, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
        return 0

    tmp = Path(tempfile.mkdtemp(prefix="bench-target-"))
    cache = tmp / "cache"
    try:
        target = args.target or make_target(tmp)
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON")}
        env["PYTHONPATH"] = str(REPO)
        env["XDG_CACHE_HOME"] = str(cache)
        audit = ["-m", "stackcheck", "audit", "--format", "json", *(["--deep"] if args.deep else [])]

        def empty_cache() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        rows = {
            "in-env": series([target, *audit], env, args.runs),
            "warm": series([args.stackcheck, *audit, "--python", target], env, args.runs),
            "cold": series([args.stackcheck, *audit, "--python", target], env, args.runs, before=empty_cache),
            "start: TARGET -c pass": series([target, "-c", "pass"], env, args.runs),
        }
        sys.path.insert(0, str(REPO))  # this checkout's one-liner, not an installed copy's
        from stackcheck.probes.python_env import ONELINER

        rows["start: TARGET -S -c ONELINER"] = series([target, "-S", "-c", ONELINER], env, args.runs)
        learned = {}
        for name in ("in-env", "warm", "cold"):
            doc = json.loads(rows[name].pop("_stdout") or "{}")
            py = (doc.get("facts") or {}).get("python") or {}
            learned[name] = py.get("learned")
            probe = next((p for p in doc.get("probes") or [] if p.get("name") == "python"), {})
            rows[name]["python_probe_ms"] = probe.get("duration_ms")
        for row in rows.values():
            row.pop("_stdout", None)
        base, warm, cold = rows["in-env"]["median_s"], rows["warm"]["median_s"], rows["cold"]["median_s"]
        start = rows["start: TARGET -c pass"]["median_s"]
        summary = {
            "warm_over_in_env": round(warm / base, 3),
            "warm_budget_ok": warm <= 1.05 * base,
            "cold_minus_warm_s": round(cold - warm, 4),
            "one_interpreter_start_s": round(start, 4),
            "cold_budget_ok": cold - warm <= start,
            "learned": learned,
            "target": target,
            "stackcheck": args.stackcheck,
            "machine": f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}",
        }
        print(f"{'row':<32} {'median s':>9} {'min–max s':>15}  python probe ms")
        for name, row in rows.items():
            spread = f"{row['min_s']:.3f}–{row['max_s']:.3f}"
            print(f"{name:<32} {row['median_s']:>9.3f} {spread:>15}  {row.get('python_probe_ms', '')}")
        print(json.dumps(summary, indent=1))
        if args.json:
            Path(args.json).write_text(json.dumps({"rows": rows, "summary": summary}, indent=1) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
