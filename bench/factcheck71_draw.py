"""The seventy-first fact-check sample's population and seeded draw (bench/factcheck71_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck71_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the twenty-first session merged after the seventieth sample (git log
--first-parent 3468a612..106be78a): imodel4 (Cohere2 / Qwen3-MoE renormalize from 0.5.9, Gemma 4's gelu experts),
irev83 (Gemma3n's per-layer sizes, DeepSeek's dense layers at --moe-dense-tp-size), icute2 (NVFP4's CuTe DSL quantize
from 0.5.12, linear-attn-cutedsl, the draft's flashinfer_cutedsl MoE), ishape2 (the dense MLP table: Phi-3, Gemma 2
/ 3, GLM-4; redundant experts; the MoE share tp // ep; the draft model's shape), imend20 (FA4's libs-base on
0.5.10-0.5.15, DeepSeek MLA with EAGLE on fa4).

Models: factcheck68's (Qwen3-30B-A3B and -FP8, DeepSeek-V3, Llama-3.1-8B) and this script's own config.json files,
written with the key names and values of the published checkpoints named beside each (fewer keys: those SGLang's
model code and the gate read).

Boxes: factcheck63's B200 box (8 x B200, the trtllm-gen cubins in the flashinfer-cubin package) at SGLang 0.5.12,
0.5.15 and 0.5.23 with each release's pins; the 0.5.15 one with nvidia-cutlass-dsl-libs-base 4.5.2 beside the
DSL (b200-0.5.15-libs); factcheck49's H200 box at 0.5.23.

Population (g): `gate --facts F --dry-run --format json -- python3 -m sglang.launch_server --model-path M FLAGS` of
each launch of LAUNCHES on each of its boxes. Of each allowed launch: one row (box, launch, decision allow, and the ok
features and preflight checks of G_IDS, those these merges read; the model-shape and MoE-runner rules report only
what fails, so the allow is the row), as factcheck70's (d). Rows deduplicated; a row equal to one an earlier sample
drew is left out.

Draw: random.Random(20270209); the rows sorted by JSON text, shuffled, the first 10. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck63_draw import _moe_box
from factcheck68_draw import MODELS as M68
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_box, write_models

SEED = 20270209
K = 10
LAUNCH = ["python3", "-m", "sglang.launch_server"]

_COHERE2 = {  # Cohere2-MoE in the shape imodel4's test states North Mini Code 1.0's config.json (sigmoid selection)
    "architectures": ["Cohere2MoeForCausalLM"], "model_type": "cohere2_moe", "hidden_size": 2048, "head_dim": 128,
    "num_hidden_layers": 32, "intermediate_size": 768, "prefix_dense_intermediate_size": 3072,
    "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 262144, "num_experts": 128,
    "num_experts_per_tok": 8, "num_shared_experts": 0, "first_k_dense_replace": 1, "expert_selection_fn": "sigmoid",
    "norm_topk_prob": False, "sliding_window": 4096, "rope_theta": 50000, "max_position_embeddings": 500000,
    "use_parallel_block": True, "use_qk_norm": False, "torch_dtype": "bfloat16",
}  # fmt: skip
_GEMMA4_TEXT = {  # google/gemma-4-26B-A4B's text_config (as imodel4's test states its keys)
    "model_type": "gemma4_text", "hidden_size": 2816, "intermediate_size": 2112, "moe_intermediate_size": 704,
    "num_attention_heads": 16, "num_key_value_heads": 8, "num_global_key_value_heads": 2, "head_dim": 256,
    "num_hidden_layers": 30, "vocab_size": 262144, "sliding_window": 1024, "enable_moe_block": True,
    "num_experts": 128, "top_k_experts": 8, "hidden_activation": "gelu_pytorch_tanh", "attention_k_eq_v": True,
}  # fmt: skip


def _dense(arch: str, mtype: str, hidden: int, inter: int | list[int], heads: int, kv: int, layers: int, vocab: int,
           **extra: Any) -> dict[str, Any]:  # fmt: skip
    return {"architectures": [arch], "model_type": mtype, "hidden_size": hidden, "intermediate_size": inter,
            "num_attention_heads": heads, "num_key_value_heads": kv, "num_hidden_layers": layers,
            "vocab_size": vocab, "torch_dtype": "bfloat16", **extra}  # fmt: skip


_NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "kv_cache_quant_algo": None,
          "exclude_modules": ["lm_head"]}  # fmt: skip
_QWEN3_NEXT = {  # Qwen/Qwen3-Next-80B-A3B-Instruct config.json
    "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
    "intermediate_size": 5120, "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512,
    "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 48,
    "num_experts": 512, "num_experts_per_tok": 10, "norm_topk_prob": True, "decoder_sparse_step": 1,
    "mlp_only_layers": [], "full_attention_interval": 4, "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128,
    "linear_value_head_dim": 128, "linear_num_key_heads": 16, "linear_num_value_heads": 32,
    "partial_rotary_factor": 0.25, "rope_theta": 10000000, "vocab_size": 151936, "max_position_embeddings": 262144,
    "torch_dtype": "bfloat16",
}  # fmt: skip

MODELS: dict[str, dict[str, Any]] = {
    "qwen3-30b-a3b": M68["qwen3-30b-a3b"],
    "qwen3-30b-a3b-fp8": M68["qwen3-30b-a3b-fp8"],
    "deepseek-v3": M68["deepseek-v3"],
    "llama31-8b": M68["llama31-8b"],
    "llama31-8b-nvfp4": {**M68["llama31-8b"], "quantization_config": _NVFP4},  # nvidia/Llama-3.1-8B-Instruct-FP4
    "cohere2-moe": _COHERE2,
    "cohere2-moe-renorm": {**_COHERE2, "norm_topk_prob": True},  # Command A+'s choice (sigmoid, renormalized)
    "gemma4-26b-a4b": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
                       "text_config": _GEMMA4_TEXT, "torch_dtype": "bfloat16"},
    # google/gemma-3n-E4B-it: text_config's per-layer intermediate_size list
    "gemma3n-e4b": {"architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n",
                    "text_config": {"model_type": "gemma3n_text", "hidden_size": 2048,
                                    "intermediate_size": [16384] * 35, "num_attention_heads": 8,
                                    "num_key_value_heads": 2, "head_dim": 256, "num_hidden_layers": 35,
                                    "vocab_size": 262400}, "torch_dtype": "bfloat16"},
    "phi3-mini": _dense("Phi3ForCausalLM", "phi3", 3072, 8192, 32, 32, 32, 32064),  # microsoft/Phi-3-mini-4k-instruct
    "phi3-medium": _dense("Phi3ForCausalLM", "phi3", 5120, 17920, 40, 10, 40, 32064),  # Phi-3-medium-4k-instruct
    "gemma2-9b": _dense("Gemma2ForCausalLM", "gemma2", 3584, 14336, 16, 8, 42, 256000, head_dim=256),  # gemma-2-9b-it
    "gemma2-27b": _dense("Gemma2ForCausalLM", "gemma2", 4608, 36864, 32, 16, 46, 256000, head_dim=128),
    "gemma3-27b": {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",  # gemma-3-27b-it
                   "text_config": {"model_type": "gemma3_text", "hidden_size": 5376, "intermediate_size": 21504,
                                   "num_attention_heads": 32, "num_key_value_heads": 16, "head_dim": 128,
                                   "num_hidden_layers": 62, "vocab_size": 262208},
                   "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 1152,
                                     "intermediate_size": 4304, "num_attention_heads": 16, "num_hidden_layers": 27,
                                     "image_size": 896, "patch_size": 14}, "torch_dtype": "bfloat16"},
    "glm4-9b": _dense("Glm4ForCausalLM", "glm4", 4096, 13696, 32, 2, 40, 151552, head_dim=128),  # THUDM/GLM-4-9B-0414
    "qwen3-next": _QWEN3_NEXT,
    # yuhuili/EAGLE3-LLaMA3.1-Instruct-8B (one decoder layer, Llama's heads)
    "eagle3-llama31-8b": _dense("LlamaForCausalLMEagle3", "llama", 4096, 14336, 32, 8, 1, 128256, head_dim=128,
                                draft_vocab_size=32000),
}  # fmt: skip

_B = ("b200-0.5.12", "b200-0.5.23")
_H = ("h200-0.5.23",)
_TRT = ["--moe-runner-backend", "flashinfer_trtllm"]
_EAGLE = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
          "--speculative-num-draft-tokens", "4"]  # fmt: skip
#: launch name: (model, flags, boxes)
LAUNCHES: dict[str, tuple[str, list[str], tuple[str, ...]]] = {
    # imodel4
    "qwen3-trtllm-tp4": ("qwen3-30b-a3b", ["--tp", "4", *_TRT], _B),
    "qwen3-fp8-trtllm-tp4": ("qwen3-30b-a3b-fp8", ["--tp", "4", *_TRT], _B),
    "cohere2-trtllm-tp8": ("cohere2-moe", ["--tp", "8", *_TRT], _B),
    "cohere2-renorm-trtllm-tp8": ("cohere2-moe-renorm", ["--tp", "8", *_TRT], _B),
    "cohere2-tp8": ("cohere2-moe", ["--tp", "8"], ("b200-0.5.23",)),
    "gemma4-trtllm-tp8": ("gemma4-26b-a4b", ["--tp", "8", *_TRT], _B),
    "gemma4-cutlass-tp8": ("gemma4-26b-a4b", ["--tp", "8", "--moe-runner-backend", "flashinfer_cutlass"], _B),
    # irev83
    "gemma3n-tp2": ("gemma3n-e4b", ["--tp", "2"], _H),
    "gemma3n-tp8": ("gemma3n-e4b", ["--tp", "8"], _H),
    "ds3-tp8-dense1": ("deepseek-v3", ["--tp", "8", "--moe-dense-tp-size", "1"], ("b200-0.5.23",)),
    "ds3-tp8-dp8-dense1": ("deepseek-v3", ["--tp", "8", "--dp", "8", "--enable-dp-attention",
                                           "--moe-dense-tp-size", "1"], ("b200-0.5.23",)),
    # ishape2
    "phi3-mini-tp8": ("phi3-mini", ["--tp", "8"], _H),
    "phi3-medium-tp2": ("phi3-medium", ["--tp", "2"], _H),
    "phi3-medium-tp8": ("phi3-medium", ["--tp", "8"], _H),
    "gemma2-9b-tp4": ("gemma2-9b", ["--tp", "4"], _H),
    "gemma2-27b-tp8": ("gemma2-27b", ["--tp", "8"], _H),
    "gemma3-27b-tp4": ("gemma3-27b", ["--tp", "4"], _H),
    "gemma3-27b-tp8": ("gemma3-27b", ["--tp", "8"], _H),
    "glm4-9b-tp4": ("glm4-9b", ["--tp", "4"], _H),
    "glm4-9b-tp8": ("glm4-9b", ["--tp", "8"], _H),
    "qwen3-fp8-tp8-ep2": ("qwen3-30b-a3b-fp8", ["--tp", "8", "--ep", "2"], _H),
    "qwen3-fp8-tp8-ep4": ("qwen3-30b-a3b-fp8", ["--tp", "8", "--ep", "4"], _H),
    "qwen3-tp8-ep8-redundant8": ("qwen3-30b-a3b", ["--tp", "8", "--ep", "8", "--ep-num-redundant-experts", "8"], _H),
    "ds3-tp8-ep8-redundant32": ("deepseek-v3", ["--tp", "8", "--ep", "8", "--ep-num-redundant-experts", "32"],
                                ("b200-0.5.23",)),
    "llama-eagle3-tp8": ("llama31-8b", ["--tp", "8", "--speculative-algorithm", "EAGLE3",
                                        "--speculative-draft-model-path", "@eagle3-llama31-8b"], _H),
    # icute2
    "qwen3-next-cutedsl-tp4": ("qwen3-next", ["--tp", "4", "--linear-attn-backend", "cutedsl"],
                               ("b200-0.5.12", "b200-0.5.23", "h200-0.5.23")),
    "llama-nvfp4-cutlass-tp1": ("llama31-8b-nvfp4", ["--tp", "1", "--quantization", "modelopt_fp4",
                                                      "--fp4-gemm-backend", "flashinfer_cutlass"],
                                ("b200-0.5.12", "b200-0.5.23")),
    "qwen3-spec-cutedsl-tp4": ("qwen3-30b-a3b", ["--tp", "4", "--speculative-algorithm", "EAGLE3",
                                                 "--speculative-draft-model-path", "@eagle3-llama31-8b",
                                                 "--speculative-moe-runner-backend", "flashinfer_cutedsl"],
                               ("b200-0.5.23",)),
    # imend20
    "llama-fa4-tp2": ("llama31-8b", ["--tp", "2", "--attention-backend", "fa4"],
                      ("b200-0.5.12", "b200-0.5.15", "b200-0.5.15-libs", "b200-0.5.23")),
    "ds3-fa4-eagle-tp8": ("deepseek-v3", ["--tp", "8", "--attention-backend", "fa4", *_EAGLE],
                          ("b200-0.5.15-libs", "b200-0.5.23")),
    "ds3-fa4-eagle-decode-tp8": ("deepseek-v3", ["--tp", "8", "--prefill-attention-backend", "fa4",
                                                 "--decode-attention-backend", "flashinfer",
                                                 "--speculative-attention-mode", "decode", *_EAGLE],
                                 ("b200-0.5.15-libs",)),
}  # fmt: skip


def _boxes(out: Path) -> dict[str, Path]:
    paths = {f"b200-{rel}": _moe_box(out, rel, "b200", "pkg") for rel in ("0.5.12", "0.5.15", "0.5.23")}
    paths["h200-0.5.23"] = _box(out, "0.5.23", None)
    # (write_box after _moe_box: factcheck49._box rewrites out/box-h200-REL.json, read again by each _moe_box)
    paths = {name: write_box(out, json.loads(p.read_text()), f"{name}.json") for name, p in paths.items()}
    doc = json.loads(paths["b200-0.5.15"].read_text())
    dsl = doc["facts"]["packages"]["nvidia-cutlass-dsl"]
    doc["facts"]["packages"]["nvidia-cutlass-dsl-libs-base"] = {**dsl, "installed": True}
    paths["b200-0.5.15-libs"] = write_box(out, doc, "b200-0.5.15-libs.json")
    return paths


#: the features and preflight checks these merges read, listed in a row where ok
G_IDS = {"check model", "check draft-model", "attention-fa4", "linear-attn-cutedsl", "nvfp4", "moe-trtllm-gen-cubins",
         "attention-trtllm-mla", "eagle3", "fp8-block-gemm"}  # fmt: skip


def _oks(doc: dict[str, Any]) -> list[str]:
    """The ok features and preflight checks of an allowed gate's JSON that are in G_IDS, sorted."""
    checks = (doc.get("preflight") or {}).get("checks") or []
    oks = [f"check {c.get('check')}" for c in checks if c.get("status") == "ok"]
    oks += [str(f.get("feature")) for f in doc.get("features") or [] if f.get("status") == "ok"]
    return sorted(o for o in oks if o in G_IDS)


def gate_rows(out: Path) -> list[dict[str, Any]]:
    boxes = _boxes(out)
    rows: dict[str, dict[str, Any]] = {}
    launches = allowed = 0
    for name, (model, flags, on) in LAUNCHES.items():
        words = [str(out / "models" / w[1:]) if w.startswith("@") else w for w in flags]
        for box in on:
            launches += 1
            doc = stackcheck_json_or_error(["gate", "--facts", str(boxes[box]), "--dry-run", "--format", "json", "--",
                                            *LAUNCH, "--model-path", str(out / "models" / model), *words])  # fmt: skip
            if doc.get("decision") != "allow":
                continue
            allowed += 1
            row = {"pop": "g", "box": box, "launch": name, "decision": "allow", "ok": _oks(doc)}
            rows.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"g: {launches} launches, {allowed} allowed, {len(rows)} rows", file=sys.stderr, flush=True)
    return list(rows.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    draw_undrawn(out, SEED, [(K, gate_rows(out))], "factcheck71_drawn.json")


if __name__ == "__main__":
    main()
