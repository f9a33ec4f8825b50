"""The twenty-seventh fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Twenty-seventh sample").

    PYTHONPATH=. python bench/factcheck27_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the last stop merged (git log --first-parent 50bf5e7..ec70aec) that
the twenty-sixth sample did not reach, and at populations never sampled: SGLang 0.5.18-0.5.23's sgl-deep-ep pins
(1d3d7e8) where the gate allows `--moe-a2a-backend deepep` / `deepep_v2` and DeepEP's kernel-image and runtime hops
(404d4c0) on 9.0 / 10.0 / 10.3 / 12.0; audit's ok feature verdicts on 10.3 and 12.1 boxes with 0.5.20-0.5.23; the
Requires-Python / glibc filter of what `plan`, `plan --to`, `plan --want` (iplan's first run) and `recommend` tell a
user to install, on boxes whose Python (3.10-3.13) and glibc (2.28-2.39) no earlier sample varied.

Boxes: tests/cases/h200-newest with an SGLang release and its pins (factcheck7_draw.release_box: sgl-deep-ep at the
release's own pin from 0.5.18), factcheck23_draw's extra packages (bitsandbytes, nvidia-nvshmem for torch's CUDA
major, sgl-deep-ep built for torch's CUDA major, here at the release's pin) and libnuma found.

(a) `gate --dry-run --format json` (`--tp 8`) of each launch of LAUNCHES on GPU_BOXES' 8-GPU boxes (H100 9.0, B200
    10.0, B300 10.3, RTX PRO 6000 12.0) with every final release 0.5.18-0.5.23: one row per allow;
(b) `audit --facts F --format json` of AUDIT_BOXES (B300 10.3 x86_64 x8, GB10 12.1 aarch64 x1) with every final
    release 0.5.20-0.5.23: one row per distinct (box, feature, its reasons' rule / observed / result) whose status is
    ok, labelled with the first release that gives it;
(p) `plan --facts F --format json` with no option and with `--to sglang==R` for each final release 0.5.10-0.5.23, on
    the H200 box with 0.5.14 installed and its Python and glibc set to each of PYTHONS x GLIBCS: one row per distinct
    (python, glibc, option, target, steps as component / to / commands, or the one-line error);
(r) `recommend --facts F --tp 8 --format json` on the same sixteen boxes: one row per distinct (python, glibc, stack,
    steps, command line) that prints a command;
(w) `plan --facts F --want X --format json` on the same sixteen boxes for each feature X that audit says is blocked
    there: one row per distinct (python, glibc, feature, target, steps) whose plan has steps.

Model configs are factcheck23/26's (written in the published checkpoints' shape, not copied).
Draw: random.Random(20261227); per population its rows sorted by their JSON text, shuffled, the first k (a: 5, b: 2,
p: 4, r: 2, w: 2), 15 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck23_draw import _extra, _v
from factcheck26_draw import MODELS as _MODELS26
from factcheck_draw import (
    audit_ok_rows,
    draw,
    final_releases,
    gate_allow_rows,
    model_flag_launches,
    plan_steps,
    stackcheck_json,
    stackcheck_json_or_error,
    write_models,
)
from factcheck_draw import plan_rows as draw_plan_rows

SEED = 20261227
MODELS = {k: _MODELS26[k] for k in ("qwen3moe", "qwen3moe-fp8-block", "dsv3-fp8", "qwen3moe-w4afp8")}
_DEEPEP = "--moe-a2a-backend deepep --ep 8"
# name: (model, flags)
LAUNCHES: dict[str, tuple[str, str]] = {
    "deepep-bf16": ("qwen3moe", _DEEPEP),
    "deepep-fp8-block": ("qwen3moe-fp8-block", _DEEPEP),
    "deepep-dsv3-fp8": ("dsv3-fp8", _DEEPEP),
    "deepep-normal-bf16": ("qwen3moe", f"{_DEEPEP} --deepep-mode normal"),
    "deepep-ll-bf16": ("qwen3moe", f"{_DEEPEP} --deepep-mode low_latency"),
    "deepep-dsv3-dp-attn": ("dsv3-fp8", f"{_DEEPEP} --enable-dp-attention --dp 8"),
    "deepep-w4afp8": ("qwen3moe-w4afp8", _DEEPEP),
    "deepep-v2-bf16": ("qwen3moe", "--moe-a2a-backend deepep_v2 --ep 8"),
    "deepep-v2-dsv3-fp8": ("dsv3-fp8", "--moe-a2a-backend deepep_v2 --ep 8"),
}
# name: (GPU name, compute capability, machine, GPU count)
GPU_BOXES: dict[str, tuple[str, str, str, int]] = {
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
    "b300": ("NVIDIA B300 SXM6 AC", "10.3", "x86_64", 8),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8),
}
AUDIT_BOXES: dict[str, tuple[str, str, str, int]] = {
    "b300": GPU_BOXES["b300"],
    "gb10": ("NVIDIA GB10", "12.1", "aarch64", 1),
}
PYTHONS = ["3.10.12", "3.11.9", "3.12.3", "3.13.1"]
GLIBCS = ["2.28", "2.31", "2.35", "2.39"]
_NUMA = "libnuma.so.1"


def _box(out: Path, rel: str, box: tuple[str, str, str, int] | None, python: str = "", glibc: str = "") -> Path:
    """h200-newest with REL and its pins, the extra packages (sgl-deep-ep at REL's pin), BOX's GPUs and machine
    (None: the H200s as they are), and PYTHON / GLIBC where given."""
    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box("h200-newest", rel))
    facts = doc["facts"]
    pinned = (facts["packages"].get("sgl-deep-ep") or {}).get("version")
    extra = _extra(str(facts["packages"]["torch"].get("cuda") or ""), rel)
    if pinned:
        extra["sgl-deep-ep"] = {**extra["sgl-deep-ep"], "version": pinned, "dist_version": pinned}
    facts["packages"].update(extra)
    facts["cuda_libs"] = {_NUMA: f"/usr/lib/x86_64-linux-gnu/{_NUMA}"}
    tag = "h200"
    if box is not None:
        name, cc, machine, count = box
        tag = cc
        facts["gpus"] = facts["gpus"][:count]
        for g in facts["gpus"]:
            g["compute_capability"] = cc
            g["name"] = name
        topo = facts.get("topology")
        if isinstance(topo, dict):
            topo["gpu_count"] = count
            if isinstance(topo.get("pairs"), list):
                topo["pairs"] = [p for p in topo["pairs"] if p.get("a", 0) < count and p.get("b", 0) < count]
        facts["system"]["machine"] = machine
        if machine == "aarch64":
            facts["cuda_libs"] = {_NUMA: f"/usr/lib/aarch64-linux-gnu/{_NUMA}"}
    if python:
        facts["system"]["python"] = python
    if glibc:
        facts["system"]["glibc"] = glibc
    path = out / f"box-{tag}-{rel}-{python}-{glibc}.json"
    path.write_text(json.dumps(doc))
    return path


_run = stackcheck_json_or_error  # the name factcheck30_draw.py (and later samples) import


def _releases(first: tuple[int, ...]) -> list[str]:
    return [r for r in final_releases() if _v(r) >= first]


_steps = plan_steps


def gate_rows(out: Path) -> list[dict[str, Any]]:
    return gate_allow_rows(out, GPU_BOXES, _releases((0, 5, 18)), _box, model_flag_launches(LAUNCHES, "--tp", "8"))


def audit_rows(out: Path) -> list[dict[str, Any]]:
    return audit_ok_rows(AUDIT_BOXES, _releases((0, 5, 20)), lambda box, rel: _box(out, rel, AUDIT_BOXES[box]))


def _grid(out: Path) -> list[tuple[str, str, Path]]:
    return [(py, gl, _box(out, "0.5.14", None, py, gl)) for py in PYTHONS for gl in GLIBCS]


def plan_rows(out: Path) -> list[dict[str, Any]]:
    boxes = [({"python": py, "glibc": gl}, path) for py, gl, path in _grid(out)]
    return draw_plan_rows(boxes, _releases((0, 5, 10)), errors=True)


def recommend_rows(out: Path) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for py, gl, path in _grid(out):
        doc = _run(["recommend", "--facts", str(path), "--tp", "8", "--format", "json"])
        if not doc.get("command"):
            continue
        row = {"pop": "r", "python": py, "glibc": gl, "stack": doc.get("stack"),
               "steps": _steps(doc.get("plan") or {}), "command": doc.get("command")}  # fmt: skip
        seen.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"r: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def want_rows(out: Path) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for py, gl, path in _grid(out):
        audit = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
        blocked = sorted(f["id"] for f in audit.get("features") or [] if f.get("status") == "blocked")
        for feature in blocked:
            plan = _run(["plan", "--facts", str(path), "--want", feature, "--format", "json"]).get("plan") or {}
            if not plan.get("steps"):
                continue
            row = {"pop": "w", "python": py, "glibc": gl, "feature": feature, "target": plan.get("target"),
                   "steps": _steps(plan)}  # fmt: skip
            seen.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"w: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out)
    b = audit_rows(out)
    p = plan_rows(out)
    r = recommend_rows(out)
    w = want_rows(out)
    draw(out, SEED, [(5, a), (2, b), (4, p), (2, r), (2, w)])


if __name__ == "__main__":
    main()
