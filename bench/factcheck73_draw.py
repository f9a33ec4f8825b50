"""The seventy-third fact-check sample's population and seeded draw (bench/factcheck73_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck73_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the twenty-third session merged (git log --first-parent
a5c9e2d5..541c6583): imoe6 (SGLang's own MoE runner pick for GLM-4.x MoE / Nemotron-H / Llama 4 / Gemma 4 / Cohere2
per release, --moe-a2a-backend deepep on 0.5.20-0.5.23), ishape3 (an AWQ MoE checkpoint's group per rank, Mixtral's
experts, block-FP8 attention per rank), imend22 (--bf16-gemm-backend cutedsl and torch's CUDA; NGRAM's draft runner),
itfm1 (a Gemma 4 MoE under --model-impl transformers).

Models, written with the key names and values of the published config.json (fewer keys: those SGLang's model code and
the gate read): GLM-4.5-Air (zai-org, Glm4MoeForCausalLM, BF16), NVIDIA-Nemotron-3-Nano-30B-A3B (NemotronHForCausalLM,
BF16), Llama-4-Scout-17B-16E-Instruct (Llama4ForConditionalGeneration, BF16), Gemma 4 26B-A4B (itfm1's test shape,
Gemma4ForConditionalGeneration), Mixtral-8x7B-Instruct-v0.1 BF16 and its AutoAWQ GEMM export, Qwen1.5-MoE-A2.7B's AWQ
and GPTQ-Int4 exports (ishape3's test shape), Qwen3-30B-A3B BF16 and FP8 (factcheck71's).

Boxes: factcheck63's B200 box (8 x B200, the trtllm-gen cubins in the flashinfer-cubin package) at SGLang 0.5.12,
0.5.17, 0.5.19, 0.5.20 and 0.5.23 with each release's pins; factcheck49's H200 box at 0.5.19 and 0.5.23; that H200 box
with its GPUs named H100 80GB HBM3 (SM 9.0) at 0.5.23.

Population (g): `gate --facts F --dry-run --format json -- python3 -m sglang.launch_server --model-path M FLAGS` of
each launch of LAUNCHES on each of its boxes. Of each allowed launch: one row (box, launch, decision allow, and the ok
features and preflight checks of G_IDS, those these merges read), as factcheck72's. Rows deduplicated; a row equal to
one an earlier sample drew is left out.

Draw: random.Random(20270211); the rows sorted by JSON text, shuffled, the first 10. Nothing is replaced after the
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
from factcheck71_draw import MODELS as M71
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_box, write_models

SEED = 20270211
K = 10
LAUNCH = ["python3", "-m", "sglang.launch_server"]

AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True, "damp_percent": 0.01}
QWEN15_MOE: dict[str, Any] = {
    "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
    "num_hidden_layers": 24, "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60,
    "num_experts_per_tok": 4, "moe_intermediate_size": 1408, "intermediate_size": 5632,
    "shared_expert_intermediate_size": 5632, "vocab_size": 151936, "torch_dtype": "float16",
}  # fmt: skip
MIXTRAL: dict[str, Any] = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096, "num_hidden_layers": 32,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8, "num_experts_per_tok": 2,
    "intermediate_size": 14336, "vocab_size": 32000, "rope_theta": 1000000.0, "max_position_embeddings": 32768,
    "torch_dtype": "bfloat16",
}  # fmt: skip
GEMMA4_TEXT: dict[str, Any] = {
    "model_type": "gemma4_text", "hidden_size": 2816, "intermediate_size": 2112, "moe_intermediate_size": 704,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 30,
    "vocab_size": 262144, "enable_moe_block": True, "num_experts": 128, "top_k_experts": 8,
    "hidden_activation": "gelu_pytorch_tanh",
}  # fmt: skip
LLAMA4_TEXT: dict[str, Any] = {
    "model_type": "llama4_text", "hidden_size": 5120, "num_hidden_layers": 48, "num_attention_heads": 40,
    "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
    "intermediate_size": 8192, "intermediate_size_mlp": 16384, "interleave_moe_layer_step": 1,
    "vocab_size": 202048, "rope_theta": 500000.0, "max_position_embeddings": 10485760,
}  # fmt: skip

MODELS: dict[str, dict[str, Any]] = {
    **{k: M71[k] for k in ("qwen3-30b-a3b", "qwen3-30b-a3b-fp8")},
    # zai-org/GLM-4.5-Air config.json
    "glm45-air": {
        "architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "hidden_size": 4096,
        "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 46,
        "num_attention_heads": 96, "num_key_value_heads": 8, "head_dim": 128, "n_routed_experts": 128,
        "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1, "n_group": 1, "topk_group": 1,
        "norm_topk_prob": True, "routed_scaling_factor": 1.0, "partial_rotary_factor": 0.5, "use_qk_norm": False,
        "vocab_size": 151552, "max_position_embeddings": 131072, "rope_theta": 1000000, "torch_dtype": "bfloat16",
    },
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 config.json
    "nemotron3-nano": {
        "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 2688,
        "num_hidden_layers": 52, "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
        "n_routed_experts": 128, "n_shared_experts": 1, "num_experts_per_tok": 6, "moe_intermediate_size": 1856,
        "moe_shared_expert_intermediate_size": 3712, "mamba_num_heads": 64, "mamba_head_dim": 64,
        "ssm_state_size": 128, "n_groups": 8, "mlp_hidden_act": "relu2", "norm_topk_prob": True,
        "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
        "vocab_size": 131072, "torch_dtype": "bfloat16",
    },
    # meta-llama/Llama-4-Scout-17B-16E-Instruct config.json
    "llama4-scout": {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
                     "text_config": LLAMA4_TEXT, "torch_dtype": "bfloat16"},
    # google Gemma 4 26B-A4B config.json (itfm1's test shape)
    "gemma4-a4b": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4",
                   "text_config": GEMMA4_TEXT, "torch_dtype": "bfloat16"},
    # mistralai/Mixtral-8x7B-Instruct-v0.1 and TheBloke/Mixtral-8x7B-Instruct-v0.1-AWQ config.json
    "mixtral-8x7b": MIXTRAL,
    "mixtral-8x7b-awq": {**MIXTRAL, "torch_dtype": "float16", "quantization_config": AWQ},
    # Qwen/Qwen1.5-MoE-A2.7B-Chat-AWQ and -GPTQ-Int4 config.json
    "qwen15-moe-awq": {**QWEN15_MOE, "quantization_config": AWQ},
    "qwen15-moe-gptq": {**QWEN15_MOE, "quantization_config": GPTQ},
}  # fmt: skip

B = {rel: f"b200-{rel}" for rel in ("0.5.12", "0.5.17", "0.5.19", "0.5.20", "0.5.23")}
H = {rel: f"h200-{rel}" for rel in ("0.5.19", "0.5.23")}
H100 = "h100-0.5.23"
ALL_B = tuple(B.values())
_ALL = (*ALL_B, *H.values(), H100)
#: launch name: (model, flags, boxes)
LAUNCHES: dict[str, tuple[str, list[str], tuple[str, ...]]] = {
    # imoe6: SGLang's own MoE runner pick (no --moe-runner-backend), deepep / none all-to-all
    "glm45-air-tp4": ("glm45-air", ["--tp", "4"], _ALL),
    "glm45-air-tp8-ep8": ("glm45-air", ["--tp", "8", "--ep", "8"], (B["0.5.17"], B["0.5.23"], H["0.5.23"])),
    "nemotron3-nano-tp2": ("nemotron3-nano", ["--tp", "2"], _ALL),
    "llama4-scout-tp8": ("llama4-scout", ["--tp", "8"], (B["0.5.12"], B["0.5.19"], B["0.5.23"], H["0.5.23"], H100)),
    "llama4-scout-tp4-a2a-none": ("llama4-scout", ["--tp", "4", "--moe-a2a-backend", "none"],
                                  (B["0.5.19"], B["0.5.23"])),
    "gemma4-a4b-tp2": ("gemma4-a4b", ["--tp", "2"], (B["0.5.17"], B["0.5.20"], B["0.5.23"], H["0.5.19"])),
    "qwen3-fp8-tp4-deepep": ("qwen3-30b-a3b-fp8", ["--tp", "4", "--ep", "4", "--moe-a2a-backend", "deepep"],
                             (B["0.5.20"], B["0.5.23"], H["0.5.23"], H100)),
    # itfm1: Gemma 4 MoE under --model-impl (sglang allowed, transformers refused)
    "gemma4-a4b-impl-sglang-tp2": ("gemma4-a4b", ["--tp", "2", "--model-impl", "sglang"], (B["0.5.23"], H100)),
    "gemma4-a4b-impl-transformers-tp2": ("gemma4-a4b", ["--tp", "2", "--model-impl", "transformers"],
                                         (B["0.5.23"], H100)),
    # ishape3: the model shape per rank
    "mixtral-tp2": ("mixtral-8x7b", ["--tp", "2"], (B["0.5.23"], H["0.5.19"], H100)),
    "mixtral-tp8": ("mixtral-8x7b", ["--tp", "8"], (B["0.5.19"], H["0.5.23"], H100)),
    "mixtral-awq-tp2": ("mixtral-8x7b-awq", ["--tp", "2"], (H["0.5.19"], H["0.5.23"], H100)),
    "mixtral-awq-tp8": ("mixtral-8x7b-awq", ["--tp", "8"], (H["0.5.23"], H100)),
    "qwen15-awq-tp2": ("qwen15-moe-awq", ["--tp", "2"], (H["0.5.23"], H100)),
    "qwen15-awq-tp4": ("qwen15-moe-awq", ["--tp", "4"], (H["0.5.19"], H["0.5.23"], H100)),
    "qwen15-gptq-tp4": ("qwen15-moe-gptq", ["--tp", "4"], (H["0.5.23"], H100)),
    "qwen3-fp8-tp8": ("qwen3-30b-a3b-fp8", ["--tp", "8"], (B["0.5.23"], H["0.5.23"], H100)),
    # imend22: NGRAM's draft runner
    "qwen3-ngram-tp4": ("qwen3-30b-a3b", ["--tp", "4", "--speculative-algorithm", "NGRAM"], (B["0.5.23"], H100)),
    # imend22: --bf16-gemm-backend cutedsl (SM10x, torch CUDA >= 12.8)
    "nemotron3-nano-cutedsl-tp2": ("nemotron3-nano", ["--tp", "2", "--bf16-gemm-backend", "cutedsl"],
                                   (B["0.5.20"], B["0.5.23"])),
}  # fmt: skip

#: the features and preflight checks these merges read, listed where ok
G_IDS = {"check model", "sglang-start-imports", "moe-trtllm-gen-cubins", "moe-a2a-deepep"}


def _boxes(out: Path) -> dict[str, Path]:
    paths = {name: _moe_box(out, rel, "b200", "pkg") for rel, name in B.items()}
    paths.update({name: _box(out, rel, None) for rel, name in H.items()})
    paths[H100] = _box(out, "0.5.23", None)
    # (write_box after _moe_box: factcheck49._box rewrites out/box-h200-REL.json, read again by each _moe_box)
    docs = {name: json.loads(p.read_text()) for name, p in paths.items()}
    for gpu in docs[H100]["facts"]["gpus"]:
        gpu["name"], gpu["compute_capability"] = "NVIDIA H100 80GB HBM3", "9.0"
    return {name: write_box(out, doc, f"{name}.json") for name, doc in docs.items()}


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
        for box in on:
            launches += 1
            doc = stackcheck_json_or_error(["gate", "--facts", str(boxes[box]), "--dry-run", "--format", "json", "--",
                                            *LAUNCH, "--model-path", str(out / "models" / model), *flags])  # fmt: skip
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
    draw_undrawn(out, SEED, [(K, gate_rows(out))], "factcheck73_drawn.json")


if __name__ == "__main__":
    main()
