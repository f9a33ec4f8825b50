"""Issue 21 on a GPU box, in one run: stackcheck against the bare-NVML floor, side by side, as ratios.

    PYTHONPATH=$PWD python3 bench/h200_perf.py [--runs 21] [--breakdown] [--json FILE]

Every command is a fresh process, run `--runs` times after one warm-up, interleaved (run i of every command
before run i+1 of any), through a one-child wrapper that reports its wall time and CPU time (getrusage of
that child: the child's own threads and the tools it runs). The rows:

- floor: a bare script that imports pynvml, initialises NVML, reads the driver version and each GPU's compute
  capability (the least any audit must do);
- python -c pass: the interpreter's own start;
- audit: `stackcheck audit --format json`;
- gate: `stackcheck gate --dry-run -- python3 -m sglang.launch_server --model-path x --tp 1`;
- audit --deep (what it learned of each file kept from the warm-up: stackcheck.readers.kept);
- gate (first run): the gate with a cache directory of its own, whose kept decisions are removed before every run
  (the plan the warm-up kept there is read, as on a box gated once before with another command line): a miss;
  the gate row above reads the decision kept in the shared one (stackcheck.assembly.gate_cache: the same launch on
  the same box): a hit; audit --deep (first run) runs there too, its deep/ answers removed before every run;
- audit and gate with the plan cache off (the rows above read the plan the warm-up kept; it turns the gate's kept
  decisions off too);
- audit --python /usr/bin/python3 (when present), with the interpreter answers cached (the warm-up fills the
  cache) and cold (an empty cache directory every run: one interpreter start per audit).

It prints medians (wall, CPU, p90 wall), the ratios against the floor and the issue's targets (audit <= 1.2x,
gate <= 1.15x, audit --deep <= 1.5x, on wall time), and writes the figures as JSON to --json, else to
$OUT/h200_perf.json when $OUT is set. --breakdown also runs bench/breakdown.py's staged runs of audit, gate
and audit --deep on this box (where the time goes there) into the same JSON. Standard library and
nvidia-ml-py only; stackcheck runs from this working tree; nothing touches the network. On a machine
without NVML the floor fails (it is timed all the same, its exit status shown) and nothing crashes."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from floor import FLOOR, WRAPPER  # bench/floor.py: the NVML floor and the timing wrapper every bench shares

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


#: row -> wall-time ratio the issue asks for against the floor
TARGETS = {"audit": 1.2, "gate": 1.15, "audit --deep": 1.5}
SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]


def rows(py: str) -> list[tuple[str, list[str], str]]:
    """(label, argv, cache): cache 'warm' shares one cache directory, 'cold' gets an empty one every run,
    'noplan' shares the warm one with the plan cache turned off (STACKCHECK_PLAN_CACHE=0), 'nogate' has one of its
    own whose kept gate decisions are removed before every run (the plan the warm-up kept there is read)."""
    sc = [py, "-m", "stackcheck"]
    out = [
        ("floor", [py, "-c", FLOOR], "warm"),
        ("python -c pass", [py, "-c", "pass"], "warm"),
        ("audit", [*sc, "audit", "--format", "json"], "warm"),
        ("gate", [*sc, "gate", "--dry-run", "--", *SGLANG], "warm"),
        ("gate (first run)", [*sc, "gate", "--dry-run", "--", *SGLANG], "nogate"),
        ("audit --deep", [*sc, "audit", "--deep", "--format", "json"], "warm"),
        # what --deep learned of each file is kept between runs (stackcheck.readers.kept): the row above reads it,
        # this one reads every file again (its deep/ directory removed before every run, as after a new venv)
        ("audit --deep (first run)", [*sc, "audit", "--deep", "--format", "json"], "nogate"),
        # the plan is kept between runs (stackcheck.assembly.plan_cache): the rows above read it; these compute it
        ("audit (plan not cached)", [*sc, "audit", "--format", "json"], "noplan"),
        ("gate (plan not cached)", [*sc, "gate", "--dry-run", "--", *SGLANG], "noplan"),
    ]
    if os.path.exists("/usr/bin/python3"):
        out.append(
            ("audit --python (cached)", [*sc, "audit", "--format", "json", "--python", "/usr/bin/python3"], "warm")
        )
        out.append(
            ("audit --python (cold)", [*sc, "audit", "--format", "json", "--python", "/usr/bin/python3"], "cold")
        )
    return out


def once(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *argv],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    dt, cpu, rc = out.stdout.split()
    return float(dt) * 1e3, float(cpu) * 1e3, int(rc)


def measure(runs: int, deadline: float) -> dict[str, Any]:
    py = sys.executable
    base = dict(os.environ)
    base["PYTHONPATH"] = ROOT + (os.pathsep + base["PYTHONPATH"] if base.get("PYTHONPATH") else "")
    base.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed copy has its bytecode cached
    scratch = tempfile.mkdtemp(prefix="stackcheck-h200-perf-")
    warm_env = {**base, "XDG_CACHE_HOME": os.path.join(scratch, "cache")}
    table = rows(py)
    got: dict[str, dict[str, list[float]]] = {label: {"wall": [], "cpu": [], "rc": []} for label, _, _ in table}
    done = 0
    try:
        for i in range(runs + 1):  # run 0: page cache, bytecode, the interpreter cache
            if time.monotonic() > deadline:
                print(f"time is up after {done} runs of each", file=sys.stderr)
                break
            for label, argv, cache in table:
                env = warm_env
                if cache == "cold":
                    env = {**base, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=scratch, prefix="cold-")}
                elif cache == "noplan":
                    env = {**warm_env, "STACKCHECK_PLAN_CACHE": "0"}
                elif cache == "nogate":  # (gate/: where stackcheck.assembly.gate_cache keeps decisions)
                    env = {**base, "XDG_CACHE_HOME": os.path.join(scratch, "first-run-cache")}
                    shutil.rmtree(os.path.join(env["XDG_CACHE_HOME"], "stackcheck", "gate"), ignore_errors=True)
                    shutil.rmtree(os.path.join(env["XDG_CACHE_HOME"], "stackcheck", "deep"), ignore_errors=True)
                wall, cpu, rc = once(argv, env)
                if i:
                    got[label]["wall"].append(wall)
                    got[label]["cpu"].append(cpu)
                    got[label]["rc"].append(rc)
            done = i
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    out: dict[str, Any] = {}
    for label, argv, cache in table:
        w, c = got[label]["wall"], got[label]["cpu"]
        if not w:
            continue
        out[label] = {
            "argv": [a if a != py else "python" for a in argv],
            "cache": cache,
            "runs": len(w),
            "wall_ms": round(statistics.median(w), 1),
            "wall_p90_ms": round(sorted(w)[min(len(w) - 1, -(-len(w) * 9 // 10) - 1)], 1),
            "cpu_ms": round(statistics.median(c), 1),
            "exit": sorted(set(int(x) for x in got[label]["rc"])),
        }
    return out


def report(result: dict[str, Any]) -> dict[str, Any]:
    floor = result.get("floor")
    floor_ok = bool(floor) and floor["exit"] == [0]
    print(f"{'':28} {'wall ms':>8} {'p90':>7} {'CPU ms':>7} {'exit':>6} {'wall/floor':>10} {'CPU/floor':>9}  target")
    verdicts: dict[str, Any] = {}
    for label, row in result.items():
        ratio_w = row["wall_ms"] / floor["wall_ms"] if floor else float("nan")
        ratio_c = row["cpu_ms"] / floor["cpu_ms"] if floor and floor["cpu_ms"] else float("nan")
        row["wall_vs_floor"] = round(ratio_w, 3)
        row["cpu_vs_floor"] = round(ratio_c, 3)
        target = TARGETS.get(label)
        said = ""
        if target is not None:
            met = floor_ok and ratio_w <= target
            verdicts[label] = {"target": target, "wall_vs_floor": round(ratio_w, 3), "met": met}
            said = f"<= {target}x: {'met' if met else 'NOT met'}" + ("" if floor_ok else " (the floor failed)")
        exits = ",".join(map(str, row["exit"]))
        print(
            f"{label:28} {row['wall_ms']:8.1f} {row['wall_p90_ms']:7.1f} {row['cpu_ms']:7.1f} {exits:>6} "
            f"{ratio_w:9.2f}x {ratio_c:8.2f}x  {said}"
        )
    if not floor_ok:
        print("the floor did not run cleanly (no NVML here?): its ratios say nothing about the driver", file=sys.stderr)
    return verdicts


def breakdown(runs: int) -> dict[str, Any] | None:
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    try:
        import breakdown as bd  # bench/breakdown.py
    except ImportError as exc:
        print(f"no breakdown: {exc}", file=sys.stderr)
        return None
    bd.VERBS["audit-json"] = ["audit", "--format", "json"]
    bd.VERBS["audit-deep"] = ["audit", "--deep", "--format", "json"]
    result = bd.run_all(["audit-json", "gate", "audit-deep"], runs)
    bd.print_table(result)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--breakdown", action="store_true", help="also bench/breakdown.py's staged runs here")
    ap.add_argument("--json", default=None)
    ap.add_argument("--budget-s", type=float, default=420.0, help="stop starting runs after this (default 420)")
    args = ap.parse_args()
    deadline = time.monotonic() + args.budget_s * (0.6 if args.breakdown else 1.0)
    try:
        import pynvml  # noqa: F401

        nvml = "importable"
    except ImportError:
        nvml = "not importable"
    print(f"python {sys.version.split()[0]} at {sys.executable}; {os.cpu_count()} CPUs; pynvml {nvml}")
    result = measure(args.runs, deadline)
    verdicts = report(result)
    doc: dict[str, Any] = {
        "machine": {"python": sys.version.split()[0], "cpus": os.cpu_count(), "pynvml": nvml},
        "runs": args.runs,
        "rows": result,
        "targets": verdicts,
    }
    if args.breakdown:
        doc["breakdown"] = breakdown(max(5, args.runs // 2))
    path = args.json or (os.path.join(os.environ["OUT"], "h200_perf.json") if os.environ.get("OUT") else None)
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
