"""The fiftieth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Fiftieth sample").
Run:

    PYTHONPATH=.:tests python bench/factcheck50_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the final stack's claims of `plan` and `recommend` (every
bench/factcheck*_drawn.json read first: the sixteenth drew four step-unblocks rows, the twenty-fifth and
twenty-seventh whole plans and recommend lines, the thirtieth recommend on GeForce boxes; no sample drew the
features a plan says its steps unblock on the boxes below, nor recommend's chosen options one by one): rows where
`plan` says that after its steps a feature is ok, where `plan --want F` answers with steps (F ok after them), and where
`recommend` says an option is chosen for the final stack (the launch starts and the option works there). Helper
ifc49 draws the newest rules beside this sample (its own seed); this draw does not aim at them.

Boxes: factcheck27_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma) with the
GPUs of BOXES (A100 8.0, L40S 8.9, H100 9.0, B200 10.0, B300 10.3, RTX PRO 6000 12.0: 8 GPUs, x86_64; GB10 12.1:
1 GPU, aarch64), each with every fourth final release installed (0.5.1, 0.5.5, ...: INSTALLED).

(u) `plan --facts F --format json` with no option and with `--to sglang==R` for each R of INSTALLED: one row per
    distinct (box, option, target, feature a step unblocks), labelled with the first installed release that gives it
    and the unblocking step's component;
(w) `plan --facts F --want X --format json` for each feature X the box's audit says is blocked: one row per distinct
    (box, feature, target) whose plan has steps and no error, labelled with the first installed release and the
    steps' components;
(r) `recommend --facts F --tp N --goal G --format json` (N the box's GPU count, G latency and throughput), without a
    model and with a DeepSeek R1 config (--model-path; gate_cli.DEEPSEEK_R1, our own file in the checkpoint's shape):
    one row per distinct (box, model, goal, stack, chosen decision, option, flags, env), labelled with the first
    installed release.

Draw: random.Random(20270119); per population the rows sorted by JSON text, shuffled, the first k (u 7, w 5, r 6),
18 rows; a row equal to one an earlier sample drew is left out. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck_draw import draw_undrawn, final_releases, stackcheck_json_or_error, write_models
from gate_cli import DEEPSEEK_R1

SEED = 20270119
# name: (GPU name, compute capability, machine, GPU count)
BOXES: dict[str, tuple[str, str, str, int]] = {
    "a100": ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64", 8),
    "l40s": ("NVIDIA L40S", "8.9", "x86_64", 8),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
    "b300": ("NVIDIA B300 SXM6 AC", "10.3", "x86_64", 8),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8),
    "gb10": ("NVIDIA GB10", "12.1", "aarch64", 1),
}
MODELS = {"deepseek-r1": DEEPSEEK_R1}


def _installed() -> list[str]:
    return final_releases()[::4]


def _add(seen: dict[str, dict[str, Any]], key: dict[str, Any], labels: dict[str, Any]) -> None:
    seen.setdefault(json.dumps(key, sort_keys=True), {**key, **labels})


def plan_rows(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Populations u and w."""
    unblocks: dict[str, dict[str, Any]] = {}
    wants: dict[str, dict[str, Any]] = {}
    installed = _installed()
    for box, spec in BOXES.items():
        for rel in installed:
            path = _box(out, rel, spec)
            for opt in [[]] + [["--to", f"sglang=={r}"] for r in installed]:
                plan = stackcheck_json_or_error(["plan", "--facts", str(path), *opt, "--format", "json"]).get("plan")
                for step in (plan or {}).get("steps") or []:
                    for feature in step.get("unblocks") or []:
                        key = {"pop": "u", "box": box, "option": " ".join(opt), "target": plan.get("target"),
                               "feature": feature}  # fmt: skip
                        _add(unblocks, key, {"sglang": rel, "step": step.get("component")})
            audit = stackcheck_json_or_error(["audit", "--facts", str(path), "--format", "json"])
            blocked = sorted(f["id"] for f in audit.get("features") or [] if f.get("status") == "blocked")
            for feature in blocked:
                doc = stackcheck_json_or_error(["plan", "--facts", str(path), "--want", feature, "--format", "json"])
                plan = doc.get("plan") or {}
                if doc.get("error") or not plan.get("steps"):
                    continue
                key = {"pop": "w", "box": box, "feature": feature, "target": plan.get("target")}
                _add(wants, key, {"sglang": rel, "steps": [s.get("component") for s in plan["steps"]]})
            print(f"u/w {box} {rel}: {len(unblocks)} / {len(wants)}", file=sys.stderr, flush=True)
    return list(unblocks.values()), list(wants.values())


def recommend_rows(out: Path) -> list[dict[str, Any]]:
    """Population r."""
    write_models(out, MODELS)
    seen: dict[str, dict[str, Any]] = {}
    for box, spec in BOXES.items():
        for rel in _installed():
            path = _box(out, rel, spec)
            for model in ("", "deepseek-r1"):
                for goal in ("latency", "throughput"):
                    args = ["recommend", "--facts", str(path), "--tp", str(spec[3]), "--goal", goal]
                    if model:
                        args += ["--model-path", str(out / "models" / model)]
                    doc = stackcheck_json_or_error([*args, "--format", "json"])
                    for c in doc.get("choices") or []:
                        if c.get("status") != "chosen":
                            continue
                        key = {"pop": "r", "box": box, "model": model, "goal": goal, "stack": doc.get("stack"),
                               "decision": c.get("decision"), "option": c.get("option"), "flags": c.get("flags"),
                               "env": c.get("env")}  # fmt: skip
                        _add(seen, key, {"sglang": rel})
        print(f"r {box}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    u, w = plan_rows(out)
    r = recommend_rows(out)
    draw_undrawn(out, SEED, [(7, u), (5, w), (6, r)], "factcheck50_drawn.json")


if __name__ == "__main__":
    main()
