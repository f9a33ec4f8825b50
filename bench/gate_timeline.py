"""The main thread of `stackcheck gate` as a timeline: what it runs, in order, from the start of the command to the
decision's output, with wall and CPU time per step, medians over fresh processes (issue 21's gate goal: what is
left on the main thread once the facts are in).

    python bench/gate_timeline.py [--runs 9] [--facts] [--python PY] [--tree DIR] [--first-run] [-- GATE ARGS...]

Each run is a fresh process (this module imported, its bytecode cached) that wraps, from outside and as each module
is imported, the functions the gate's decision calls (commands.gate's, launch.gate's, gate_preflight's,
refusals', pipeline's, the engine's evaluate_all, implied.apply, recommend.gate_advice, sources.normalize, the
renderers) and every import, then calls stackcheck.cli.main. Only the main thread's calls are recorded, from
commands.gate.run down six levels (an import at any depth, as `~ import NAME`, its time taken out of the step
that ran it); a step's figures are its median start and end since cli.main began, its wall (time.perf_counter)
and CPU (time.thread_time), summed over its calls in a run. `Background.get (wait)` is the main thread waiting on
the loading thread and the probes: what follows its end is the work after the facts. The default command is
bench/ab_trees.py's gate row (`--model-path x --tp 1`, this box's probes); --python PY gates that interpreter's
command (bench/fake_sglang_env.py's venv: the dependency check reads its metadata); --facts uses the saved H200
box (tests/cases/h200-newest/facts.json, `--model-path M --tp 2`). The wrappers cost about a microsecond a call,
counted in the step. Medians of steps whose start moves with the probes (after the wait) are not a single
run's order: read them with the wait's end. Standard library only."""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # not `from typing import ...` in the child: its own imports would be timed
if TYPE_CHECKING:
    from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SGLANG = ["python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"]
SGLANG_TP2 = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "2"]
GATE_FACTS = "tests/cases/h200-newest/facts.json"
CHILD = (
    f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
    "import gate_timeline; sys.exit(gate_timeline.child())"
)
#: module -> the functions whose calls are steps (None: every function the module defines)
WRAP: dict[str, tuple[str, ...] | None] = {
    "stackcheck.commands.gate": None,
    "stackcheck.launch.gate": None,
    "stackcheck.launch.gate_preflight": None,
    "stackcheck.launch.refusals": None,
    "stackcheck.launch.preflight": ("run", "read_live"),
    "stackcheck.assembly.pipeline": None,
    "stackcheck.verdicts.engine": ("evaluate_all", "evaluate_feature", "evaluate_check", "prepare"),
    "stackcheck.facts.implied": ("apply",),
    "stackcheck.launch.recommend": ("gate_advice",),
    "stackcheck.knowledge.sources": ("normalize",),
    "stackcheck.documents.report": ("base_report", "summarize"),
    "stackcheck.render.gate": None,
    "stackcheck.redact": ("redact_tree", "redact_argv"),
    "stackcheck.atomic": ("write_stdout",),
    "stackcheck.cli": ("build_parser",),
}


def child() -> int:
    import builtins
    import importlib
    import json
    import threading

    perf, tcpu = time.perf_counter, time.thread_time
    main_thread = threading.main_thread()
    events: list[tuple[int, str, float, float, float]] = []  # depth, name, start, wall, cpu
    stack: list[list[float]] = []  # per open step: [wall of its inner imports, cpu of them]
    depth = [0]
    inside = [False]  # below _decide_with
    t0 = [perf()]
    waited: list[float] = []  # [wall, thread CPU] when the main thread's last wait on a background thread ended

    def record(name: str, fn: Any, a: tuple[Any, ...], k: dict[str, Any], imp: bool = False) -> Any:
        if threading.current_thread() is not main_thread:
            return fn(*a, **k)
        top = name == "gate.run"
        if not (inside[0] or top or imp):
            return fn(*a, **k)
        if top:
            inside[0] = True
        lvl = depth[0]
        depth[0] += 1
        stack.append([0.0, 0.0])
        w0, c0 = perf(), tcpu()
        try:
            return fn(*a, **k)
        finally:
            w, c = perf() - w0, tcpu() - c0
            inner = stack.pop()
            depth[0] -= 1
            if imp and stack:  # an import's time is taken out of the step that ran it
                stack[-1][0] += w
                stack[-1][1] += c
            events.append((lvl, name, w0 - t0[0], w - inner[0], c - inner[1]))

    def wrap(mod: str, attr: str, fn: object) -> object:
        if getattr(fn, "_tl", False):
            return fn
        name = f"{mod.rsplit('.', 1)[-1]}.{attr}"

        def wrapper(*a: object, **k: object) -> object:
            if depth[0] > 5:  # below the steps shown: the call alone (the wrapper's cost kept small)
                return fn(*a, **k)  # type: ignore[operator]
            return record(name, fn, a, k)

        wrapper._tl = True  # type: ignore[attr-defined]
        wrapper.__name__ = getattr(fn, "__name__", attr)
        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper

    seen: set[str] = set()

    def patch() -> None:
        for name in [n for n in list(sys.modules) if n not in seen]:
            mod = sys.modules.get(name)
            spec = getattr(mod, "__spec__", None)
            if spec is not None and getattr(spec, "_initializing", False):
                continue
            seen.add(name)
            if name not in WRAP or mod is None:
                continue
            names = WRAP[name]
            for attr, value in list(vars(mod).items()):
                if names is not None and attr not in names:
                    continue
                if callable(value) and not isinstance(value, type) and getattr(value, "__module__", "") == name:
                    setattr(mod, attr, wrap(name, attr, value))
            if name == "stackcheck.assembly.pipeline":
                bg = mod.Background
                real_get = bg.get

                def get(self: object, _real: object = real_get) -> object:
                    try:
                        return record("Background.get (wait)", _real, (self,), {})
                    finally:
                        if threading.current_thread() is main_thread:
                            waited[:] = [perf(), tcpu()]  # the main thread's last wait ended here

                bg.get = get

    real_import, real_module = builtins.__import__, importlib.import_module

    def hooked(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if not level and name in sys.modules and not fromlist:
            return real_import(name, globals, locals, fromlist, level)
        if not level and name in sys.modules and all(hasattr(sys.modules[name], f) for f in fromlist if f != "*"):
            return real_import(name, globals, locals, fromlist, level)
        try:
            return record(f"import {name}", real_import, (name, globals, locals, fromlist, level), {}, imp=True)
        finally:
            patch()

    def hooked_module(name: str, package: str | None = None) -> object:
        if name in sys.modules:
            return real_module(name, package)
        try:
            return record(f"import {name}", real_module, (name, package), {}, imp=True)
        finally:
            patch()

    builtins.__import__ = hooked
    importlib.import_module = hooked_module  # type: ignore[assignment]
    patch()
    out_path, argv = sys.argv[1], sys.argv[2:]
    import contextlib
    import gc
    import io

    gc.disable()  # as the program runs the command (stackcheck.cli.run): no collection when main() turns it back on
    code = 0
    t0[0] = perf()
    c_start = tcpu()
    with contextlib.redirect_stdout(io.StringIO()):
        from stackcheck.cli import main

        code = main(argv)
    end = (perf(), tcpu())
    total = (end[0] - t0[0], end[1] - c_start)
    after = (end[0] - waited[0], end[1] - waited[1]) if waited else (0.0, 0.0)
    builtins.__import__ = real_import
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump({"events": events, "total": total, "after": after, "code": code}, fh)
    return 0


def main() -> int:
    import argparse
    import json
    import shutil
    import statistics
    import subprocess
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--facts", action="store_true", help="the saved H200 box's facts, --model-path M --tp 2")
    ap.add_argument("--python", default=None, help="gate that interpreter's command (--python PY)")
    ap.add_argument("--min-ms", type=float, default=0.2, help="hide steps under this median wall (default 0.2)")
    ap.add_argument("--tree", default=ROOT, help="the stackcheck source tree to run (default: this script's)")
    ap.add_argument(
        "--first-run",
        action="store_true",
        help="the gate's first run: a cache directory of its own whose kept decisions (gate/) are removed before "
        "every run (without it, every run after the warm-up is served from the decision the warm-up kept)",
    )
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()
    if args.rest:
        argv = args.rest
    elif args.facts:
        argv = ["gate", "--dry-run", "--facts", GATE_FACTS, "--", *SGLANG_TP2]
    else:
        argv = ["gate", "--dry-run", *(["--python", args.python] if args.python else []), "--", *SGLANG]
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.path.abspath(args.tree)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "t.json")
        if args.first_run:
            env["STACKCHECK_CACHE_DIR"] = os.path.join(tmp, "cache")
        for i in range(args.runs + 1):
            if args.first_run:  # (the plan the warm-up kept is still read, as bench/ab_trees.py's first-run rows)
                shutil.rmtree(os.path.join(env["STACKCHECK_CACHE_DIR"], "gate"), ignore_errors=True)
            subprocess.run([sys.executable, "-c", CHILD, out, *argv], env=env, cwd=args.tree, check=True)
            if i:
                with open(out, encoding="utf-8") as fh:
                    runs.append(json.load(fh))
    # per (depth, name): the median start of its first call, wall and CPU summed per run
    keys: dict[tuple[int, str], list[tuple[float, float, float, float]]] = {}
    for r in runs:
        per: dict[tuple[int, str], list[float]] = {}
        for lvl, name, start, wall, cpu in r["events"]:
            key = (lvl if not name.startswith("import ") else -1, name)
            slot = per.setdefault(key, [start, 0.0, 0.0, 0])
            slot[1] += wall
            slot[2] += cpu
            slot[3] += 1
        for key, (start, wall, cpu, n) in per.items():
            keys.setdefault(key, []).append((start, wall, cpu, n))
    rows = []
    for (lvl, name), vals in keys.items():
        start = statistics.median(v[0] for v in vals) * 1e3
        wall = statistics.median(v[1] for v in vals) * 1e3
        cpu = statistics.median(v[2] for v in vals) * 1e3
        calls = statistics.median(v[3] for v in vals)
        if wall >= args.min_ms or cpu >= args.min_ms:
            rows.append((start, lvl, name, wall, cpu, calls, len(vals)))
    rows.sort()
    print(f"stackcheck {' '.join(argv)}: {args.runs} runs, main thread, medians (ms); depth -1: an import")
    print(f"{'start':>7} {'end':>7} {'wall':>7} {'CPU':>7} {'calls':>5}  step")
    for start, lvl, name, wall, cpu, calls, n in rows:
        pad = "  " * max(lvl, 0) if lvl >= 0 else "    ~ "
        seen = "" if n == len(runs) else f"  (in {n} of {len(runs)} runs)"
        print(f"{start:7.1f} {start + wall:7.1f} {wall:7.1f} {cpu:7.1f} {calls:5.0f}  {pad}{name}{seen}")
    tw = statistics.median(r["total"][0] for r in runs) * 1e3
    tc = statistics.median(r["total"][1] for r in runs) * 1e3
    imp = statistics.median(sum(e[4] for e in r["events"] if e[1].startswith("import ")) for r in runs) * 1e3
    print(f"cli.main: {tw:.1f} ms wall, {tc:.1f} ms main-thread CPU, of which imports {imp:.1f} ms CPU")
    aw = statistics.median(r["after"][0] for r in runs) * 1e3
    ac = statistics.median(r["after"][1] for r in runs) * 1e3
    print(f"after the main thread's last wait (the facts in): {aw:.1f} ms wall, {ac:.1f} ms CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
