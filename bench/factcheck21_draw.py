"""The twenty-first fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Twenty-first
sample").

    PYTHONPATH=. python bench/factcheck21_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the gate's allows under the rules merged in
the last two stops (igap3's quant-loader-* minimums, igap4's megamoe draft runner / flashinfer_megamoe all-to-all /
SGLANG_MINICPM_FUSE_TOPK / moe_only / checkpoint_unquantized, irev41's MoE shape reading of Qwen3-Omni and
ERNIE-4.5-VL, ifc20's preflight flag-checkpoint conflicts), and the gate's allows of speculative decoding launches
(EAGLE, EAGLE3, MTP, NGRAM) with draft models.

(a) `gate --dry-run --format json` with `--tp 8` on tests/cases/h200-newest with every final SGLang release
    0.5.13-0.5.23 and its pins (factcheck7_draw.release_box), its GPUs set to 8.0, 8.9, 9.0, 10.0 and 12.0: each
    launch of RECENT: one row per allow;
(b) the same with every final release 0.5.5-0.5.23 and the GPUs set to 8.0, 8.9, 9.0, 10.0, 12.0 and 12.1: each
    launch of SPEC: one row per allow.

Draw: random.Random(20261221); per population its rows sorted by their JSON text, shuffled, the first k (a: 9,
b: 9), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import cc_box as _box
from factcheck_draw import draw, final_releases, gate, write_models
from factcheck_draw import release_tuple as _v

SEED = 20261221
_LLAMA3 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32,
           "intermediate_size": 14336, "torch_dtype": "bfloat16"}  # fmt: skip
_DSR1 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
         "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
         "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
         "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "num_nextn_predict_layers": 1,
         "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                 "weight_block_size": [128, 128]}}  # fmt: skip
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "llama3-awq": {**_LLAMA3, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
                                                      "zero_point": True, "version": "gemm"}},
    "llama3-gptq": {**_LLAMA3, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128,
                                                       "desc_act": False, "sym": True}},
    "deepseek-r1": _DSR1,
    "qwen3moe": _QWEN3MOE,
    "qwen3-omni": {"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
                   "thinker_config": {"model_type": "qwen3_omni_moe_thinker", "text_config": {
                       "model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "num_attention_heads": 32,
                       "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
                       "moe_intermediate_size": 768}}},
    "ernie45-vl": {"architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "model_type": "ernie4_5_moe_vl",
                   "hidden_size": 2560, "num_attention_heads": 20, "num_key_value_heads": 4,
                   "moe_num_experts": [64, 64], "moe_intermediate_size": [1536, 512]},
    "eagle-draft": {"architectures": ["LlamaForCausalLMEagle"], "model_type": "llama", "hidden_size": 4096,
                    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 1},
    "eagle3-draft": {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 4096,
                     "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 1},
    "qwen3moe-eagle3-draft": {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama",
                              "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 4,
                              "head_dim": 128, "num_hidden_layers": 1},
}  # fmt: skip
_STEPS = "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
_MTP = "--speculative-algorithm EAGLE --speculative-num-steps 1 --speculative-eagle-topk 1"
_MTP += " --speculative-num-draft-tokens 2"
# (model, flags; {m} is OUT/models, {env} an `env NAME=VALUE` prefix where the launch sets one)
RECENT: list[tuple[str, str]] = [
    ("deepseek-r1", "--moe-runner-backend flashinfer_megamoe"),
    ("deepseek-r1", f"--moe-runner-backend flashinfer_megamoe {_MTP}"),
    ("deepseek-r1", f"--moe-runner-backend flashinfer_megamoe {_MTP} --speculative-moe-runner-backend triton"),
    ("deepseek-r1", "--moe-a2a-backend flashinfer_megamoe"),
    ("qwen3moe", "--moe-runner-backend deep_gemm"),
    ("qwen3-omni", "--moe-runner-backend deep_gemm"),
    ("ernie45-vl", "--moe-runner-backend deep_gemm"),
    ("llama3", "--moe-runner-backend deep_gemm"),
    (
        "llama3",
        "--moe-runner-backend deep_gemm --speculative-algorithm EAGLE3 --speculative-draft-model-path "
        "{m}/eagle3-draft " + _STEPS,
    ),
    ("llama3", "--quantization fp8"),
    ("llama3", "--quantization w8a8_fp8"),
    ("llama3", "--quantization modelopt_fp4"),
    ("llama3", "--quantization w4afp8"),
    ("llama3-awq", "--quantization awq_marlin"),
    ("llama3-gptq", "--quantization gptq"),
    ("llama3", "env SGLANG_MINICPM_FUSE_TOPK=1 --attention-backend minicpm_flashattn"),
]
SPEC: list[tuple[str, str]] = [
    ("llama3", "--speculative-algorithm EAGLE --speculative-draft-model-path {m}/eagle-draft " + _STEPS),
    ("llama3", "--speculative-algorithm EAGLE3 --speculative-draft-model-path {m}/eagle3-draft " + _STEPS),
    ("llama3", "--speculative-algorithm NGRAM"),
    ("deepseek-r1", _MTP),
    (
        "deepseek-r1",
        "--speculative-algorithm NEXTN --speculative-num-steps 1 --speculative-eagle-topk 1 "
        "--speculative-num-draft-tokens 2",
    ),
    ("qwen3moe", "--speculative-algorithm EAGLE3 --speculative-draft-model-path {m}/qwen3moe-eagle3-draft " + _STEPS),
]


def _line(out: Path, model: str, flags: str) -> tuple[list[str], list[str]]:
    words = flags.format(m=out / "models").split()
    env: list[str] = []
    if words and words[0] == "env":
        env, words = words[:2], words[2:]
    return env, ["--model-path", str(out / "models" / model), "--tp", "8", *words]


def gate_rows(out: Path, pop: str, first: str, ccs: list[str], launches: list[tuple[str, str]]) -> list[Any]:
    from factcheck_draw import stackcheck_json

    rows: list[dict[str, Any]] = []
    for cc in ccs:
        for rel in [r for r in final_releases() if _v(r) >= _v(first)]:
            box = _box(out, rel, cc)
            for model, flags in launches:
                env, line = _line(out, model, flags)
                if env:
                    args = ["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *env]
                    doc = stackcheck_json([*args, "python3", "-m", "sglang.launch_server", *line])
                else:
                    doc = gate(box, line)
                if doc.get("decision") == "allow":
                    rows.append({"pop": pop, "cc": cc, "sglang": rel, "model": model,
                                 "flags": flags.replace("{m}/", "")})  # fmt: skip
        print(f"{pop} {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out, "a", "0.5.13", ["8.0", "8.9", "9.0", "10.0", "12.0"], RECENT)
    b = gate_rows(out, "b", "0.5.5", ["8.0", "8.9", "9.0", "10.0", "12.0", "12.1"], SPEC)
    draw(out, SEED, [(9, a), (9, b)])


if __name__ == "__main__":
    main()
