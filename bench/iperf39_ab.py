"""iperf39 (issue 21): this session's trees side by side (the previous landing, this session's start, after the first
wave, and any other), every row's CPU (user + system of the command) and wall medians of interleaved runs pinned to
two cores (taskset -c 0,1), one callgrind count per row and tree (the command's own process), load averages printed.

Rows on a target environment (--target: a venv with flashinfer-python + flashinfer-cubin 0.6.13 installed --no-deps
from the real wheels, bench/iperf38_ab.py's; --target0: a bare venv, no FlashInfer): `audit --python T --format json`
(audit, audit0; auditH with --host-facts of tests/cases/h200-newest: GPUs of major 9, iperf43), `gate --dry-run
--format json` of an SGLang line plain (gate, gate0; gateH as auditH), behind `nice srun ... taskset` (srun), inside
`bash -c` (bash), behind `timeout 3600` (timeout). Rows on the write-up box's facts (tests/cases/writeup-before):
plan, want (plan --want torch-symm-mem), facts (audit --facts --format json); pass (`python -c pass`, the floor).
Warm: every tree's cache directory keeps its prepared manifests, the probes' per-file answers (deep/) and the plan
cache's upstream/ answers; answer/ and gate/ are removed before every run (no verdict or gate answer served whole).
--cold: deep/ and upstream/ removed too (the kept caches cleared; the prepared manifests stay, as after any earlier
run of the same install).

    python3 bench/iperf39_ab.py TREE [TREE ...] --target T --target0 T0 [--runs 21] [--rows ...] [--cold]

A tree: git archive REV -- stackcheck manifests schemas pyproject.toml tests/cases."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PIN = ["taskset", "-c", "0,1"]
WRAP = (
    "import resource, subprocess, sys, time\n"
    "t = time.perf_counter()\n"
    "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "w = time.perf_counter() - t\n"
    "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(r.ru_utime + r.ru_stime, w, p.returncode)\n"
)
SRUN = ["nice", "-n", "5", "srun", "-N", "1", "-n", "1", "--gpus-per-task", "1", "--mem", "64G", "taskset", "-c", "0-7"]


def rows(target: str, target0: str, tree: str) -> dict[str, list[str]]:
    wu = os.path.join(tree, "tests", "cases", "writeup-before", "facts.json")
    h200 = ["--host-facts", os.path.join(tree, "tests", "cases", "h200-newest", "facts.json")]
    tail = ["-m", "sglang.launch_server", "--model-path", "/nonexistent/model", "--tp", "1"]
    sg = [target, *tail]
    g = ["-m", "stackcheck", "gate", "--dry-run", "--format", "json", "--"]
    return {
        "pass": ["-c", "pass"],
        "audit": ["-m", "stackcheck", "audit", "--python", target, "--format", "json"],
        "audit0": ["-m", "stackcheck", "audit", "--python", target0, "--format", "json"],
        # (iperf43: the same target judged for an H200 host, whose GPUs load no trtllm-gen cubin)
        "auditH": ["-m", "stackcheck", "audit", "--python", target, *h200, "--format", "json"],
        "gate": [*g, *sg],
        "gate0": [*g, target0, *tail],
        "gateH": [*g[:4], *h200, *g[4:], *sg],
        "srun": [*g, *SRUN, *sg],
        "bash": [*g, "bash", "-c", " ".join(sg)],
        "timeout": [*g, "timeout", "3600", *sg],
        "plan": ["-m", "stackcheck", "plan", "--facts", wu],
        "want": ["-m", "stackcheck", "plan", "--facts", wu, "--want", "torch-symm-mem"],
        "facts": ["-m", "stackcheck", "audit", "--facts", wu, "--format", "json"],
    }


def _env(tree: str, cache: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "SGL_", "STACKCHECK_", "FLASHINFER_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("VIRTUAL_ENV", None)
    return {**env, "PYTHONPATH": tree, "STACKCHECK_CACHE_DIR": cache}


def _fresh(cache: str, cold: bool) -> None:
    for leaf in ("answer", "gate", *(("deep", "upstream") if cold else ())):
        shutil.rmtree(os.path.join(cache, leaf), ignore_errors=True)


def instructions(py: str, tree: str, args: list[str], cache: str, cold: bool) -> int:
    _fresh(cache, cold)
    with tempfile.TemporaryDirectory(prefix="iperf39-cg-") as d:
        out = os.path.join(d, "cg.out")
        cmd = [*PIN, "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", py, *args]
        subprocess.run(cmd, cwd=tree, env=_env(tree, cache), capture_output=True, check=False, timeout=900)
        try:
            with open(out) as f:
                m = re.search(r"^(?:summary|totals):\s+(\d+)", f.read(), re.M)
        except OSError:
            return -1
        return int(m.group(1)) if m else -1


def once(py: str, tree: str, args: list[str], cache: str, cold: bool) -> tuple[float, float, int]:
    _fresh(cache, cold)
    out = subprocess.run(
        [*PIN, py, "-c", WRAP, py, *args], cwd=tree, env=_env(tree, cache), capture_output=True, text=True,
        check=True, timeout=600,
    )  # fmt: skip
    cpu, wall, rc = out.stdout.split()
    return float(cpu) * 1000, float(wall) * 1000, int(rc)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trees", nargs="+")
    ap.add_argument("--target", required=True)
    ap.add_argument("--target0", required=True)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--rows", default="pass,audit,audit0,gate,gate0,srun,bash,timeout,plan,want,facts")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cold", action="store_true")
    ap.add_argument("--no-callgrind", action="store_true")
    args = ap.parse_args()
    trees = [os.path.abspath(t) for t in args.trees]
    names = [os.path.basename(t.rstrip("/")) for t in trees]
    print(f"{'cold' if args.cold else 'warm'}; {args.runs} interleaved runs; trees {' '.join(names)}")
    print(f"load averages before {os.getloadavg()}", flush=True)
    tmp = tempfile.mkdtemp(prefix="iperf39-ab-")
    try:
        for name in args.rows.split(","):
            caches = [tempfile.mkdtemp(prefix=f"cache-{i}-", dir=tmp) for i in range(len(trees))]
            cmds = [rows(args.target, args.target0, t)[name] for t in trees]
            cpu: list[list[float]] = [[] for _ in trees]
            wall: list[list[float]] = [[] for _ in trees]
            rcs: list[set[int]] = [set() for _ in trees]
            for i in range(args.runs + 1):  # the first of each: a warm-up that prepares the manifests
                order = list(range(len(trees)))
                order = order[i % len(order) :] + order[: i % len(order)]
                for k in order:
                    c, w, rc = once(args.python, trees[k], cmds[k], caches[k], args.cold)
                    rcs[k].add(rc)
                    if i:
                        cpu[k].append(c)
                        wall[k].append(w)
            for k, t in enumerate(trees):
                ir = -1 if args.no_callgrind else instructions(args.python, t, cmds[k], caches[k], args.cold)
                mc, mw = statistics.median(cpu[k]), statistics.median(wall[k])
                print(
                    f"{name:8} {names[k]:12} CPU {mc:7.1f} wall {mw:7.1f}"
                    f" Ir {ir / 1e6:8.1f}M rc {sorted(rcs[k])}  load {os.getloadavg()[0]:.2f}",
                    flush=True,
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load averages after {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
