"""Time make_plan over the full shipped manifests (the default plan the audit carries, and three --want/--hold
plans) on the write-up box before its upgrade. Prints a one-line table; the default plan must stay < 50 ms.
`want torch-symm-mem` is issue 21's command (no release makes it ok there: the search, then the ok-elsewhere search
over every SGLang release for each feature left blocked); in process, a fresh planner Engine per run (the manifests'
memos and the version caches warm after the first), so it reads the planner alone, warm (bench/bench_want_first.py
reads the whole first run of a process)."""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path
from typing import Any

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.plan import make_plan
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

FACTS = Path(__file__).resolve().parent.parent / "tests" / "cases" / "writeup-before" / "facts.json"
RUNS = 50
BUDGET_MS = 50.0


def main() -> int:
    manifests = load([], env={})
    ctx = Context(facts=load_facts_file(str(FACTS)), manifests=manifests)
    features, _ = evaluate_all(ctx)
    cases: dict[str, dict[str, Any]] = {
        "default": {},
        "want fp8-block-gemm": {"want": ["fp8-block-gemm"]},
        "want torch-symm-mem": {"want": ["torch-symm-mem"]},
        "hold driver, want fa4": {"want": ["attention-fa4"], "hold": ["driver"]},
    }
    cells = []
    ok = True
    for name, kw in cases.items():
        times = []
        for _ in range(RUNS):
            start = time.perf_counter()
            make_plan(ctx, features, **kw)
            times.append((time.perf_counter() - start) * 1000)
        med = statistics.median(times)
        cells.append(f"{name}: median {med:.1f} ms (min {min(times):.1f})")
        if name == "default" and med >= BUDGET_MS:
            ok = False
    verdict = "ok" if ok else "OVER"
    print(
        f"bench_plan | writeup-before | {RUNS} runs | " + " | ".join(cells) + f" | budget {BUDGET_MS:.0f} ms: {verdict}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
