"""The thirtieth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Thirtieth sample").

    PYTHONPATH=. python bench/factcheck30_draw.py OUT_DIR

Fixed before any row was checked. Aimed at populations no earlier sample drew (every sample's heading and rule read
in FACTCHECK.md): speculative decoding WITH a draft model was drawn on SM12x (eighteenth) and as six fixed launches
with the default attention backend (twenty-first, both draws), NGRAM x attention x KV on Hopper / Blackwell
(twenty-ninth); never EAGLE-3 with its draft x each attention backend x KV dtype x top-k on Hopper and Blackwell.
`recommend` was drawn on NVLink boxes, the recorded PCIe cases (2x RTX PRO 6000, 1x RTX 5090, 1x GB10) and the
Python / glibc grid (seventh, tenth-thirteenth, fifteenth, seventeenth, twenty-fifth, twenty-seventh); never on
multi-GPU GeForce boxes whose GPUs have no peer-to-peer access (RTX 3090 / 4090 / 5090). The twenty-eighth and
twenty-ninth samples' populations (LoRA / HiCache / PD / multimodal allows, 0.5.1-0.5.9 audits on 8.0-9.0, DSA DCP,
HiSparse, GLM-5, NIXL / Mooncake, NGRAM) are left out.

Boxes: bench/factcheck27_draw._box (tests/cases/h200-newest with the release and its pins, factcheck23_draw's extra
packages, libnuma found) with its GPUs renamed and set to a compute capability and count.

(s) `gate --dry-run --format json --tp 8` of a Llama 3 8B with `--speculative-algorithm EAGLE3
    --speculative-draft-model-path` an EAGLE-3 head (factcheck21b_draw's configs), 3 steps, top-k 1 (4 draft tokens)
    or 4 (8 draft tokens), each attention backend of ATTENTION and each KV dtype of KV, on 8x H100 (9.0) and 8x B200
    (10.0) with every final release 0.5.10-0.5.23: one row per allow;
(r) `recommend --format json --model-path llama3 --tp N --goal G` (both goals) on GEFORCE's boxes (4x RTX 3090 8.6,
    4x RTX 4090 8.9, 2x RTX 5090 12.0; PCIe through the host bridge, every pair's P2P read 'gpu-not-supported', so
    topology p2p 'none') with every final release 0.5.10-0.5.23: one row per distinct (box, goal, target stack, steps,
    command, environment) that prints a command.

Draw: random.Random(20261230); per population its rows sorted by their JSON text, shuffled, the first k (s: 8, r: 4),
12 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck21b_draw import MODELS as _MODELS21B
from factcheck23_draw import _v
from factcheck27_draw import _box, _run, _steps
from factcheck_draw import draw, final_releases, gate_allow_rows, write_models

SEED = 20261230
MODELS: dict[str, dict[str, Any]] = {k: _MODELS21B[k] for k in ("llama3", "llama3-eagle3")}
ATTENTION = ["fa3", "flashinfer", "triton", "trtllm_mha", "fa4"]
KV = ["auto", "fp8_e4m3"]
TOPK = {1: 4, 4: 8}  # top-k: draft tokens
SPEC_BOXES: dict[str, tuple[str, str, str, int]] = {
    "h100": ("NVIDIA H100 80GB HBM3", "9.0", "x86_64", 8),
    "b200": ("NVIDIA B200", "10.0", "x86_64", 8),
}
GEFORCE: dict[str, tuple[str, str, str, int]] = {
    "rtx3090x4": ("NVIDIA GeForce RTX 3090", "8.6", "x86_64", 4),
    "rtx4090x4": ("NVIDIA GeForce RTX 4090", "8.9", "x86_64", 4),
    "rtx5090x2": ("NVIDIA GeForce RTX 5090", "12.0", "x86_64", 2),
}


def _releases() -> list[str]:
    return [r for r in final_releases() if _v(r) >= (0, 5, 10)]


def _spec_flags(out: Path, attn: str, kv: str, topk: int) -> str:
    return (f"--speculative-algorithm EAGLE3 --speculative-draft-model-path {out / 'models' / 'llama3-eagle3'} "
            f"--speculative-num-steps 3 --speculative-eagle-topk {topk} --speculative-num-draft-tokens {TOPK[topk]} "
            f"--attention-backend {attn} --kv-cache-dtype {kv}")  # fmt: skip


def spec_rows(out: Path) -> list[dict[str, Any]]:
    launches = [({"attention": attn, "kv": kv, "topk": topk}, "llama3",
                 ["--tp", "8", *_spec_flags(out, attn, kv, topk).split()])
                for attn in ATTENTION for kv in KV for topk in TOPK]  # fmt: skip
    return gate_allow_rows(out, SPEC_BOXES, _releases(), _box, launches, pop="s")


def _geforce_box(out: Path, rel: str, spec: tuple[str, str, str, int]) -> Path:
    path = _box(out, rel, spec)
    doc = json.loads(path.read_text())
    topo = doc["facts"]["topology"]
    n = spec[3]
    topo.update({"interconnect": "pcie-host-bridge", "same_model": True, "gpu_count": n, "p2p": "none",
                 "nvswitch": False})  # fmt: skip
    topo["pairs"] = [{"a": a, "b": b, "link": "pcie-host-bridge", "nvlink_count": 0, "common_ancestor": "hostbridge",
                      "p2p_read": "gpu-not-supported"} for a in range(n) for b in range(a + 1, n)]  # fmt: skip
    path.write_text(json.dumps(doc))
    return path


def recommend_rows(out: Path) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    model = str(out / "models" / "llama3")
    for box, spec in GEFORCE.items():
        for rel in _releases():
            facts = _geforce_box(out, rel, spec)
            for goal in ("latency", "throughput"):
                args = ["recommend", "--facts", str(facts), "--model-path", model, "--tp", str(spec[3])]
                doc = _run([*args, "--goal", goal, "--format", "json"])
                if not doc.get("command"):
                    continue
                plan = doc.get("plan") or {}
                row = {"pop": "r", "box": box, "goal": goal, "target": plan.get("target") or doc.get("stack"),
                       "steps": _steps(plan), "command": doc.get("command"), "env": doc.get("env")}  # fmt: skip
                seen.setdefault(json.dumps(row, sort_keys=True), {**row, "sglang": rel})
        print(f"r {box}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    s = spec_rows(out)
    r = recommend_rows(out)
    draw(out, SEED, [(8, s), (4, r)])


if __name__ == "__main__":
    main()
