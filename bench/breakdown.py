"""Where the time of each verb goes: interpreter start, imports, probes (per probe), manifests, evaluation,
launch reading, plan, render, the rest; wall and CPU, medians of interleaved runs, as a table, a JSON
document and a stacked bar chart.

    python bench/breakdown.py [--runs 21] [--json docs/perf-breakdown.json] [--png docs/perf-breakdown.png]
                              [--verbs audit,audit-facts,gate,plan,explain,triage]

Each run is a fresh process: `python -c CHILD --child OUT -- ARGS...` (this module imported) installs the
timing hooks and calls stackcheck.cli.main(ARGS). The product has no timing code: the hooks are installed here, from
outside, by wrapping functions as their modules are imported (builtins.__import__ and
importlib.import_module are wrapped to notice them), so nothing costs anything in a normal run.

Accounting: every thread keeps a stack of stages; time is charged to the innermost stage only (an import
inside the plan counts as import, not plan), per thread, as wall time (time.perf_counter) and CPU time
(time.thread_time). Only the outermost of the non-import stages counts (the planner's own feature
evaluations are plan, not evaluation). Stages of threads that run at the same time (the probes, the
preloading of the manifests) overlap in wall time: their wall figures add up to more than the process's
wall time, which is the figure to read for latency; the CPU figures add up. `start+exit` is the process's
CPU (getrusage of the child) less what the hooks saw: the interpreter's start and exit (the child leaves as the
`stackcheck` program does, without tearing the interpreter down; a thread's time after its last stage is
charged to `other` when it ends); `nvml` is the early NVML thread's driver work (nvmlInit, the reads,
nvmlShutdown: the bare-NVML floor's work, done in a thread while the main thread imports); `wait` is the main thread
waiting for a background thread (the preloaded manifests and engine, the gate's probes), whose own work is
counted in that thread's stages; `subprocesses` the tools the probes ran; `plan` the planner or, once a
run has kept the plan (the warm-up does: stackcheck.assembly.plan_cache), reading it back (STACKCHECK_PLAN_CACHE=0
in the environment measures the planner); `pynvml` the import of pynvml and of what it imports (ctypes,
ctypes.util: part of the bare-NVML floor too, so not stackcheck's `import`). `hooks` is the
bench's own cost (subtracted from nothing, shown so that it can be judged).

The probes of a verb that reads this box run against this box: on a machine without a GPU the NVML probe
fails fast and falls back to nvidia-smi and /proc, so its share is not the H200's (bench/h200_perf.py
measures that one on the real machine)."""

from __future__ import annotations

import os
import sys
import time

TYPE_CHECKING = False  # not `from typing import ...`: the child's own imports would count as start-up
if TYPE_CHECKING:
    from typing import Any

# the child imports no more than this before its hooks are in (its own imports would count as start-up)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FACTS = "tests/cases/writeup-after/facts.json"
BEFORE = "tests/cases/writeup-before/facts.json"  # the write-up's box before its upgrade: facts its releases imply
LOG = "tests/data/logs/no_kernel_image.log"
GATE_FACTS = "tests/cases/h200-newest/facts.json"
SGLANG_TP2 = ["python", "-m", "sglang.launch_server", "--model-path", "M", "--tp", "2"]

#: verb label -> stackcheck arguments (paths relative to the repository root)
VERBS: dict[str, list[str]] = {
    "audit": ["audit"],
    "audit-facts": ["audit", "--facts", FACTS],
    "gate": ["gate", "--dry-run", "--", "python3", "-m", "sglang.launch_server", "--model-path", "x", "--tp", "1"],
    # the gate's own work without this box's probes: saved facts of an H200 box, a TP-2 SGLang launch
    "gate-facts": ["gate", "--dry-run", "--facts", GATE_FACTS, "--", *SGLANG_TP2],
    "plan": ["plan", "--facts", FACTS],
    "plan-want": ["plan", "--facts", FACTS, "--want", "attention-fa4"],
    "plan-before": ["plan", "--facts", BEFORE],
    # a feature no release fixes (issue 21's `--want` goal): the planner runs and finds no stack
    "plan-want-none": ["plan", "--facts", BEFORE, "--want", "torch-symm-mem"],
    "explain": ["explain", "fp8-block-gemm", "--facts", FACTS],
    "triage": ["triage", LOG, "--facts", FACTS],
}
#: how a child starts: this module imported (its bytecode cached), not run as a script (compiled every time,
#: which would count as the interpreter's start)
CHILD = (
    f"import sys; sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r}); "
    "import breakdown; sys.exit(breakdown.main())"
)
DEFAULT_VERBS = ["audit", "audit-facts", "gate", "plan", "explain", "triage"]

#: the order of the stages in the table and the chart
STAGES = [
    "start+exit",
    "subprocesses",
    "import",
    "pynvml",
    "nvml",
    "parser",
    "manifests",
    "probes",
    "evaluation",
    "launch",
    "plan",
    "render",
    "wait",
    "other",
]


# ---- the child: hooks, then the command ------------------------------------------------------------------


def child(out_path: str, argv: list[str]) -> int:
    import builtins
    import importlib
    import resource
    import threading

    me = resource.getrusage(resource.RUSAGE_SELF)
    self_start = me.ru_utime + me.ru_stime

    perf = time.perf_counter
    tcpu = time.thread_time
    wall: dict[str, float] = {}
    wall_main: dict[str, float] = {}  # the main thread's: the latency path (its waits included)
    cpu: dict[str, float] = {}
    main_thread = threading.main_thread()
    local = threading.local()
    lock = threading.Lock()
    BASE = ("other",)
    IMPORTISH = ("import", "pynvml", "hooks")

    def state() -> tuple[list[str], list[float]]:
        st = getattr(local, "st", None)
        if st is None:
            st = local.st = (list(BASE), [perf(), tcpu()])
        return st

    def charge(stack: list[str], mark: list[float]) -> None:
        w, c = perf(), tcpu()
        top = stack[-1]
        with lock:
            wall[top] = wall.get(top, 0.0) + (w - mark[0])
            if threading.current_thread() is main_thread:
                wall_main[top] = wall_main.get(top, 0.0) + (w - mark[0])
            cpu[top] = cpu.get(top, 0.0) + (c - mark[1])
        mark[0], mark[1] = w, c

    def enter(stage: str) -> bool:
        stack, mark = state()
        if stage not in IMPORTISH and any(s not in IMPORTISH for s in stack[1:]):
            return False  # only the outermost stage counts
        charge(stack, mark)
        stack.append(stage)
        return True

    def leave() -> None:
        stack, mark = state()
        charge(stack, mark)
        stack.pop()

    def wrap(fn: Any, stage: str) -> Any:
        if getattr(fn, "_bench_wrapped", False):
            return fn

        def wrapper(*a: Any, **k: Any) -> Any:
            pushed = enter(stage)
            try:
                return fn(*a, **k)
            finally:
                if pushed:
                    leave()

        wrapper._bench_wrapped = True  # type: ignore[attr-defined]
        wrapper.__name__ = getattr(fn, "__name__", "wrapped")
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper

    # module -> {function name: stage}
    table: dict[str, dict[str, str]] = {
        "stackcheck.cli": {"build_parser": "parser"},
        "stackcheck.knowledge.loader": {"load": "manifests"},
        "stackcheck.assembly.pipeline": {
            "gather": "probes",
            "apply_assumptions": "evaluation",
            "load_host_facts": "probes",
        },
        "stackcheck.probes.runner": {"run_probes": "probes"},
        "stackcheck.facts.model": {"load_facts_document": "evaluation", "load_facts_file": "evaluation"},
        # (evaluate_feature too: `plan` without shown checks judges the features alone, not through evaluate_all)
        "stackcheck.verdicts.engine": {"evaluate_all": "evaluation", "evaluate_feature": "evaluation"},
        "stackcheck.documents.report": {"base_report": "evaluation", "summarize": "evaluation"},
        "stackcheck.launch.triage": {"triage_file": "evaluation", "triage_with_plan": "plan"},
        "stackcheck.commands.explain": {"_box_gpus": "evaluation", "_rows": "evaluation", "ranges": "evaluation"},
        "stackcheck.launch.gate": {
            "derive": "launch",
            "release_problems": "launch",
            "installation_problems": "launch",
            "undeclared_problems": "launch",
        },
        "stackcheck.launch.refusals": {"refusal_problems": "launch"},
        "stackcheck.facts.implied": {"apply": "evaluation"},
        "stackcheck.launch.gate_preflight": {
            "expand_config": "launch",
            "run_for_gate": "launch",
            "start_usage": "launch",
        },
        "stackcheck.plan": {"make_plan": "plan"},
        "stackcheck.assembly.plan_cache": {"lookup": "plan", "store": "plan"},  # the plan kept between runs
        "stackcheck.knowledge.sources": {"normalize": "render"},
        "stackcheck.commands.arguments": {"emit": "render"},
        "stackcheck.atomic": {"write_stdout": "render"},
    }
    seen: set[str] = set()

    def patch_new() -> None:
        for name in [n for n in list(sys.modules) if n not in seen]:
            mod = sys.modules.get(name)
            if mod is None or not name.startswith("stackcheck"):
                seen.add(name)
                continue
            if getattr(mod, "__spec__", None) is not None and getattr(mod.__spec__, "_initializing", False):
                continue  # still running its body: patched once it is done
            seen.add(name)
            for attr, stage in table.get(name, {}).items():
                if callable(getattr(mod, attr, None)):
                    setattr(mod, attr, wrap(getattr(mod, attr), stage))
            for attr, value in list(vars(mod).items()):
                if callable(value) and attr.startswith("render") and getattr(value, "__module__", "") == name:
                    setattr(mod, attr, wrap(value, "render"))
                if isinstance(value, type) and getattr(value, "__module__", "") == name:
                    probe_name = value.__dict__.get("name")
                    run = value.__dict__.get("run")
                    if isinstance(probe_name, str) and callable(run) and name.startswith("stackcheck.probes."):
                        value.run = wrap(run, f"probe:{probe_name}")  # type: ignore[attr-defined]
            if name == "stackcheck.assembly.pipeline":  # the main thread waiting on a background thread (its work is
                background = getattr(mod, "Background", None)  # counted in that thread's stages)
                if isinstance(background, type) and callable(getattr(background, "get", None)):
                    background.get = wrap(background.get, "wait")  # type: ignore[attr-defined]
            if name == "stackcheck.probes.nvml_early":  # the driver's start, reads and shutdown in the early
                session = getattr(mod, "Session", None)  # thread: the floor's own work, not stackcheck's
                if isinstance(session, type) and callable(getattr(session, "_run", None)):
                    session._run = wrap(session._run, "nvml")  # type: ignore[attr-defined]
            if name == "stackcheck.render":
                for table_name in ("RENDERERS",):
                    registry = getattr(mod, table_name, None)
                    if isinstance(registry, dict):
                        for key, fn in list(registry.items()):
                            if callable(fn):
                                registry[key] = wrap(fn, "render")

    real_import = builtins.__import__
    real_import_module = importlib.import_module

    def needs_import(name: str, fromlist: Any, level: int) -> bool:
        if level:
            return True
        mod = sys.modules.get(name)
        if mod is None:
            return True
        if fromlist:
            return any(not hasattr(mod, f) for f in fromlist if f != "*")
        return False

    def hooked_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if not needs_import(name, fromlist, level):
            return real_import(name, globals, locals, fromlist, level)
        # pynvml's import (with what it imports: ctypes, ctypes.util...) is part of the floor: its own stage
        nvml = (name == "pynvml" and not level) or state()[0][-1] == "pynvml"
        pushed = enter("pynvml" if nvml else "import")
        try:
            return real_import(name, globals, locals, fromlist, level)
        finally:
            if pushed:
                leave()
            enter("hooks")
            try:
                patch_new()
            finally:
                leave()

    def hooked_import_module(name: str, package: str | None = None) -> Any:
        if name in sys.modules:
            return real_import_module(name, package)
        enter("import")
        try:
            return real_import_module(name, package)
        finally:
            leave()
            enter("hooks")
            try:
                patch_new()
            finally:
                leave()

    # a thread's last open segment (after its last stage) is charged when it ends, not lost to start+exit
    real_run = threading.Thread.run

    def run_and_charge(self: threading.Thread) -> None:
        try:
            real_run(self)
        finally:
            st = getattr(local, "st", None)
            if st is not None:
                charge(*st)

    threading.Thread.run = run_and_charge  # type: ignore[method-assign]
    builtins.__import__ = hooked_import
    importlib.import_module = hooked_import_module
    import argparse as _argparse

    _argparse.ArgumentParser.parse_args = wrap(_argparse.ArgumentParser.parse_args, "parser")  # type: ignore[method-assign]
    patch_new()

    code = 0
    try:
        from stackcheck.cli import main

        code = main(argv)
    finally:
        # the main thread's open segment; other threads' open segments (a probe abandoned at its timeout)
        # are lost, as their time is not the command's
        stack, mark = state()
        charge(stack, mark)
        builtins.__import__ = real_import
        import json

        me = resource.getrusage(resource.RUSAGE_SELF)
        self_end = me.ru_utime + me.ru_stime
        kids = resource.getrusage(resource.RUSAGE_CHILDREN)  # the tools the probes ran (nvcc, a target python)
        children = kids.ru_utime + kids.ru_stime
        with open(out_path, "w", encoding="utf-8") as fh:
            json.dump(
                {
                    "self_cpu": self_end - self_start,
                    "wall": wall,
                    "wall_main": wall_main,
                    "cpu": cpu,
                    "children": children,
                    "code": code,
                },
                fh,
            )
    return code


# ---- the parent: runs, medians, table, JSON, chart ---------------------------------------------------------


def measure_process(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s, exit status) of one process, through a one-child wrapper (getrusage of it alone)."""
    import subprocess

    from floor import WRAPPER  # bench/floor.py, beside this script

    out = subprocess.run(
        [sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, check=True, env=env, cwd=ROOT
    )
    dt, cpu_s, rc = out.stdout.split()
    return float(dt), float(cpu_s), int(rc)


def stackcheck_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's installed copy has its bytecode cached
    return env


def run_all(verbs: list[str], runs: int) -> dict[str, Any]:
    import json
    import tempfile

    env = stackcheck_env()
    tmp = tempfile.mkdtemp(prefix="stackcheck-breakdown-")
    samples: dict[str, list[dict[str, Any]]] = {v: [] for v in ["python -c pass", *verbs]}
    for i in range(runs + 1):  # run 0 warms the page cache and writes the bytecode
        measured = i > 0
        wall_s, cpu_s, _ = measure_process([sys.executable, "-c", "pass"], env)
        if measured:
            samples["python -c pass"].append({"process_wall": wall_s * 1e3, "process_cpu": cpu_s * 1e3})
        for verb in verbs:
            out = os.path.join(tmp, f"{verb}.json")
            argv = [sys.executable, "-c", CHILD, "--child", out, "--", *VERBS[verb]]
            wall_s, cpu_s, rc = measure_process(argv, env)
            with open(out, encoding="utf-8") as fh:
                got = json.load(fh)
            if measured:
                samples[verb].append(
                    {"process_wall": wall_s * 1e3, "process_cpu": cpu_s * 1e3, "rc": rc,
                     "children": got["children"] * 1e3, "wall": {k: v * 1e3 for k, v in got["wall"].items()},
                     "wall_main": {k: v * 1e3 for k, v in got["wall_main"].items()},
                     "cpu": {k: v * 1e3 for k, v in got["cpu"].items()}}
                )  # fmt: skip
    return summarise(samples)


def summarise(samples: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    import statistics

    out: dict[str, Any] = {}
    for verb, runs in samples.items():
        row: dict[str, Any] = {
            "runs": len(runs),
            "process_wall_ms": round(statistics.median(r["process_wall"] for r in runs), 1),
            "process_cpu_ms": round(statistics.median(r["process_cpu"] for r in runs), 1),
        }
        if verb != "python -c pass":
            row["args"] = VERBS[verb]
            row["exit"] = sorted({r["rc"] for r in runs})
            keys = sorted({k for r in runs for k in r["cpu"]})
            wall = {k: statistics.median(r["wall"].get(k, 0.0) for r in runs) for k in keys}
            cpu = {k: statistics.median(r["cpu"].get(k, 0.0) for r in runs) for k in keys}
            seen_cpu = statistics.median(sum(r["cpu"].values()) + r["children"] for r in runs)
            cpu["subprocesses"] = statistics.median(r["children"] for r in runs)
            cpu["start+exit"] = max(0.0, row["process_cpu_ms"] - seen_cpu)
            row["stages_cpu_ms"] = {k: round(v, 2) for k, v in sorted(cpu.items())}
            row["stages_wall_ms"] = {k: round(v, 2) for k, v in sorted(wall.items())}
            main = {k: statistics.median(r["wall_main"].get(k, 0.0) for r in runs) for k in keys}
            main["start+exit"] = max(
                0.0, row["process_wall_ms"] - statistics.median(sum(r["wall_main"].values()) for r in runs)
            )
            row["main_thread_wall_ms"] = {k: round(v, 2) for k, v in sorted(main.items())}
        out[verb] = row
    return out


def stage_of(key: str) -> str:
    return "probes" if key.startswith("probe:") else key


def grouped(stages: dict[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k, v in stages.items():
        if k == "hooks":
            continue
        out[stage_of(k)] = out.get(stage_of(k), 0.0) + v
    return out


def print_table(result: dict[str, Any]) -> None:
    verbs = [v for v in result if v != "python -c pass"]
    base = result["python -c pass"]
    print(f"python -c pass: wall {base['process_wall_ms']:.1f} ms, CPU {base['process_cpu_ms']:.1f} ms (medians)")
    print(f"{'verb':<12} {'wall':>7} {'CPU':>7}  " + " ".join(f"{s[:10]:>10}" for s in STAGES) + "  (CPU ms by stage)")
    for v in verbs:
        row = result[v]
        g = grouped(row["stages_cpu_ms"])
        cells = " ".join(f"{g.get(s, 0.0):10.1f}" for s in STAGES)
        print(f"{v:<12} {row['process_wall_ms']:7.1f} {row['process_cpu_ms']:7.1f}  {cells}")
    for v in verbs:
        probes = {k[6:]: c for k, c in result[v]["stages_cpu_ms"].items() if k.startswith("probe:")}
        if probes:
            walls = result[v]["stages_wall_ms"]
            text = ", ".join(f"{k} {c:.1f}/{walls.get('probe:' + k, 0.0):.1f}" for k, c in sorted(probes.items()))
            print(f"  {v} probes (CPU/wall ms): {text}")
        print(f"  {v}: hooks' own cost {result[v]['stages_cpu_ms'].get('hooks', 0.0):.1f} ms CPU")


def draw(result: dict[str, Any], png: str, title: str) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not importable: no chart drawn", file=sys.stderr)
        return False
    verbs = [v for v in result if v != "python -c pass"]
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8), sharey=True)
    colours = plt.get_cmap("tab20").colors
    panels = (
        (axes[0], "stages_cpu_ms", "CPU ms (all threads)"),
        (axes[1], "main_thread_wall_ms", "wall ms (main thread: waits count)"),
    )
    for ax, key, label in panels:
        left = [0.0] * len(verbs)
        for n, stage in enumerate(STAGES):
            vals = [grouped(result[v][key]).get(stage, 0.0) for v in verbs]
            ax.barh(verbs, vals, left=left, color=colours[(2 * n) % 20 if n < 10 else 2 * (n - 10) + 1], label=stage)
            left = [a + b for a, b in zip(left, vals, strict=True)]
        totals = [result[v]["process_cpu_ms" if key == "stages_cpu_ms" else "process_wall_ms"] for v in verbs]
        ax.scatter(totals, verbs, marker="|", s=300, color="black", zorder=5, label="process (median)")
        ax.set_xlabel(label)
        ax.invert_yaxis()
    axes[1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"wrote {png}")
    return True


def leave_as_stackcheck_does(code: int) -> int:
    """The child ends as the `stackcheck` program does (stackcheck.cli.run): its output flushed, then
    os._exit without tearing the interpreter down, unless an atexit callback or a thread that is not a daemon
    waits for the exit (then the ordinary exit). So `start+exit` is what a user's run pays."""
    import atexit
    import threading

    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return code
    others = [t for t in threading.enumerate() if not t.daemon and t is not threading.main_thread()]
    if atexit._ncallbacks() or others:
        return code
    os._exit(code)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        rest = sys.argv[3:]
        return leave_as_stackcheck_does(child(sys.argv[2], rest[1:] if rest[:1] == ["--"] else rest))
    import argparse
    import json
    from pathlib import Path

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--verbs", default=",".join(DEFAULT_VERBS), help=f"from {', '.join(VERBS)}")
    ap.add_argument("--json", default=None, help="write the figures here (e.g. docs/perf-breakdown.json)")
    ap.add_argument("--png", default=None, help="draw the chart here (e.g. docs/perf-breakdown.png)")
    ap.add_argument("--machine", default=None, help="a few words saying which machine this is, for the chart")
    ap.add_argument("--from-json", default=None, help="no runs: print and draw the figures of a saved --json")
    args = ap.parse_args()
    if args.from_json:
        saved = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        print_table(saved["verbs"])
        if args.png:
            title = f"stackcheck: where the time goes ({saved['machine']}; medians of {saved['runs']} runs)"
            draw(saved["verbs"], args.png, title)
        return 0
    verbs = [v.strip() for v in args.verbs.split(",") if v.strip()]
    unknown = [v for v in verbs if v not in VERBS]
    if unknown:
        ap.error(f"unknown verb {unknown[0]!r}; known: {', '.join(VERBS)}")
    result = run_all(verbs, args.runs)
    print_table(result)
    machine = args.machine or f"{os.cpu_count()} cores, Python {sys.version.split()[0]}"
    doc = {
        "machine": machine,
        "runs": args.runs,
        "note": "medians of interleaved runs; stage CPU is exclusive and per thread (sums), stage wall overlaps "
        "across threads; start+exit = process CPU less what the hooks saw",
        "verbs": result,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    if args.png:
        draw(result, args.png, f"stackcheck: where the time goes ({machine}; medians of {args.runs} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
