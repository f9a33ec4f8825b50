"""Record every document the command line writes for the case folders, so that a refactor can be checked
byte for byte: each verb in each of its formats on every facts file of tests/cases, tests/plan_cases,
tests/recommend and tests/realworld (and explain, triage, diff, fleet, facts and manifests around them),
with the exit status, standard output, standard error and any file written by --output or --plan-facts.

    PYTHONPATH=$PWD .venv/bin/python bench/record_outputs.py /tmp/before
    ... change the code ...
    PYTHONPATH=$PWD .venv/bin/python bench/record_outputs.py /tmp/after
    PYTHONPATH=$PWD .venv/bin/python bench/record_outputs.py --compare /tmp/before /tmp/after

The commands run in this process (stackcheck.cli.main) with the clock fixed (a facts file without a `host`
gets `collected_at` from stackcheck.documents.report.now_utc; the Prometheus timestamp of a report without a readable
one comes from render/prometheus.py's clock), the SGLANG_/STACKCHECK_ variables removed and COLUMNS
unset unless a run sets it; nothing probes this box except `explain` without --assume-gpu, which is not run.
--compare prints every file that differs or exists on one side only, and exits 1 when there is one."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import fcntl
import io
import itertools
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GROUPS = ("cases", "plan_cases", "recommend", "realworld")
FIXED_TIME = "2026-01-01T00:00:00Z"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "MODEL"]


def case_folders() -> list[tuple[str, Path, Path, dict[str, Any]]]:
    """(group, folder, facts file, options.json) for every case folder with facts."""
    out = []
    for group in GROUPS:
        for folder in sorted(p for p in (ROOT / "tests" / group).iterdir() if p.is_dir()):
            opts_file = folder / "options.json"
            opts = json.loads(opts_file.read_text()) if opts_file.is_file() else {}
            facts = ROOT / opts.pop("facts_file") if "facts_file" in opts else folder / "facts.json"
            if facts.is_file():
                out.append((group, folder, facts, opts))
    return out


class Recorder:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.runs = 0

    def run(self, name: str, argv: list[str], columns: int | None = None, files: tuple[str, ...] = ()) -> str:
        """Run `stackcheck ARGV` here and write what it said to OUT/NAME; returns standard output."""
        from stackcheck.cli import main

        stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)
        stderr = io.StringIO()
        if columns:
            os.environ["COLUMNS"] = str(columns)
        old_out, old_err = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = stdout, stderr  # type: ignore[assignment]
        try:
            rc = main(argv)
        except SystemExit as exc:  # --help
            rc = exc.code if isinstance(exc.code, int) else 0
        finally:
            sys.stdout, sys.stderr = old_out, old_err
            os.environ.pop("COLUMNS", None)
        stdout.flush()
        text = stdout.buffer.getvalue().decode("utf-8", errors="backslashreplace")  # type: ignore[attr-defined]
        record = [f"$ stackcheck {' '.join(argv)}", f"exit {rc}", "--- stdout", text, "--- stderr", stderr.getvalue()]
        for f in files:
            path = Path(f)
            body = path.read_text(encoding="utf-8", errors="backslashreplace") if path.is_file() else "(none)\n"
            record += [f"--- file {path.name}", body]
            path.unlink(missing_ok=True)
        target = self.out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(record), encoding="utf-8", errors="backslashreplace")
        self.runs += 1
        return text


def record(out: Path) -> int:
    import stackcheck.documents.report
    import stackcheck.render.prometheus

    stackcheck.documents.report.now_utc = lambda: FIXED_TIME  # type: ignore[assignment]
    # a report whose collected_at is unreadable is stamped with the time of rendering
    stackcheck.render.prometheus.time = type("FixedClock", (), {"time": staticmethod(lambda: 1767225600.0)})
    for key in [k for k in os.environ if k.startswith(("SGLANG_", "STACKCHECK_", "NO_COLOR"))]:
        del os.environ[key]
    os.environ.pop("COLUMNS", None)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    rec = Recorder(out)
    # a fixed place for the files the runs write: their paths are in the outputs (fleet's inputs, a command);
    # two recordings at once (two worktrees on one box) would delete each other's files: the second waits
    work = Path(tempfile.gettempdir()) / "stackcheck-record-outputs"
    lock = open(str(work) + ".lock", "w")  # noqa: SIM115 (held until the process ends)
    fcntl.flock(lock, fcntl.LOCK_EX)
    shutil.rmtree(work, ignore_errors=True)
    scratch = work / "scratch"
    reports = work / "reports"
    scratch.mkdir(parents=True)
    reports.mkdir()
    started = time.perf_counter()
    folders = case_folders()
    for group, folder, facts, opts in folders:
        base = f"{group}/{folder.name}"
        f = ["--facts", str(facts)]
        assume = []
        for key in ("assume_gpu", "assume_driver", "assume_interconnect"):
            if opts.get(key):
                assume += [f"--{key.replace('_', '-')}", str(opts[key])]
        # audit: every format; the human ones with --sources and at 80 columns too
        for fmt in ("text", "json", "markdown", "prometheus", "nfd"):
            rec.run(f"{base}/audit-{fmt}", ["audit", *f, *assume, "--format", fmt])
        for fmt in ("text", "markdown"):
            rec.run(f"{base}/audit-{fmt}-sources", ["audit", *f, *assume, "--format", fmt, "--sources"])
        rec.run(f"{base}/audit-text-80", ["audit", *f, *assume], columns=80)
        report = reports / f"{group}--{folder.name}.json"
        rec.run(f"{base}/audit-json-output", ["audit", *f, *assume, "--format", "json", "--output", str(report)])
        if group == "cases":
            what_if = ["--assume-gpu", "10.0x8", "--assume-driver", "580", "--assume-interconnect", "nvlink"]
            for fmt in ("text", "json"):
                rec.run(f"{base}/audit-assumed-{fmt}", ["audit", *f, *what_if, "--format", fmt])
        # probe
        for fmt in ("text", "json", "markdown"):
            rec.run(f"{base}/probe-{fmt}", ["probe", *f, "--format", fmt])
        # plan, with the case's request
        request: list[str] = []
        if opts.get("want"):
            request += ["--want", *opts["want"]]
        for h in opts.get("hold") or []:
            request += ["--hold", h]
        to = opts.get("to") or {}
        for item in to.items() if isinstance(to, dict) else []:
            request += ["--to", f"{item[0]}=={item[1]}"]
        for item in to if isinstance(to, list) else []:
            request += ["--to", item]
        for fmt in ("text", "json", "markdown"):
            rec.run(f"{base}/plan-{fmt}", ["plan", *f, *assume, *request, "--format", fmt])
        rec.run(f"{base}/plan-text-sources-80", ["plan", *f, *assume, *request, "--sources"], columns=80)
        # recommend, with the case's options; the facts after the plan; a given launch
        rq: list[str] = []
        for h in opts.get("hold") or []:
            rq += ["--hold", h]
        for t in opts.get("to") or [] if isinstance(opts.get("to"), list) else []:
            rq += ["--to", t]
        for key in ("tp", "goal", "assume_quantization"):
            if opts.get(key):
                rq += [f"--{key.replace('_', '-')}", str(opts[key])]
        if opts.get("assume_p2p_hang"):
            rq.append("--assume-p2p-hang")
        for fmt in ("text", "json", "shell"):
            rec.run(f"{base}/recommend-{fmt}", ["recommend", *f, *rq, "--format", fmt])
        after = scratch / "after.json"
        rec.run(f"{base}/recommend-plan-facts", ["recommend", *f, *rq, "--plan-facts", str(after)], files=(str(after),))
        rec.run(f"{base}/recommend-no-plan", ["recommend", *f, "--no-plan", "--format", "json"])
        rec.run(f"{base}/recommend-command", ["recommend", *f, "--format", "text", "--", *LAUNCH])
        # gate: a dry run of launches, and --require without a command
        gpus = len(json.loads(facts.read_text()).get("facts", {}).get("gpus") or []) or 1
        launches = {
            "plain": LAUNCH,
            "symm": [*LAUNCH, "--tp", str(gpus), "--enable-torch-symm-mem"],
            "fp8": [*LAUNCH, "--tp", str(gpus), "--quantization", "fp8", "--attention-backend", "fa3"],
        }
        for lname, cmd in launches.items():
            for fmt in ("text", "json"):
                rec.run(f"{base}/gate-{lname}-{fmt}", ["gate", *f, "--dry-run", "--format", fmt, "--", *cmd])
        rec.run(f"{base}/gate-symm-text-80-verbose", ["gate", *f, "-v", "--dry-run", "--", *launches["symm"]], 80)
        rec.run(f"{base}/gate-allow", ["gate", *f, "--allow-unknown", "--dry-run", "--advise", "--", *launches["fp8"]])
        for fmt in ("text", "json"):
            req = ["gate", *f, "--require", "torch-symm-mem,custom-allreduce", "cuda-graph", "--format", fmt]
            rec.run(f"{base}/gate-require-{fmt}", req)
        # triage, where there is a log
        log = folder / "server.log"
        if log.is_file():
            for fmt in ("text", "json"):
                rec.run(f"{base}/triage-{fmt}", ["triage", str(log), "--format", fmt])
                rec.run(f"{base}/triage-facts-{fmt}", ["triage", str(log), *f, "--format", fmt])
        rec.run(f"{base}/facts-check", ["facts", "check", str(facts)])

    # explain: every feature on three architectures, and on every one (a box without GPUs)
    from stackcheck.knowledge.loader import load

    features = [str(x.get("id")) for x in load([], env={}).features]
    no_gpu = ROOT / "tests" / "cases" / "no-driver" / "facts.json"
    rec.run("explain/list", ["explain", "--list"])
    for fid in features:
        for gpu in ("9.0x8", "12.0x2", "10.0"):
            for fmt in ("text", "json"):
                rec.run(f"explain/{fid}-{gpu}-{fmt}", ["explain", fid, "--assume-gpu", gpu, "--format", fmt])
        rec.run(f"explain/{fid}-every-text-sources", ["explain", fid, "--facts", str(no_gpu), "--sources"], 80)
        rec.run(f"explain/{fid}-every-json", ["explain", fid, "--facts", str(no_gpu), "--format", "json"])

    # diff: consecutive case folders, as saved audits and as facts judged now
    names = [(g, p, fa) for g, p, fa, _ in folders if g in ("cases", "plan_cases")]
    for (g1, p1, f1), (g2, p2, f2) in itertools.pairwise(names):
        a = reports / f"{g1}--{p1.name}.json"
        b = reports / f"{g2}--{p2.name}.json"
        for fmt in ("text", "json", "markdown"):
            rec.run(f"diff/{p1.name}--{p2.name}-{fmt}", ["diff", str(a), str(b), "--format", fmt])
        rec.run(f"diff/{p1.name}--{p2.name}-facts-rejudge", ["diff", str(f1), str(f2), "--rejudge", "--format", "json"])

    # fleet: every saved audit, and since the cases alone
    cases_only = scratch / "cases"
    cases_only.mkdir()
    for r in sorted(reports.glob("cases--*.json")):
        shutil.copy(r, cases_only / r.name)
    for fmt in ("text", "json", "markdown", "csv"):
        rec.run(f"fleet/all-{fmt}", ["fleet", str(reports), "--jobs", "1", "--format", fmt])
        rec.run(f"fleet/since-{fmt}", ["fleet", str(reports), "--since", str(cases_only), "--jobs", "1",
                                        "--format", fmt])  # fmt: skip
    rec.run("fleet/bad-inputs-text", ["fleet", str(ROOT / "tests" / "plan_cases"), "--jobs", "1"])

    from stackcheck.cli import COMMANDS

    rec.run("help/stackcheck", ["--help"])
    for verb in COMMANDS:
        rec.run(f"help/{verb}", [verb, "--help"])
    rec.run("manifests/validate", ["manifests", "validate"])
    rec.run("facts/template", ["facts", "template"])
    if not (reports / f"{folders[0][0]}--{folders[0][1].name}.json").is_file():
        raise SystemExit(f"{work} was emptied during the recording (another recording without the lock?)")
    shutil.rmtree(work)
    lock.close()
    print(f"{rec.runs} runs recorded under {out} in {time.perf_counter() - started:.0f} s")
    return 0


def compare(a: Path, b: Path) -> int:
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    problems = 0
    for rel in sorted(files_a ^ files_b):
        print(f"only in {a if rel in files_a else b}: {rel}")
        problems += 1
    for rel in sorted(files_a & files_b):
        ta, tb = (a / rel).read_bytes(), (b / rel).read_bytes()
        if ta != tb:
            problems += 1
            print(f"differs: {rel}")
            lines = difflib.unified_diff(
                ta.decode(errors="replace").splitlines(), tb.decode(errors="replace").splitlines(), lineterm="", n=1
            )
            for line in list(lines)[:40]:
                print(f"    {line}")
    print(f"{len(files_a & files_b)} files compared, {problems} difference(s)")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", nargs="?", help="the folder to record into (emptied first)")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two recordings")
    args = parser.parse_args()
    if args.compare:
        return compare(Path(args.compare[0]), Path(args.compare[1]))
    if not args.out:
        parser.error("give the folder to record into, or --compare A B")
    with contextlib.chdir(ROOT) if hasattr(contextlib, "chdir") else contextlib.nullcontext():
        return record(Path(args.out).resolve())


if __name__ == "__main__":
    raise SystemExit(main())
