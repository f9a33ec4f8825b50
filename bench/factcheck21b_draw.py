"""The twenty-first fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Twenty-first
sample").

    PYTHONPATH=. python bench/factcheck21b_draw.py OUT_DIR

Fixed before any row was checked. Aimed at what no earlier sample drew: the gate's allows under the rules merged in
the last two stops (igap3's quant-loader minimums, igap4's megamoe draft runner / flashinfer_megamoe all-to-all /
SGLANG_MINICPM_FUSE_TOPK / moe_only / checkpoint_unquantized, irev41's MoE shapes of Qwen3-Omni and ERNIE-4.5-VL,
ifc20's preflight flag-checkpoint conflicts), and the gate's allows of speculative decoding with draft models.

(a) `gate --dry-run --format json` with `--tp 8` on tests/cases/h200-newest with every final SGLang release
    0.5.13-0.5.23 and its pins (factcheck7_draw.release_box), its GPUs set to 8.0, 8.9, 9.0, 10.0, 12.0 and 12.1:
    each launch of RECENT: one row per allow;
(b) the same on every final release 0.5.5-0.5.23 for each launch of SPECULATIVE (EAGLE, EAGLE3, MTP as EAGLE and
    NEXTN on the target's own checkpoint, NGRAM, STANDALONE): one row per allow.

Model configs are written here in the published checkpoints' shape (not copied).
Draw: random.Random(20261221); per population its rows sorted by their JSON text, shuffled, the first k (a: 9,
b: 9), 18 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck_draw import cc_box as _box
from factcheck_draw import draw, final_releases, stackcheck_json, write_models
from factcheck_draw import release_tuple as _v

SEED = 20261221
_LLAMA3 = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
           "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": 32,
           "intermediate_size": 14336, "torch_dtype": "bfloat16"}  # fmt: skip
_QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
             "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
             "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94}  # fmt: skip
_DSV3 = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
         "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
         "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
         "num_experts_per_tok": 8, "moe_intermediate_size": 2048, "num_hidden_layers": 61,
         "num_nextn_predict_layers": 1}  # fmt: skip
_OMNI_TEXT = {"model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "num_attention_heads": 32,
              "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
              "moe_intermediate_size": 768}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama3": _LLAMA3,
    "llama3-eagle": {**_LLAMA3, "architectures": ["LlamaForCausalLMEagle"], "num_hidden_layers": 1},
    "llama3-eagle3": {**_LLAMA3, "architectures": ["LlamaForCausalLMEagle3"], "num_hidden_layers": 1,
                      "draft_vocab_size": 32000},
    "llama3-1b": {**_LLAMA3, "hidden_size": 2048, "num_hidden_layers": 16, "head_dim": 64},
    "qwen3moe": _QWEN3MOE,
    "dsv3-fp8": {**_DSV3, "quantization_config": {"quant_method": "fp8", "fmt": "e4m3",
                                                  "activation_scheme": "dynamic", "weight_block_size": [128, 128]}},
    "dsv3": _DSV3,
    "qwen3-omni": {"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
                   "thinker_config": {"model_type": "qwen3_omni_moe_thinker", "text_config": _OMNI_TEXT}},
    "ernie45-vl": {"architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "model_type": "ernie4_5_moe_vl",
                   "hidden_size": 2560, "num_attention_heads": 20, "num_key_value_heads": 4,
                   "moe_num_experts": [64, 64], "moe_intermediate_size": [1536, 512]},
    "minicpm-sala": {"architectures": ["MiniCPMSALAForCausalLM"], "model_type": "minicpm_sala", "hidden_size": 4096,
                     "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128,
                     "sparse_config": {"kernel_size": 32, "kernel_stride": 16, "block_size": 64,
                                       "window_size": 2048, "topk": 64}},
}  # fmt: skip
_STEPS = "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"
# name -> (model, flags, environment, first release)
RECENT: dict[str, tuple[str, str, str, str]] = {
    "megamoe-runner-mtp": ("dsv3-fp8", "--moe-runner-backend flashinfer_megamoe --speculative-algorithm EAGLE "
                           f"{_STEPS}", "", "0.5.13"),
    "megamoe-a2a": ("dsv3-fp8", "--moe-a2a-backend flashinfer_megamoe --ep 8", "", "0.5.13"),
    "megamoe-env": ("dsv3-fp8", "", "SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE=1", "0.5.13"),
    "minicpm-fuse-topk": ("minicpm-sala", "--attention-backend minicpm_flashattn", "SGLANG_MINICPM_FUSE_TOPK=1",
                          "0.5.19"),
    "deep-gemm-omni": ("qwen3-omni", "--moe-runner-backend deep_gemm", "", "0.5.13"),
    "deep-gemm-ernie-vl": ("ernie45-vl", "--moe-runner-backend deep_gemm", "", "0.5.13"),
    "deep-gemm-dense": ("llama3", "--moe-runner-backend deep_gemm", "", "0.5.13"),
    "fp8-online-moe": ("qwen3moe", "--quantization fp8", "", "0.5.13"),
    "w8a8-fp8-online": ("llama3", "--quantization w8a8_fp8", "", "0.5.13"),
    "modelopt-fp4-online": ("llama3", "--quantization modelopt_fp4", "", "0.5.13"),
}  # fmt: skip
SPECULATIVE: dict[str, tuple[str, str, str, str]] = {
    "eagle": ("llama3", f"--speculative-algorithm EAGLE --speculative-draft-model-path DRAFT:llama3-eagle {_STEPS}",
              "", "0.5.5"),
    "eagle3": ("llama3", f"--speculative-algorithm EAGLE3 --speculative-draft-model-path DRAFT:llama3-eagle3 "
               f"{_STEPS}", "", "0.5.5"),
    "mtp-eagle": ("dsv3-fp8", f"--speculative-algorithm EAGLE {_STEPS}", "", "0.5.5"),
    "mtp-nextn": ("dsv3-fp8", f"--speculative-algorithm NEXTN {_STEPS}", "", "0.5.5"),
    "ngram": ("llama3", "--speculative-algorithm NGRAM", "", "0.5.5"),
    "standalone": ("llama3", f"--speculative-algorithm STANDALONE --speculative-draft-model-path DRAFT:llama3-1b "
                   f"{_STEPS}", "", "0.5.5"),
}  # fmt: skip
GATE_CCS = ["8.0", "8.9", "9.0", "10.0", "12.0", "12.1"]


def gate_rows(out: Path, pop: str, launches: dict[str, tuple[str, str, str, str]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for cc in GATE_CCS:
        for rel in final_releases():
            firsts = [first for _, _, _, first in launches.values()]
            if _v(rel) < min(map(_v, firsts)):
                continue
            box = _box(out, rel, cc)
            for name, (model, flags, env, first) in launches.items():
                if _v(rel) < _v(first):
                    continue
                words = [str(out / "models" / w[6:]) if w.startswith("DRAFT:") else w for w in flags.split()]
                line = ["env", env] if env else []
                line += ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / model)]
                args = ["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line, "--tp", "8", *words]
                if stackcheck_json(args).get("decision") == "allow":
                    rows.append({"pop": pop, "cc": cc, "sglang": rel, "launch": name, "model": model,
                                 "flags": flags, "env": env})  # fmt: skip
        print(f"{pop} {cc}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    write_models(out, MODELS)
    a = gate_rows(out, "a", RECENT)
    b = gate_rows(out, "b", SPECULATIVE)
    draw(out, SEED, [(9, a), (9, b)])


if __name__ == "__main__":
    main()
