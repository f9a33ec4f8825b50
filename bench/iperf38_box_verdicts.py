"""iperf38 (issue 21, goal: `plan --want torch-symm-mem` of the write-up box within 30 ms of `python -c pass`): what
keeping the box's own feature verdicts beside the ok-elsewhere answers (plan_cache's upstream/, same key) could save
a later request on the same facts. A plan with a request keeps no plan-cache entry, so each request judges every
feature of the box again (want_phases.py's "the box's features" row); this measures, in one process, that
evaluation (engine.evaluate_feature over the manifests' features on a fresh Context, engine.prepare done, medians of
9) against parsing the same verdicts from their JSON (lean_json.loads), and their size. The first evaluation in a
fresh process pays the lazy caches (parsed versions, specifiers, rule shapes) that the planner's own evaluations
would then pay instead, so the saving of a served box is at most the warm figure plus part of the first.

    PYTHONPATH=. python3 bench/iperf38_box_verdicts.py [--facts tests/cases/writeup-before/facts.json]"""

from __future__ import annotations

import argparse
import time

from stackcheck import lean_json
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature, prepare


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", default="tests/cases/writeup-before/facts.json")
    args = ap.parse_args()
    manifests = load([], env={})
    facts = load_facts_file(args.facts)
    prepare(manifests)
    first = None
    evals: list[float] = []
    verdicts: list[object] = []
    for _ in range(9):
        ctx = Context(facts=dict(facts), manifests=manifests)  # type: ignore[arg-type]
        c = time.process_time()
        verdicts = [evaluate_feature(f, ctx) for f in manifests.features]
        evals.append(time.process_time() - c)
        first = evals[0] if first is None else first
    text = lean_json.dumps(verdicts, separators=(",", ":"))
    loads: list[float] = []
    for _ in range(9):
        c = time.process_time()
        lean_json.loads(text)
        loads.append(time.process_time() - c)
    evals.sort()
    loads.sort()
    print(f"{len(verdicts)} features: first evaluation {first * 1000:.2f} ms CPU, later ones {evals[4] * 1000:.2f} ms")
    print(f"their JSON {len(text):,} bytes, parsed in {loads[4] * 1000:.2f} ms")


if __name__ == "__main__":
    main()
