"""Where the CPU time of a first `plan --want` goes, phase by phase: medians of fresh processes, each the first run of
the command line on a box never seen (its answer/ directory removed; the prepared manifests an earlier run kept are
read, as on a machine where stackcheck ran before: bench/bench_want_first.py's "new box").

    python bench/want_phases.py [--runs 15] [--facts tests/cases/writeup-before/facts.json] [--want torch-symm-mem]

Each run is `python want_phases.py --child ARGS...`: it imports the modules of the path, wraps the functions named in
PHASES (from outside: the product has no timing code), runs stackcheck.cli.main(ARGS) and prints each phase's CPU
time (time.process_time, the whole process) as one JSON line. Phases nest (make_plan holds _upstream_ok, _report holds
the box's evaluation), so they do not add up; `imports` is the import of the modules wrapped, before main; `main` is
the command itself; `total` the process's CPU at the end, interpreter start included; a recursive call is timed
as part of its outermost call. The wrappers cost a few
microseconds per call (the evaluation of the box's features, ~70 calls, is the most called). Standard library only."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: (module, attribute, label): module-level functions looked up at call time by their callers
PHASES = (
    ("stackcheck.assembly.plan_cache", "answer_for", "answer key (plan_cache.answer_for)"),
    ("stackcheck.assembly.pipeline", "gather", "facts file read (pipeline.gather)"),
    ("stackcheck.verdicts.engine", "prepare", "rule shapes + features/checks load (engine.prepare)"),
    ("stackcheck.verdicts.engine", "evaluate_feature", "the box's features (evaluate_feature, all)"),
    ("stackcheck.facts.implied", "apply", "implied versions (implied.apply)"),
    ("stackcheck.assembly.pipeline", "_report", "report (pipeline._report)"),
    ("stackcheck.plan.hypothetical", "prime", "planner memos restored (hypothetical.prime)"),
    ("stackcheck.plan.planner", "_wanted_target", "--want search (planner._wanted_target)"),
    ("stackcheck.plan.planner", "plan_steps", "steps (planner.plan_steps)"),
    ("stackcheck.plan.planner", "_crashes_after", "candidates' checks (planner._crashes_after)"),
    ("stackcheck.plan.planner", "_upstream_ok", "ok elsewhere (planner._upstream_ok)"),
    ("stackcheck.plan", "make_plan", "planner (make_plan)"),
    ("stackcheck.knowledge.sources", "normalize", "sources (sources.normalize)"),
    ("stackcheck.assembly.plan_cache", "keep_answer", "answer kept (plan_cache.keep_answer)"),
)


def child(argv: list[str]) -> None:
    import contextlib
    import importlib
    import io

    spent: dict[str, float] = {}

    inside: set[str] = set()  # the labels being timed now: a recursive call (normalize's) is its outer call's

    def timed(f, label):  # type: ignore[no-untyped-def]
        def wrapper(*a, **k):  # type: ignore[no-untyped-def]
            if label in inside:
                return f(*a, **k)
            inside.add(label)
            t = time.process_time()
            try:
                return f(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - t
                inside.discard(label)

        return wrapper

    t = time.process_time()
    import stackcheck.cli as cli
    import stackcheck.plan.hypothetical as hypothetical
    import stackcheck.render as render

    for mod, name, label in PHASES:
        m = importlib.import_module(mod)
        setattr(m, name, timed(getattr(m, name), label))
    engine_cls = hypothetical.Engine
    engine_cls.checks_failing_on = timed(engine_cls.checks_failing_on, "checks after the plan (checks_failing_on)")
    for fmt, f in list(render.PLAN_FORMATS.items()):
        render.PLAN_FORMATS[fmt] = timed(f, "render (PLAN_FORMATS, masking included)")
    spent["imports"] = time.process_time() - t
    t = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()):
        cli.main(argv)
    spent["main"] = time.process_time() - t
    spent["total"] = time.process_time()
    sys.stdout.write(json.dumps({k: round(v * 1e3, 3) for k, v in spent.items()}) + "\n")
    sys.stdout.flush()
    os._exit(0)


def main() -> int:
    import argparse
    import shutil

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--facts", default="tests/cases/writeup-before/facts.json")
    ap.add_argument("--want", default="torch-symm-mem")
    args = ap.parse_args()
    argv = ["plan", "--facts", args.facts, "--want", args.want]
    tmp = tempfile.mkdtemp(prefix="stackcheck-want-phases-")
    env = {k: v for k, v in os.environ.items() if k not in ("STACKCHECK_CACHE_DIR", "PYTHONDONTWRITEBYTECODE")}
    env.update(PYTHONPATH=ROOT, XDG_CACHE_HOME=tmp)
    rows: list[dict[str, float]] = []
    try:
        for i in range(args.runs + 1):  # (run 0 keeps the prepared manifests and writes the bytecode)
            shutil.rmtree(os.path.join(tmp, "stackcheck", "answer"), ignore_errors=True)
            out = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", *argv],
                capture_output=True,
                text=True,
                env=env,
                cwd=ROOT,
                check=True,
                timeout=60,
            )
            if i:
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"want_phases | {' '.join(argv)} | {args.runs} runs, load {os.getloadavg()[0]:.1f} | CPU ms, medians")
    for label in rows[0]:
        print(f"{statistics.median(r.get(label, 0.0) for r in rows):8.2f}  {label}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    sys.exit(main())
