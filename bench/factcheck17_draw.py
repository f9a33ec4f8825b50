"""The seventeenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Seventeenth sample").

    PYTHONPATH=. python bench/factcheck17_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: each setting recommend proposes for a
Llama 3 and a Qwen3-MoE (BF16 and block FP8) on the brief's boxes at majors 8/9/10/12, the audit's ok feature
verdicts on SM100/SM103 NVLink boxes with the newest releases, and the gate's allows for launch flags that few
refusal rules read.

(a) `recommend --model-path M --tp N --goal G --format json` for the models llama3, qwen3moe, qwen3moe-fp8 and both
    goals on: h200-newest (8 GPUs, NVLink, driver CUDA 13.0) with its GPUs set to compute capability 8.0, 9.0,
    10.0, 10.3 or 12.0, and the recorded cases b200 (8x B200), rtxpro6000-pcie-iommu-translated (2x RTX PRO 6000
    PCIe), rtx5090-torch-cu126 (1x RTX 5090) and gb10-cu130-pypi-kernel (1x GB10, aarch64), each with every final
    SGLang release 0.5.9-0.5.23 and its pins (factcheck7_draw.release_box), N the box's GPU count: one row per
    distinct (box, cc, model, goal, target stack, chosen decision and option, its flags and the environment the
    command carries), labelled with the first release that gives it;
(b) `audit --facts F --format json` of h200-newest with its GPUs set to 10.0 or 10.3 and of the b200 case, each with
    every final release 0.5.15-0.5.23 and its pins: one row per distinct (box, cc, feature, its reasons' rule /
    observed / result) whose status is ok, labelled with the first release that gives it;
(c) `gate --dry-run --format json` on h200-newest with its GPUs set to 9.0, 10.0 or 12.0 and each final release
    0.5.9-0.5.23 and its pins, `--tp 8`, each single flag set of FLAGS with each model of MODELS that it fits (the
    all-to-all backends with the MoE models only): one row per allow.

Draw: random.Random(20261217); per population its rows sorted by their JSON text, shuffled, the first k (a: 9,
b: 7, c: 11), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import audit_ok_rows, draw, final_releases, gate, stackcheck_json, write_models

SEED = 20261217
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32},
    "qwen3moe": _QWEN3MOE,
    "qwen3moe-fp8": {**_QWEN3MOE, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                                          "activation_scheme": "dynamic",
                                                          "weight_block_size": [128, 128]}},
}  # fmt: skip
FLAGS: dict[str, str] = {
    "a2a-deepep": "--moe-a2a-backend deepep",
    "a2a-mooncake": "--moe-a2a-backend mooncake",
    "a2a-flashinfer": "--moe-a2a-backend flashinfer",
    "two-batch-overlap": "--enable-two-batch-overlap",
    "pdmux": "--enable-pdmux",
    "mixed-chunk": "--enable-mixed-chunk",
    "quant-w4afp8": "--quantization w4afp8",
    "quant-modelopt_fp4": "--quantization modelopt_fp4",
    "kv-fp8_e5m2": "--kv-cache-dtype fp8_e5m2",
    "kv-fp4_e2m1": "--kv-cache-dtype fp4_e2m1",
}
REC_CCS = ["8.0", "9.0", "10.0", "10.3", "12.0"]
REC_CASES = ["b200", "rtxpro6000-pcie-iommu-translated", "rtx5090-torch-cu126", "gb10-cu130-pypi-kernel"]


def _releases(first: tuple[int, int, int]) -> list[str]:
    return [r for r in final_releases() if tuple(map(int, r.split("."))) >= first]


def _box(out: Path, case: str, rel: str, cc: str | None) -> tuple[Path, int]:
    from factcheck7_draw import release_box

    doc = copy.deepcopy(release_box(case, rel))
    gpus = doc["facts"]["gpus"]
    if cc is not None:
        for g in gpus:
            g["compute_capability"] = cc
    path = out / f"box-{case}-{cc}-{rel}.json"
    path.write_text(json.dumps(doc))
    return path, len(gpus)


def _boxes(ccs: list[str], cases: list[str]) -> list[tuple[str, str | None]]:
    return [("h200-newest", cc) for cc in ccs] + [(case, None) for case in cases]


def recommend_rows(out: Path) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for case, cc in _boxes(REC_CCS, REC_CASES):
        for rel in _releases((0, 5, 9)):
            path, n = _box(out, case, rel, cc)
            for model in MODELS:
                for goal in ("latency", "throughput"):
                    args = ["recommend", "--facts", str(path), "--model-path", str(out / "models" / model)]
                    doc = stackcheck_json([*args, "--tp", str(n), "--goal", goal, "--format", "json"])
                    target = (doc.get("plan") or {}).get("target") or doc.get("stack")
                    for c in doc.get("choices") or []:
                        if c.get("status") != "chosen":
                            continue
                        row = {"pop": "a", "box": case, "cc": cc, "model": model, "goal": goal, "target": target,
                               "decision": c.get("decision"), "option": c.get("option"), "flags": c.get("flags"),
                               "env": doc.get("env")}  # fmt: skip
                        key = json.dumps(row, sort_keys=True)
                        seen.setdefault(key, {**row, "sglang": rel, "command": doc.get("command")})
        print(f"a {case} {cc}: {len(seen)}", file=sys.stderr, flush=True)
    return list(seen.values())


def audit_rows(out: Path) -> list[dict[str, Any]]:
    def labels(box: tuple[str, str]) -> dict[str, Any]:
        return {"box": box[0], "cc": box[1]}

    def facts(box: tuple[str, str], rel: str) -> Path:
        return _box(out, box[0], rel, box[1])[0]

    return audit_ok_rows(_boxes(["10.0", "10.3"], ["b200"]), _releases((0, 5, 15)), facts, labels=labels)


def gate_rows(out: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for cc in ["9.0", "10.0", "12.0"]:
        for rel in _releases((0, 5, 9)):
            path, n = _box(out, "h200-newest", rel, cc)
            for flag, text in FLAGS.items():
                for model in MODELS:
                    if flag.startswith("a2a-") and model == "llama3":
                        continue
                    line = ["--model-path", str(out / "models" / model), "--tp", str(n), *text.split()]
                    if gate(path, line).get("decision") == "allow":
                        rows.append({"pop": "c", "cc": cc, "sglang": rel, "model": model, "flag": flag})
        print(f"c {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = recommend_rows(out)
    b = audit_rows(out)
    c = gate_rows(out)
    draw(out, SEED, [(9, a), (7, b), (11, c)])


if __name__ == "__main__":
    main()
