"""Where the instructions of a first-run `plan` go, by phase: callgrind counts of one run of a tree, cut at the entry
and exit of the planner's and the pipeline's steps (issue 21; bench/first_run_ir.py gives the totals A against B).

    python bench/phase_ir.py [--tree .] [-- PLAN ARGS...]    (default: plan --facts writeup-after --want torch-symm-mem)

The row runs once to keep what a first run keeps (the manifests' twins), its kept answer (answer/) is removed, then it
runs under `valgrind --tool=callgrind` in a child that wraps the steps named in STEPS: each entry and exit asks
callgrind for a dump (CALLGRIND_DUMP_STATS_AT, from a small C helper built here with cc into a temporary directory),
so each dump holds the instructions since the one before. Prints, per step, the instructions spent between its entry
and its exit (inclusive; a step is counted once however often it runs, recursion aside: no step here calls itself),
and the imports before the command. Each dump costs some instructions itself (a few thousand; a step called hundreds
of times reads high by that much). Needs valgrind, its headers (valgrind/callgrind.h) and cc. Standard library only."""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import subprocess
import sys
import tempfile

HELPER = "#include <valgrind/callgrind.h>\nvoid mark(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }\n"
#: (module, attribute path, label): the steps wrapped in the child
STEPS = [
    ("stackcheck.assembly.plan_cache", "answer_for", "answer key (answer_for)"),
    ("stackcheck.assembly.pipeline", "build_report", "build_report"),
    ("stackcheck.assembly.pipeline", "gather", "  facts file (gather)"),
    ("stackcheck.facts.schema_check", "check_facts", "    facts check (check_facts)"),
    ("stackcheck.verdicts.engine", "prepare", "  features/checks loaded, rule shapes (prepare)"),
    ("stackcheck.facts.implied", "apply", "  implied versions (implied.apply)"),
    ("stackcheck.plan.planner", "plan_and_facts", "planner (plan_and_facts)"),
    ("stackcheck.plan.hypothetical", "Engine.__init__", "  Engine()"),
    ("stackcheck.plan.planner", "_wanted_target", "  _wanted_target"),
    ("stackcheck.plan.planner", "_default_target", "  _default_target"),
    ("stackcheck.plan.planner", "plan_steps", "  plan_steps"),
    ("stackcheck.plan.planner", "_upstream_ok", "  _upstream_ok"),
    ("stackcheck.plan.hypothetical", "Engine.checks_failing_on", "  checks_failing_on"),
    ("stackcheck.render.text", "render_plain", "text (render_plain)"),
    ("stackcheck.commands.arguments", "emit", "emit"),
]
CHILD = r"""
import ctypes, gc, importlib, os, sys
gc.disable()
_mark = ctypes.CDLL(sys.argv[1]).mark
_mark.argtypes = [ctypes.c_char_p]
n = [0]
def mark(label):
    n[0] += 1
    _mark(f"{n[0]:05d} {label}".encode())
steps = [s.split("|") for s in sys.argv[2].split(";")]
sys.argv = ["stackcheck", *sys.argv[3:]]
mark("start")
import stackcheck.cli
import stackcheck.commands.plan, stackcheck.plan.planner, stackcheck.plan  # (imported before they are wrapped)
mark("imports")
def wrap(owner, name, label):
    real = getattr(owner, name)
    def wrapped(*a, **k):
        mark("enter " + label)
        try:
            return real(*a, **k)
        finally:
            mark("exit " + label)
    setattr(owner, name, wrapped)
for module, path, label in steps:
    owner = importlib.import_module(module)
    *outer, name = path.split(".")
    for part in outer:
        owner = getattr(owner, part)
    wrap(owner, name, label)
# the names the callers imported: rebound to the wrapped ones
import stackcheck.assembly.pipeline as pipeline, stackcheck.plan.planner as planner
stackcheck.commands.plan.build_report = pipeline.build_report
stackcheck.plan.make_plan = lambda *a, **k: planner.plan_and_facts(*a, **k)[0]
stackcheck.commands.plan.emit = importlib.import_module("stackcheck.commands.arguments").emit
_exit = os._exit
def leave(code):
    mark("exit")
    _exit(code)
os._exit = leave
stackcheck.cli.run()
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=".")
    ap.add_argument("args", nargs="*", help="the plan command line (after --)")
    args = ap.parse_args()
    row = args.args or ["plan", "--facts", "tests/cases/writeup-after/facts.json", "--want", "torch-symm-mem"]
    if shutil.which("valgrind") is None or shutil.which("cc") is None:
        print("needs valgrind and cc", file=sys.stderr)
        return 2
    tree = os.path.abspath(args.tree)
    with tempfile.TemporaryDirectory(prefix="phase-ir-") as tmp:
        lib = os.path.join(tmp, "libmark.so")
        with open(os.path.join(tmp, "mark.c"), "w", encoding="utf-8") as fh:
            fh.write(HELPER)
        built = subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", lib, os.path.join(tmp, "mark.c")],
                               capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        if built.returncode != 0:
            print(f"cannot build the helper (valgrind/callgrind.h?): {built.stderr[-300:]}", file=sys.stderr)
            return 2
        env = {**os.environ, "PYTHONPATH": tree, "STACKCHECK_CACHE_DIR": os.path.join(tmp, "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        warm = [sys.executable, "-m", "stackcheck", *row]
        subprocess.run(warm, capture_output=True, env=env, cwd=tree, timeout=300, check=False)
        shutil.rmtree(os.path.join(tmp, "cache", "answer"), ignore_errors=True)
        steps = ";".join(f"{m}|{p}|{label.strip()}" for m, p, label in STEPS)
        out = os.path.join(tmp, "cg.out")
        argv = [sys.executable, "-c", CHILD, lib, steps, *row]
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
                       capture_output=True, env=env, cwd=tree, timeout=900, check=False)  # fmt: skip
        dumps: list[tuple[str, int]] = []
        for path in glob.glob(out + "*"):
            trigger, total = "~ the exit", 0
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    if line.startswith("desc: Trigger: Client Request: "):
                        trigger = line.split(": ", 3)[3].strip()
                    elif line.startswith("summary:"):
                        total = int(line.split()[1])
            dumps.append((trigger, total))
    dumps.sort()
    if len(dumps) < 3:
        print("callgrind wrote no dumps (did the run fail?)", file=sys.stderr)
        return 1
    inclusive: dict[str, int] = {}
    open_steps: list[str] = []
    for trigger, total in dumps:  # a dump holds what ran before its mark, since the previous one
        for label in set(open_steps):
            inclusive[label] = inclusive.get(label, 0) + total
        name = trigger[6:]
        if name.startswith("enter "):
            open_steps.append(name[6:])
        elif name.startswith("exit ") and name[5:] in open_steps:
            open_steps.remove(name[5:])
    by_label = {label.strip(): label for _, _, label in STEPS}
    whole = sum(t for _, t in dumps)
    before = sum(t for trig, t in dumps if trig[6:] in ("start", "imports"))
    print(f"{' '.join(row)} (tree {tree})")
    print(f"{whole / 1e6:9.1f} M  the whole process (callgrind)")
    print(f"{before / 1e6:9.1f} M  before the command: the interpreter, the child's ctypes, stackcheck's imports")
    for label, count in inclusive.items():
        print(f"{count / 1e6:9.1f} M  {by_label.get(label, label)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
