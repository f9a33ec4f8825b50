"""The fifteenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Fifteenth sample").

    PYTHONPATH=. python bench/factcheck15_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what stop 36 added and no sample has drawn: the gate's new refusal rules
and allowances of launch.json (dsv4/compressed, dual chunk, torch_native/flex_attention with MLA models, the DSA
indexer below major 9 and SGLANG_FP8_PAGED_MQA_LOGITS_TORCH, minicpm_*, cutedsl_mla, tokenspeed_mla,
llada2_cfg_flashinfer, ModelOpt MXFP8), recommend's lines judged by the gate's rules (launch.recommend
.gate_problems), and the release sweep's verdicts for a package known installed without a version
(verdicts.sweep).

Boxes: the h200-newest case (8 GPUs, driver CUDA 13.0, x86_64) with every final SGLang release 0.5.1-0.5.23 and its
pins (factcheck7_draw.release_box) and its GPUs' compute capability set to 8.0, 9.0, 10.0 or 12.0 (92 boxes).
Three populations:

(a) `gate --dry-run --format json` with `--tp 8` for the model/flag pairs of PAIRS below (model configs written for
    this sample in the published checkpoints' shape, not copied): the allow decisions;
(b) `recommend --facts BOX --model-path M --tp 8 --format json` for the models of RECOMMEND: one row per (box,
    model) that prints a command, with the command, its env and the target stack's SGLang;
(c) `audit --facts` of the h200-newest box (cc as above) with one of SWEPT's packages entry reduced to
    {"installed": true} and the facts dated one of DAYS: one row per (package, day, cc, feature) whose status is
    ok.

Draw: random.Random(20261215); per population its rows sorted by their JSON text, shuffled, the first k (a: 15,
b: 6, c: 6), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import ROOT, draw, final_releases, gate, stackcheck_json, write_models

SEED = 20261215
CCS = ["8.0", "9.0", "10.0", "12.0"]
_MLA = {"hidden_size": 7168, "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512,
        "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}  # fmt: skip
_QWEN25 = {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 5120,
           "num_attention_heads": 40, "num_key_value_heads": 8}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
               "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128},
    "deepseek-r1": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", **_MLA},
    "deepseek-v3.2": {"architectures": ["DeepseekV32ForCausalLM"], "model_type": "deepseek_v32", **_MLA,
                      "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 64},
    "deepseek-v4": {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", **_MLA,
                    "qk_nope_head_dim": 448, "qk_rope_head_dim": 64, "head_dim": 512},
    "qwen2.5-1m": {**_QWEN25, "dual_chunk_attention_config": {"chunk_size": 262144, "local_size": 8192,
                                                               "original_max_position_embeddings": 262144}},
    "qwen2.5": _QWEN25,
    "minicpm3": {"architectures": ["MiniCPM3ForCausalLM"], "model_type": "minicpm3", "hidden_size": 2560,
                 "num_attention_heads": 40, "num_key_value_heads": 40, "kv_lora_rank": 256, "q_lora_rank": 768,
                 "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "v_head_dim": 64},
    "minicpm-sala": {"architectures": ["MiniCPMSALAForCausalLM"], "model_type": "minicpm_sala", "hidden_size": 4096,
                     "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
                     "sparse_config": {"kernel_size": 32, "topk": 64}},
    "minicpm4": {"architectures": ["MiniCPMForCausalLM"], "model_type": "minicpm", "hidden_size": 4096,
                 "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128},
    "kimi-vl": {"architectures": ["KimiVLForConditionalGeneration"], "model_type": "kimi_vl", **_MLA},
    "llama3-mo-mxfp8": {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
                        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                        "quantization_config": {"quant_method": "modelopt", "quant_algo": "MXFP8"}},
}  # fmt: skip
PAIRS: list[tuple[str, str]] = [
    ("llama3", "--attention-backend dsv4"),
    ("deepseek-r1", "--attention-backend compressed"),
    ("deepseek-v4", "--attention-backend dsv4"),
    ("qwen2.5-1m", ""),
    ("qwen2.5-1m", "--attention-backend dual_chunk_flash_attn"),
    ("qwen2.5", "--attention-backend dual_chunk_flash_attn"),
    ("deepseek-r1", "--attention-backend torch_native"),
    ("deepseek-r1", "--attention-backend flex_attention"),
    ("deepseek-r1", "--attention-backend torch_native --prefill-attention-backend fa3"),
    ("minicpm3", "--attention-backend torch_native"),
    ("kimi-vl", "--attention-backend flex_attention"),
    ("deepseek-v3.2", ""),
    ("deepseek-v3.2", "ENV SGLANG_FP8_PAGED_MQA_LOGITS_TORCH=1"),
    ("minicpm-sala", "--attention-backend minicpm_flashinfer"),
    ("minicpm4", "--attention-backend minicpm_flashinfer"),
    ("deepseek-r1", "--attention-backend cutedsl_mla"),
    ("llama3", "--attention-backend cutedsl_mla"),
    ("deepseek-r1", "--attention-backend tokenspeed_mla --kv-cache-dtype fp8_e4m3"),
    ("llama3", "--attention-backend llada2_cfg_flashinfer"),
    ("llama3-mo-mxfp8", ""),
    ("llama3-mo-mxfp8", "--quantization modelopt_fp8"),
]
RECOMMEND = ["qwen2.5-1m", "deepseek-r1", "deepseek-v3.2", "minicpm-sala", "llama3-mo-mxfp8"]
SWEPT = ["sglang", "flashinfer-python", "sglang-kernel", "torch"]
DAYS = ["2025-09-15", "2026-03-01", "2026-09-01"]


def gate_env(facts: Path, env: str, model: str) -> dict[str, Any]:
    """The gate on `env NAME=VALUE python3 -m sglang.launch_server --model-path M --tp 8`."""
    args = ["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", "env", env]
    return stackcheck_json([*args, "python3", "-m", "sglang.launch_server", "--model-path", model, "--tp", "8"])


def with_cc(doc: dict[str, Any], cc: str) -> dict[str, Any]:
    doc = copy.deepcopy(doc)
    for g in doc["facts"]["gpus"]:
        g["compute_capability"] = cc
    return doc


def gate_and_recommend_rows(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    from factcheck7_draw import release_box

    write_models(out, MODELS)
    a: list[dict[str, Any]] = []
    b: list[dict[str, Any]] = []
    for rel in final_releases():
        base = release_box("h200-newest", rel)
        for cc in CCS:
            path = out / f"box-{rel}-{cc}.json"
            path.write_text(json.dumps(with_cc(base, cc)))
            for model, flag in PAIRS:
                mp = str(out / "models" / model)
                if flag.startswith("ENV "):
                    doc = gate_env(path, flag[4:], mp)
                else:
                    doc = gate(path, ["--model-path", mp, "--tp", "8", *flag.split()])
                if doc.get("decision") == "allow":
                    a.append({"pop": "a", "sglang": rel, "cc": cc, "model": model, "flags": flag})
            for model in RECOMMEND:
                mp = str(out / "models" / model)
                doc = stackcheck_json(["recommend", "--facts", str(path), "--model-path", mp, "--tp", "8",
                                       "--format", "json"])  # fmt: skip
                if doc.get("command"):
                    cmd = doc["command"]
                    line = " ".join(cmd) if isinstance(cmd, list) else str(cmd)
                    b.append({"pop": "b", "sglang": rel, "cc": cc, "model": model,
                              "target": (doc.get("stack") or {}).get("sglang"),
                              "command": line.replace(mp, model), "env": doc.get("env")})  # fmt: skip
        print(f"{rel}: a {len(a)} b {len(b)}", file=sys.stderr, flush=True)
    return a, b


def sweep_rows(out: Path) -> list[dict[str, Any]]:
    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    rows: list[dict[str, Any]] = []
    for pkg in SWEPT:
        for day in DAYS:
            for cc in CCS:
                box = with_cc(doc, cc)
                box["facts"]["packages"][pkg] = {"installed": True}
                box["facts"]["collected_at"] = f"{day}T00:00:00Z"
                path = out / f"sweep-{pkg}-{day}-{cc}.json"
                path.write_text(json.dumps(box))
                rep = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
                rows += [{"pop": "c", "package": pkg, "day": day, "cc": cc, "feature": f["id"]}
                         for f in rep.get("features") or [] if f.get("status") == "ok"]  # fmt: skip
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    a, b = gate_and_recommend_rows(out)
    draw(out, SEED, [(15, a), (6, b), (6, sweep_rows(out))])


if __name__ == "__main__":
    main()
