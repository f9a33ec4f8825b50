"""Time `stackcheck recommend --facts` on the write-up box before its upgrade (plan + launch) and after it (no
plan step), and the gate's added advice: in process, after the imports and the manifests are loaded (the
work recommend adds), and as a whole command (`python -m stackcheck recommend --facts F`, interpreter start
included). Prints one line per measurement; the in-process recommendation must stay under 50 ms.

With --probe (on a GPU box): also the probed command (`recommend` without --facts) against `audit`, and a
check that the launch it recommends passes `stackcheck gate --dry-run` on the facts its plan leaves.

    python bench/bench_recommend.py [--runs N] [--probe]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = ROOT / "tests" / "recommend" / "seed-before" / "facts.json"
AFTER = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"
BUDGET_MS = 50.0


def in_process(facts: Path, runs: int) -> list[float]:
    from stackcheck.facts.model import load_facts_file
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.recommend import Request, recommend
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_feature

    manifests = load([], env={})
    launch = {"tp": 8, "goal": "latency", "dtype": "auto", "deterministic": False, "mla": False}
    launch.update({"attention_sinks": False, "p2p_hangs": False})
    times, cpu = [], []
    for _ in range(runs + 3):
        start, start_cpu = time.perf_counter(), time.process_time()
        ctx = Context(facts=load_facts_file(str(facts)), manifests=manifests, launch=dict(launch))
        features = [evaluate_feature(f, ctx) for f in manifests.features]
        recommend(ctx, Request(launch=launch), features)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    CPU[str(facts)] = cpu[3:]
    return times[3:]


CPU: dict[str, list[float]] = {}


def gate_advice(runs: int) -> list[float]:
    from stackcheck.facts.model import load_facts_file
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate
    from stackcheck.launch.recommend import gate_advice as advise
    from stackcheck.verdicts.context import Context

    manifests = load([], env={})
    command = ["python3", "-m", "sglang.launch_server", "--tp", "8", "--enable-torch-symm-mem"]
    derived = gate.derive(command, manifests.launch, {})
    ctx = Context(facts=load_facts_file(str(AFTER)), manifests=manifests, launch=dict(derived.launch))
    explicit = [(r.feature, r.why) for r in derived.required if r.kind == "explicit"]
    times = []
    for _ in range(runs + 3):
        start = time.perf_counter()
        advise(ctx, command, derived.sglang_args, explicit, {})
        times.append((time.perf_counter() - start) * 1000)
    return times[3:]


def whole_command(facts: Path, runs: int) -> list[float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "stackcheck", "recommend", "--facts", str(facts), "--format", "json"]
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        times.append((time.perf_counter() - start) * 1000)
    return times[1:]


def line(name: str, times: list[float]) -> str:
    return f"{name}: median {statistics.median(times):.1f} ms (min {min(times):.1f}, max {max(times):.1f})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=21)
    p.add_argument("--probe", action="store_true", help="also time the probed command and gate its launch")
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    before = in_process(BEFORE, args.runs)
    after = in_process(AFTER, args.runs)
    advice = gate_advice(args.runs)
    ok = statistics.median(before) < BUDGET_MS
    print(f"bench_recommend | {args.runs} runs | budget {BUDGET_MS:.0f} ms in process: {'ok' if ok else 'OVER'}")
    print("  " + line("in process, seed box before (plan + launch)", before))
    print("  " + line("  the same, CPU time", CPU[str(BEFORE)]))
    print("  " + line("in process, seed box after (no plan step)", after))
    print("  " + line("  the same, CPU time", CPU[str(AFTER)]))
    print("  " + line("gate advice (no plan)", advice))
    print("  " + line("whole command, before", whole_command(BEFORE, max(5, args.runs // 3))))
    print("  " + line("python -c pass", whole_python(max(5, args.runs // 3))))
    if args.probe:
        ok = probed(max(5, args.runs // 3)) and ok
    return 0 if ok else 1


def probed(runs: int) -> bool:
    """This box probed: recommend vs audit wall time, then the recommended launch through the gate."""
    import json
    import tempfile

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    base = [sys.executable, "-m", "stackcheck"]
    for verb in ("audit", "recommend"):
        times = []
        for _ in range(runs + 1):
            start = time.perf_counter()
            subprocess.run([*base, verb, "--format", "json"], capture_output=True, env=env, check=False)
            times.append((time.perf_counter() - start) * 1000)
        print("  " + line(f"probed: stackcheck {verb} --format json", times[1:]))
    with tempfile.TemporaryDirectory() as tmp:
        after = Path(tmp) / "after.json"
        cmd = [*base, "recommend", "--format", "json", "--plan-facts", str(after)]
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            print(f"  probed recommend failed (rc {proc.returncode}): {proc.stderr.strip()[-300:]}")
            return False
        doc = json.loads(proc.stdout)
        steps = [s["component"] for s in (doc["plan"] or {}).get("steps") or []]
        print(f"  probed box: {doc['box']}; plan steps: {steps}")
        print(f"  recommended: {' '.join(f'{k}={v}' for k, v in doc['env'].items())} {' '.join(doc['command'])}")
        gate = subprocess.run(
            [*base, "gate", "--facts", str(after), "--dry-run", "--format", "json", "--", *doc["command"]],
            check=False, capture_output=True, text=True, env={**env, **doc["env"]},
        )  # fmt: skip
        decision = json.loads(gate.stdout).get("decision") if gate.stdout.strip() else None
        print(f"  gate --dry-run on the planned facts: rc {gate.returncode}, decision {decision}")
        return gate.returncode == 0 and decision == "allow"


def whole_python(runs: int) -> list[float]:
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return times[1:]


if __name__ == "__main__":
    sys.exit(main())
