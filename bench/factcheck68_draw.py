"""The sixty-eighth fact-check sample's population and seeded draw (bench/factcheck68_section.md). Run:

    PYTHONPATH=.:tests python bench/factcheck68_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what the twentieth session added to `gate` (git log --first-parent
eeac2361..f8263d34: imodel3, irunner3, irec3, ishape, imend17): the model-shape check (query / KV heads against the
attention TP, a Llama MLP's share per rank against the TP and the AWQ group, routed experts against the EP size), the
MoE runner picks for the models SGLang treats specially (DeepSeek-V2's softmax routing, Llama 4's renormalize, Kimi
K2 INT4, 0.5.23's kept top-k), the runner values (ionice / chrt / taskset / srun -N / -w / su / runuser) and the CuTe
DSL requirements (FA4, nvfp4, flashinfer_cutedsl).

Models (this script's own config.json files, written with the key names and values of the published checkpoints'
config.json: Qwen/Qwen3-30B-A3B and its -FP8, deepseek-ai/DeepSeek-V3, deepseek-ai/DeepSeek-V2-Lite,
meta-llama/Llama-4-Scout-17B-16E-Instruct (the text_config; vision_config cut to its shape keys), moonshotai/Kimi-K2-
Instruct and Kimi-K2-Thinking (INT4 compressed-tensors, group 32), meta-llama/Llama-3.1-8B-Instruct / -70B-Instruct,
hugging-quants/Meta-Llama-3.1-8B / 70B-Instruct-AWQ-INT4; the sources are named in bench/factcheck68_section.md).

Boxes: factcheck49's H200 box at SGLang 0.5.23 (h200-0.5.23); factcheck63's B200 box with the trtllm-gen cubins in
the flashinfer-cubin package at 0.5.22 and 0.5.23 (b200-0.5.22, b200-0.5.23); the 0.5.23 B200 box with
nvidia-cutlass-dsl recorded as not installed (b200-0.5.23-nodsl).

Population (g): `gate --facts F --dry-run --format json -- python3 -m sglang.launch_server --model-path M FLAGS` of
each launch of LAUNCHES on each box, and of each runner of RUNNERS before the Llama-3.1-70B `--tp 8` launch on
h200-0.5.23 and b200-0.5.23. Of each launch the gate allows (decision allow): one row per feature whose status is ok
(the gate's JSON gives a feature no reasons: reasons []) and per preflight check whose status is ok (reasons [[check,
observed, status]], OUT_DIR written OUT). Rows deduplicated; a row equal to one an earlier sample drew is left out.

Draw: random.Random(20270206); the rows sorted by JSON text, shuffled, the first 15. Nothing is replaced after the
draw.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck49_draw import _box
from factcheck63_draw import _moe_box
from factcheck_draw import draw_undrawn, stackcheck_json_or_error, write_box, write_models

SEED = 20270206
K = 15
LAUNCH = ["python3", "-m", "sglang.launch_server"]

_LLAMA31_ROPE = {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                 "original_max_position_embeddings": 8192, "rope_type": "llama3"}  # fmt: skip


def _llama31(hidden: int, inter: int, layers: int, heads: int, **extra: Any) -> dict[str, Any]:
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": hidden,
            "intermediate_size": inter, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": 8, "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 131072,
            "rms_norm_eps": 1e-05, "rope_theta": 500000.0, "rope_scaling": _LLAMA31_ROPE, "tie_word_embeddings": False,
            "vocab_size": 128256, "torch_dtype": "bfloat16", "bos_token_id": 128000, "eos_token_id": 128009,
            **extra}  # fmt: skip


_AWQ = {"bits": 4, "group_size": 128, "modules_to_not_convert": None, "quant_method": "awq", "version": "gemm",
        "zero_point": True}  # fmt: skip
_FP8_BLOCK = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}
_YARN = {"beta_fast": 32, "beta_slow": 1, "factor": 40, "mscale": 1.0, "mscale_all_dim": 1.0,
         "original_max_position_embeddings": 4096, "type": "yarn"}  # fmt: skip


def _deepseek(**extra: Any) -> dict[str, Any]:
    return {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
            "intermediate_size": 18432, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
            "num_attention_heads": 128, "num_key_value_heads": 128, "n_shared_experts": 1, "n_routed_experts": 256,
            "routed_scaling_factor": 2.5, "kv_lora_rank": 512, "q_lora_rank": 1536, "qk_rope_head_dim": 64,
            "v_head_dim": 128, "qk_nope_head_dim": 128, "topk_method": "noaux_tc", "n_group": 8, "topk_group": 4,
            "num_experts_per_tok": 8, "moe_layer_freq": 1, "first_k_dense_replace": 3, "norm_topk_prob": True,
            "scoring_func": "sigmoid", "vocab_size": 129280, "max_position_embeddings": 163840, "rope_theta": 10000,
            "rope_scaling": _YARN, "num_nextn_predict_layers": 1, "torch_dtype": "bfloat16", "hidden_act": "silu",
            "rms_norm_eps": 1e-06, "tie_word_embeddings": False, "quantization_config": _FP8_BLOCK,
            **extra}  # fmt: skip


_KIMI_INT4 = {
    "quant_method": "compressed-tensors", "format": "pack-quantized", "quantization_status": "compressed",
    "config_groups": {"group_0": {"targets": ["Linear"], "input_activations": None, "output_activations": None,
                                  "weights": {"type": "int", "num_bits": 4, "group_size": 32, "strategy": "group",
                                              "symmetric": True, "dynamic": False, "actorder": None,
                                              "observer": "minmax"}}},
    "ignore": ["lm_head", "re:.*self_attn.*", "re:.*shared_experts.*", "re:.*mlp\\.(gate|up|gate_up|down)_proj.*"],
}  # fmt: skip
_KIMI = {"model_type": "kimi_k2", "num_attention_heads": 64, "num_key_value_heads": 64, "n_routed_experts": 384,
         "routed_scaling_factor": 2.827, "n_group": 1, "topk_group": 1, "first_k_dense_replace": 1,
         "vocab_size": 163840, "max_position_embeddings": 131072, "rope_theta": 50000.0,
         "rope_scaling": {**_YARN, "beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0},
         "num_nextn_predict_layers": 0}  # fmt: skip

MODELS: dict[str, dict[str, Any]] = {
    "qwen3-30b-a3b": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
        "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
        "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
        "norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": [], "max_position_embeddings": 40960,
        "rope_theta": 1000000.0, "rms_norm_eps": 1e-06, "vocab_size": 151936, "tie_word_embeddings": False,
        "torch_dtype": "bfloat16", "hidden_act": "silu", "attention_bias": False, "use_sliding_window": False,
        "router_aux_loss_coef": 0.001, "output_router_logits": False,
    },
    "deepseek-v3": _deepseek(),
    "deepseek-v2-lite": {
        "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
        "intermediate_size": 10944, "moe_intermediate_size": 1408, "num_hidden_layers": 27,
        "num_attention_heads": 16, "num_key_value_heads": 16, "n_shared_experts": 2, "n_routed_experts": 64,
        "routed_scaling_factor": 1.0, "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64,
        "v_head_dim": 128, "qk_nope_head_dim": 128, "topk_method": "greedy", "n_group": 1, "topk_group": 1,
        "num_experts_per_tok": 6, "moe_layer_freq": 1, "first_k_dense_replace": 1, "norm_topk_prob": False,
        "scoring_func": "softmax", "aux_loss_alpha": 0.001, "seq_aux": True, "vocab_size": 102400,
        "max_position_embeddings": 163840, "rope_theta": 10000, "rope_scaling": _YARN, "torch_dtype": "bfloat16",
        "hidden_act": "silu", "rms_norm_eps": 1e-06, "tie_word_embeddings": False,
    },
    "llama4-scout": {
        "architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4", "torch_dtype": "bfloat16",
        "text_config": {
            "model_type": "llama4_text", "hidden_size": 5120, "intermediate_size": 8192,
            "intermediate_size_mlp": 16384, "num_hidden_layers": 48, "num_attention_heads": 40,
            "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 16, "num_experts_per_tok": 1,
            "interleave_moe_layer_step": 1, "vocab_size": 202048, "max_position_embeddings": 10485760,
            "rope_theta": 500000.0, "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                                                     "original_max_position_embeddings": 8192,
                                                     "rope_type": "llama3"},
            "use_qk_norm": True, "attention_chunk_size": 8192, "rms_norm_eps": 1e-05, "torch_dtype": "bfloat16",
        },
        "vision_config": {"model_type": "llama4_vision_model", "hidden_size": 1408, "num_attention_heads": 16,
                          "num_hidden_layers": 34, "image_size": 336, "patch_size": 14},
    },
    "kimi-k2": _deepseek(**_KIMI),
    "kimi-k2-thinking": _deepseek(**{**_KIMI, "max_position_embeddings": 262144,
                                     "rope_scaling": {**_KIMI["rope_scaling"], "factor": 64.0}},
                                  quantization_config=_KIMI_INT4),
    "qwen3-30b-a3b-fp8": {},  # filled below
    "llama31-8b": _llama31(4096, 14336, 32, 32),
    "llama31-70b": _llama31(8192, 28672, 80, 64),
    "llama31-8b-awq": _llama31(4096, 14336, 32, 32, quantization_config=_AWQ, torch_dtype="float16"),
    "llama31-70b-awq": _llama31(8192, 28672, 80, 64, quantization_config=_AWQ, torch_dtype="float16"),
}  # fmt: skip
MODELS["qwen3-30b-a3b-fp8"] = {**MODELS["qwen3-30b-a3b"], "quantization_config": {
    **_FP8_BLOCK, "modules_to_not_convert": ["lm_head"]}}  # fmt: skip

#: launch name: (model, flags)
LAUNCHES: dict[str, tuple[str, list[str]]] = {
    "qwen3-tp2": ("qwen3-30b-a3b", ["--tp", "2"]),
    "qwen3-tp8": ("qwen3-30b-a3b", ["--tp", "8"]),
    "qwen3-tp8-ep8": ("qwen3-30b-a3b", ["--tp", "8", "--ep", "8"]),
    "qwen3-tp8-dp-attn": ("qwen3-30b-a3b", ["--tp", "8", "--dp", "4", "--enable-dp-attention"]),
    "qwen3-tp4-trtllm": ("qwen3-30b-a3b", ["--tp", "4", "--moe-runner-backend", "flashinfer_trtllm"]),
    "qwen3-tp4-cutedsl": ("qwen3-30b-a3b", ["--tp", "4", "--moe-runner-backend", "flashinfer_cutedsl"]),
    "qwen3-fp8-tp2": ("qwen3-30b-a3b-fp8", ["--tp", "2"]),
    "qwen3-fp8-tp4-ep4": ("qwen3-30b-a3b-fp8", ["--tp", "4", "--ep", "4"]),
    "ds3-tp8": ("deepseek-v3", ["--tp", "8"]),
    "ds3-tp8-ep8": ("deepseek-v3", ["--tp", "8", "--ep", "8"]),
    "ds3-tp8-trtllm": ("deepseek-v3", ["--tp", "8", "--moe-runner-backend", "flashinfer_trtllm"]),
    "ds2lite-tp1": ("deepseek-v2-lite", ["--tp", "1"]),
    "ds2lite-tp2": ("deepseek-v2-lite", ["--tp", "2"]),
    "ds2lite-tp4-ep4": ("deepseek-v2-lite", ["--tp", "4", "--ep", "4"]),
    "ds2lite-tp2-trtllm": ("deepseek-v2-lite", ["--tp", "2", "--moe-runner-backend", "flashinfer_trtllm"]),
    "llama4-tp4": ("llama4-scout", ["--tp", "4"]),
    "llama4-tp8": ("llama4-scout", ["--tp", "8"]),
    "llama4-tp8-ep8": ("llama4-scout", ["--tp", "8", "--ep", "8"]),
    "llama4-tp8-trtllm": ("llama4-scout", ["--tp", "8", "--moe-runner-backend", "flashinfer_trtllm"]),
    "kimi-tp8": ("kimi-k2", ["--tp", "8"]),
    "kimi-tp8-ep8": ("kimi-k2", ["--tp", "8", "--ep", "8"]),
    "kimi-int4-tp8": ("kimi-k2-thinking", ["--tp", "8"]),
    "kimi-int4-tp8-trtllm": ("kimi-k2-thinking", ["--tp", "8", "--moe-runner-backend", "flashinfer_trtllm"]),
    "llama8b-tp1": ("llama31-8b", ["--tp", "1"]),
    "llama8b-tp8": ("llama31-8b", ["--tp", "8"]),
    "llama8b-tp2-fa4": ("llama31-8b", ["--tp", "2", "--attention-backend", "fa4"]),
    "llama8b-tp1-nvfp4": ("llama31-8b", ["--tp", "1", "--quantization", "modelopt_fp4"]),
    "llama70b-tp4": ("llama31-70b", ["--tp", "4"]),
    "llama8b-awq-tp2": ("llama31-8b-awq", ["--tp", "2"]),
    "llama8b-awq-tp8": ("llama31-8b-awq", ["--tp", "8"]),
    "llama70b-awq-tp4": ("llama31-70b-awq", ["--tp", "4"]),
    "llama70b-awq-tp8": ("llama31-70b-awq", ["--tp", "8"]),
}
#: runner name: the words before the launch (Llama-3.1-70B --tp 8)
RUNNERS: dict[str, list[str]] = {
    "ionice-c2-n7": ["ionice", "-c2", "-n7"],
    "ionice-c3": ["ionice", "-c", "3"],
    "ionice-c2-n9": ["ionice", "-c2", "-n9"],
    "chrt-o0": ["chrt", "-o", "0"],
    "chrt-b0": ["chrt", "-b", "0"],
    "chrt-i0": ["chrt", "-i", "0"],
    "chrt-f1": ["chrt", "-f", "1"],
    "taskset-c": ["taskset", "-c", "0-15"],
    "taskset-mask": ["taskset", "0xffff"],
    "taskset-high": ["taskset", "-c", "200-255"],
    "srun-N1": ["env", "SLURM_JOB_ID=4242", "SLURM_JOB_NUM_NODES=1", "SLURM_JOB_NODELIST=gpu01", "srun", "-N1"],
    "srun-N1-1": ["env", "SLURM_JOB_ID=4242", "SLURM_JOB_NUM_NODES=1", "SLURM_JOB_NODELIST=gpu01", "srun", "-N",
                  "1-1"],
    "srun-w": ["env", "SLURM_JOB_ID=4242", "SLURM_JOB_NUM_NODES=1", "SLURM_JOB_NODELIST=gpu01", "srun", "-w",
               "gpu01"],
    "srun-N2-in-1": ["env", "SLURM_JOB_ID=4242", "SLURM_JOB_NUM_NODES=1", "SLURM_JOB_NODELIST=gpu01", "srun",
                     "-N2"],
    "runuser": ["runuser", "-u", "sglang", "--"],
    "su-c": ["su", "sglang", "-c"],  # the launch as one word (its shell string)
    "su-login-c": ["su", "-", "sglang", "-c"],
    "su-s-c": ["su", "-s", "/bin/bash", "sglang", "-c"],
}  # fmt: skip
RUNNER_BOXES = ("h200-0.5.23", "b200-0.5.23")


def _boxes(out: Path) -> dict[str, Path]:
    paths = {
        "h200-0.5.23": _box(out, "0.5.23", None),
        "b200-0.5.22": _moe_box(out, "0.5.22", "b200", "pkg"),
        "b200-0.5.23": _moe_box(out, "0.5.23", "b200", "pkg"),
    }
    # (write_box after _moe_box: factcheck49._box rewrites out/box-h200-REL.json, read again by each _moe_box)
    paths = {name: write_box(out, json.loads(p.read_text()), f"{name}.json") for name, p in paths.items()}
    doc = json.loads(paths["b200-0.5.23"].read_text())
    doc["facts"]["packages"]["nvidia-cutlass-dsl"] = {"installed": False}
    paths["b200-0.5.23-nodsl"] = write_box(out, doc, "b200-0.5.23-nodsl.json")
    return paths


def _ok_rows(out: Path, doc: dict[str, Any], labels: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for f in doc.get("features") or []:
        if f.get("status") == "ok":
            rows.append({"pop": "g", **labels, "feature": f.get("feature"), "reasons": []})
    for c in (doc.get("preflight") or {}).get("checks") or []:
        if c.get("status") == "ok":
            observed = json.loads(json.dumps(c.get("observed")).replace(str(out), "OUT"))
            rows.append({"pop": "g", **labels, "check": c.get("check"), "reasons": [[c.get("check"), observed, "ok"]]})
    return rows


def gate_rows(out: Path) -> list[dict[str, Any]]:
    boxes = _boxes(out)
    rows: dict[str, dict[str, Any]] = {}
    lines: list[tuple[str, str, list[str]]] = []
    for name, (model, flags) in LAUNCHES.items():
        for box in boxes:
            lines.append((box, name, [*LAUNCH, "--model-path", str(out / "models" / model), *flags]))
    base = [*LAUNCH, "--model-path", str(out / "models" / "llama31-70b"), "--tp", "8"]
    for name, words in RUNNERS.items():
        line = [*words, shlex.join(base)] if words[-1] == "-c" else [*words, *base]
        for box in RUNNER_BOXES:
            lines.append((box, f"runner:{name}", line))
    allowed = 0
    for box, name, line in lines:
        doc = stackcheck_json_or_error(["gate", "--facts", str(boxes[box]), "--dry-run", "--format", "json", "--",
                                        *line])  # fmt: skip
        if doc.get("decision") != "allow":
            continue
        allowed += 1
        for row in _ok_rows(out, doc, {"box": box, "launch": name}):
            rows.setdefault(json.dumps(row, sort_keys=True), row)
    print(f"g: {len(lines)} launches, {allowed} allowed, {len(rows)} rows", file=sys.stderr, flush=True)
    return list(rows.values())


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    draw_undrawn(out, SEED, [(K, gate_rows(out))], "factcheck68_drawn.json")


if __name__ == "__main__":
    main()
