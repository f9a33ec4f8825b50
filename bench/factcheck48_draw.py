"""The forty-eighth fact-check sample's populations and seeded draw (tests/realworld/FACTCHECK.md, "Forty-eighth
sample"). Run:

    PYTHONPATH=.:tests python bench/factcheck48_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew (every bench/factcheck*_drawn.json read): the
features of manifests/features.json no drawn row names (F_FEATURES: moe-a2a-deepep, attention-fa3,
attention-trtllm-mla, mxfp8, attention-hpc-ops, attention-qsa, attention-dsa-flashmla-kv, attention-dsa-fa3,
memory-saver, lmcache-sglang-adapter) and the stack checks of manifests/checks.json no drawn row names, the oldest of
them (K_CHECKS: checks.json's first 29 entries, driver-vs-torch-cuda to image-nvidia-require, less those drawn); the
newest rules (the last sessions') are helper ifc47's draw (seed 20270116), not this one. A row equal to
one an earlier sample drew is left out.

Boxes: factcheck27_draw._box (tests/cases/h200-newest with the release's pins, the extra packages, libnuma) with the
GPUs of F_BOXES (A100 8.0, A10 8.6, L40S 8.9, H100 9.0, B200 10.0, B300 10.3, RTX PRO 6000 12.0; 8 GPUs, x86_64).

(f) `audit --facts F --format json` of each box of F_BOXES with every second final release (0.5.1, 0.5.3, ...,
    0.5.23): one row per distinct (box, feature, its reasons' rule / observed / result) whose status is ok, for the
    features of F_FEATURES, labelled with the first release that gives it;
(k) the same audits and `audit` of every recorded case (tests/cases/*/facts.json as it is): one row per distinct (box,
    check, its reasons' rule / observed / result) whose status is ok, for the checks of K_CHECKS, labelled with the
    first release (or the case) that gives it;
(g) `gate --dry-run --format json` of each launch of G_LAUNCHES (--attention-backend fa3 / trtllm_mla / hpc_ops,
    --enable-memory-saver, --quantization mxfp8, the DSA decode backends fa3 / flashmla_kv) on the boxes of F_BOXES
    with every third final release (0.5.1, 0.5.4, ...): one row per allow.

Draw: random.Random(20270117); per population the rows sorted by JSON text, shuffled, the first k (f 8, k 6, g 4),
18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck27_draw import _box
from factcheck_draw import (
    ROOT,
    draw_undrawn,
    final_releases,
    gate_allow_rows,
    model_flag_launches,
    stackcheck_json_or_error,
    write_models,
)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, LLAMA3

SEED = 20270117

F_FEATURES = (
    "moe-a2a-deepep", "attention-fa3", "attention-trtllm-mla", "mxfp8", "attention-hpc-ops", "attention-qsa",
    "attention-dsa-flashmla-kv", "attention-dsa-fa3", "memory-saver", "lmcache-sglang-adapter",
)  # fmt: skip
K_CHECKS = (
    "driver-vs-torch-cuda", "sgl-kernel-cuda", "sgl-kernel-torch-abi", "sglang-requires-python",
    "flashinfer-cubin-match", "flashinfer-torch-pair", "mixed-gpus", "gpu-fabric-state", "shared-libs",
    "deepgemm-arch", "kernel-release-known", "sgl-kernel-torch-pair-old", "nccl", "pcie-p2p-path", "driver-api",
    "cudnn-torch", "gpu-peer-access", "image-nvidia-require",
)  # fmt: skip
# name: (GPU name, compute capability, machine, GPU count)
F_BOXES: dict[str, tuple[str, str, str, int]] = {
    "a100": ("NVIDIA A100-SXM4-80GB", "8.0", "x86_64", 8),
    "a10": ("NVIDIA A10", "8.6", "x86_64", 8),
    "l40s": ("NVIDIA L40S", "8.9", "x86_64", 8),
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
    "b300": ("NVIDIA B300 SXM6 AC", "10.3", "x86_64", 8),
    "pro6000": ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0", "x86_64", 8),
}
MODELS = {"llama3": LLAMA3, "deepseek-r1": DEEPSEEK_R1, "deepseek-v32": DEEPSEEK_V32}
# name: (model, flags)
G_LAUNCHES: dict[str, tuple[str, str]] = {
    "fa3-llama": ("llama3", "--tp 8 --attention-backend fa3"),
    "trtllm-mla-r1": ("deepseek-r1", "--tp 8 --attention-backend trtllm_mla"),
    "hpc-ops-llama": ("llama3", "--tp 8 --attention-backend hpc_ops"),
    "memory-saver-llama": ("llama3", "--tp 8 --enable-memory-saver"),
    "mxfp8-llama": ("llama3", "--tp 8 --quantization mxfp8"),
    "dsa-decode-fa3": ("deepseek-v32", "--tp 8 --nsa-decode-backend fa3"),
    "dsa-decode-flashmla-kv": ("deepseek-v32", "--tp 8 --nsa-decode-backend flashmla_kv"),
    "dsa-decode-fa3-new": ("deepseek-v32", "--tp 8 --dsa-decode-backend fa3"),
    "dsa-decode-flashmla-kv-new": ("deepseek-v32", "--tp 8 --dsa-decode-backend flashmla_kv"),
}


def _reasons(entry: dict[str, Any]) -> list[list[Any]]:
    return [[r.get("rule"), r.get("observed"), r.get("result")] for r in entry.get("reasons") or []]


def audit_rows(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Populations f and k: one audit per (box, release) and per recorded case."""
    feats: dict[str, dict[str, Any]] = {}
    checks: dict[str, dict[str, Any]] = {}
    audits: list[tuple[dict[str, Any], Path]] = []
    for box, spec in F_BOXES.items():
        for rel in final_releases()[::2]:
            audits.append(({"box": box, "sglang": rel}, _box(out, rel, spec)))
    for case in sorted((ROOT / "tests/cases").glob("*/facts.json")):
        audits.append(({"box": "case:" + case.parent.name, "sglang": None}, case))
    for tags, path in audits:
        doc = stackcheck_json_or_error(["audit", "--facts", str(path), "--format", "json"])
        box = tags["box"]
        for f in doc.get("features") or []:
            if f.get("status") == "ok" and f.get("id") in F_FEATURES:
                row = {"pop": "f", "box": box, "feature": f["id"], "reasons": _reasons(f)}
                feats.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": tags["sglang"]})
        for c in doc.get("checks") or []:
            if c.get("status") == "ok" and c.get("id") in K_CHECKS:
                row = {"pop": "k", "box": box, "check": c["id"], "reasons": _reasons(c)}
                checks.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": tags["sglang"]})
        print(f"f/k {box} {tags['sglang']}: {len(feats)} / {len(checks)}", file=sys.stderr, flush=True)
    return list(feats.values()), list(checks.values())


def launch_rows(out: Path) -> list[dict[str, Any]]:
    write_models(out, MODELS)
    releases = final_releases()[::3]
    return gate_allow_rows(
        out,
        F_BOXES,
        releases,
        _box,
        model_flag_launches(G_LAUNCHES),
        pop="g",
    )


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    feats, checks = audit_rows(out)
    pops = [(8, feats), (6, checks), (4, launch_rows(out))]
    draw_undrawn(out, SEED, pops, "factcheck48_drawn.json")


if __name__ == "__main__":
    main()
