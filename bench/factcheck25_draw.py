"""The twenty-fifth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Twenty-fifth sample").

    PYTHONPATH=. python bench/factcheck25_draw.py OUT_DIR

Fixed before any row was checked. Aimed at claims no earlier sample drew much of: what `plan`, `plan --want F`,
`plan --to sglang==R` and `recommend` tell a user to install (the target stack's releases and pins, the commands, the
CUDA build tags), and `audit`'s ok verdicts of the stack checks (not features) on boxes of compute capability 8.6,
9.0, 10.0, 12.0 and 12.1 with drivers 550-590 and torch wheels of CUDA 12.4-13.0 (the releases' own pins).

Boxes: tests/cases/h200-newest with every final SGLang release 0.5.1-0.5.23 and its pins (factcheck7_draw.release_box,
torch's PyPI build), its GPUs renamed and set to one of BOXES' capabilities, its machine and driver set as there.

(p) `plan --facts F --format json`: with no option, with `--to sglang==R` for each final release R, and with `--want F`
    for each feature the audit of that box says is blocked; on each box of BOXES with every other final release
    (0.5.1, 0.5.3, ..., 0.5.23) installed: one row per distinct (box, option, target, steps as component / to /
    commands, the features each step unblocks), labelled with the first installed release that gives it;
(r) `recommend --facts F --tp 8 --format json` (`--tp 1` on the one-GPU GB10) on the same boxes and releases: one row
    per distinct (box, stack, plan steps as component / to / commands, command line, env);
(b) `audit --facts F --format json` of every box of BOXES with every final release 0.5.1-0.5.23 and its pins, and
    the driver of each of DRIVERS: one row per distinct (GPU capability, machine, check, its reasons' rule / observed /
    result) whose status is ok, labelled with the first (box, release, driver) that gives it.

Draw: random.Random(20261225); per population its rows sorted by their JSON text, shuffled, the first k (p: 9, r: 3,
b: 6), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import draw, final_releases, stackcheck_json

SEED = 20261225
# name: (GPU name, compute capability, machine, GPU count, driver version, driver CUDA)
BOXES: dict[str, tuple[str, str, str, int, str, str]] = {
    "a6000": ("NVIDIA RTX A6000", "8.6", "x86_64", 4, "550.163.01", "12.4"),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8, "560.35.05", "12.6"),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8, "570.172.08", "12.8"),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8, "575.57.08", "12.9"),
    "gb10": ("NVIDIA GB10", "12.1", "aarch64", 1, "580.95.05", "13.0"),
}
DRIVERS: list[tuple[str, str]] = [
    ("550.163.01", "12.4"),
    ("560.35.05", "12.6"),
    ("570.172.08", "12.8"),
    ("575.57.08", "12.9"),
    ("580.95.05", "13.0"),
    ("590.44.01", "13.1"),
]


def _box(out: Path, box: str, rel: str, driver: tuple[str, str] | None = None) -> Path:
    from factcheck7_draw import release_box

    name, cc, machine, count, dver, dcuda = BOXES[box]
    if driver is not None:
        dver, dcuda = driver
    doc = copy.deepcopy(release_box("h200-newest", rel))
    facts = doc["facts"]
    facts["gpus"] = facts["gpus"][:count]
    for g in facts["gpus"]:
        g["compute_capability"] = cc
        g["name"] = name
    if isinstance(facts.get("topology"), dict):
        topo = facts["topology"]
        topo["gpu_count"] = count
        if isinstance(topo.get("pairs"), list):
            topo["pairs"] = [p for p in topo["pairs"] if p.get("a", 0) < count and p.get("b", 0) < count]
    facts["system"]["machine"] = machine
    facts["driver"].update(version=dver, cuda=dcuda, nvml_version=f"{dcuda.split('.')[0]}.{dver}")
    path = out / f"box-{box}-{rel}-{dver}.json"
    path.write_text(json.dumps(doc))
    return path


def _steps(plan: dict[str, Any]) -> list[list[Any]]:
    return [[s.get("component"), s.get("to"), s.get("commands"), sorted(s.get("unblocks") or [])]
            for s in plan.get("steps") or []]  # fmt: skip


def plan_rows(out: Path, releases: list[str]) -> list[dict[str, Any]]:
    finals = final_releases()
    seen: dict[str, dict[str, Any]] = {}
    for box in BOXES:
        for rel in releases:
            path = _box(out, box, rel)
            audit = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
            blocked = sorted(f["id"] for f in audit.get("features") or [] if f.get("status") == "blocked")
            options = [[]] + [["--to", f"sglang=={r}"] for r in finals] + [["--want", f] for f in blocked]
            for opt in options:
                doc = stackcheck_json(["plan", "--facts", str(path), *opt, "--format", "json"])
                plan = doc.get("plan") or {}
                if not plan.get("steps"):
                    continue
                row = {"pop": "p", "box": box, "option": " ".join(opt), "target": plan.get("target"),
                       "steps": _steps(plan)}  # fmt: skip
                seen.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"p {box}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def recommend_rows(out: Path, releases: list[str]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for box in BOXES:
        tp = str(BOXES[box][3])
        for rel in releases:
            path = _box(out, box, rel)
            doc = stackcheck_json(["recommend", "--facts", str(path), "--tp", tp, "--format", "json"])
            if not doc.get("command"):
                continue
            row = {"pop": "r", "box": box, "stack": doc.get("stack"), "steps": _steps(doc.get("plan") or {}),
                   "command": doc.get("command"), "env": doc.get("env")}  # fmt: skip
            seen.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"r {box}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def audit_rows(out: Path) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for box, (_name, cc, machine, *_rest) in BOXES.items():
        for rel in final_releases():
            for driver in DRIVERS:
                path = _box(out, box, rel, driver)
                doc = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
                for c in doc.get("checks") or []:
                    if c.get("status") != "ok":
                        continue
                    reasons = [[r.get("rule"), r.get("observed"), r.get("result")] for r in c.get("reasons") or []]
                    row = {"pop": "b", "cc": cc, "machine": machine, "check": c.get("id"), "reasons": reasons}
                    seen.setdefault(json.dumps(row, sort_keys=True), {**row, "box": box, "sglang": rel,
                                                                      "driver": driver[0]})  # fmt: skip
        print(f"b {box}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    every_other = final_releases()[::2]
    p = plan_rows(out, every_other)
    r = recommend_rows(out, every_other)
    b = audit_rows(out)
    draw(out, SEED, [(9, p), (3, r), (6, b)])


if __name__ == "__main__":
    main()
