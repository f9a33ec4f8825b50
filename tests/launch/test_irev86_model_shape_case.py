"""irev86: the model-shape check reads a checkpoint's quant_method as SGLang does, lower-cased (ModelConfig's
_verify_quantization: sglang 0.5.9 configs/model_config.py:902-904, 0.5.23 :2077-2079; AWQ Marlin's own test
lower-cases it too: 0.5.9 layers/quantization/awq.py:330, 0.5.23 awq/awq.py:404). A config.json saying "AWQ" or
"FP8" was not judged, so ishape3's refusals (an AWQ MoE share moe_wna16 cannot group, a block-FP8 attention
partition off the block), the older dense-MLP group check and refusal fp8-block-moe-tp-split passed it (the gate runs
in this process for the last). The shapes are test_ishape3_model_shape.py's
(Qwen1.5-MoE-A2.7B, Llama-3.2-1B), the files this test's own."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from stackcheck.cli import main
from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.preflight.shapes import SHAPE_CHECK, shape_results

CASES = Path(__file__).resolve().parents[1] / "cases"
TABLE = (load(env={}).preflight.get("model") or {}).get("model_shape")
QWEN15_MOE: dict[str, Any] = {
    "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60, "num_experts_per_tok": 4,
    "moe_intermediate_size": 1408, "intermediate_size": 5632, "shared_expert_intermediate_size": 5632,
    "quantization_config": {"quant_method": "AWQ", "bits": 4, "group_size": 128, "zero_point": True},
}  # fmt: skip
LLAMA32_1B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "head_dim": 64,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
    "quantization_config": {"quant_method": "FP8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]},
}  # fmt: skip


def _shape(config: dict[str, Any], tp: int, eps: list[int] | None) -> list[tuple[str, str]]:
    got = shape_results(attention_keys(config), False, tp, [tp], eps, "0.5.23", "model m", table=TABLE)
    return [(r.status, r.check) for r in got]


def test_an_upper_case_quant_method_is_judged_as_sglang_reads_it() -> None:
    # 1408 / 8 = 176 per rank: moe_wna16 halves the AWQ group 128 below 32 (ishape3's refusal)
    assert _shape(QWEN15_MOE, 8, [1]) == [("fail", SHAPE_CHECK)]
    # one KV head per rank at 8, 64 wide: no multiple of block_n 128 (ishape3's attention partitions)
    assert _shape(LLAMA32_1B, 8, None) == [("fail", SHAPE_CHECK)]
    # the older dense-MLP group check: 5632 / 8 = 704, 704 % 128 = 64 (AWQ's linear method raises)
    dense = {**QWEN15_MOE, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}
    dense = {k: v for k, v in dense.items() if k not in ("num_experts", "moe_intermediate_size")}
    assert _shape(dense, 8, None) == [("fail", SHAPE_CHECK)]


def test_refusal_fp8_block_moe_tp_split_reads_an_upper_case_fp8(tmp_path: Path) -> None:
    # DeepSeek-V2-Lite's experts (moe_intermediate_size 1408): 1408 / 8 = 176 per rank, no multiple of block_n 128
    cfg = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 2048,
           "num_attention_heads": 16, "num_key_value_heads": 16, "n_routed_experts": 64, "moe_intermediate_size": 1408,
           "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
           "quantization_config": {"quant_method": "FP8", "activation_scheme": "dynamic",
                                   "weight_block_size": [128, 128]}}  # fmt: skip
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--dry-run", "--format", "json",
              "--", "python", "-m", "sglang.launch_server", "--model-path", str(tmp_path / "m"), "--tp", "8",
              "--attention-backend", "triton", "--moe-runner-backend", "triton"])  # fmt: skip
    found = [r for r in json.loads(out.getvalue())["reasons"] if r["feature"] == "refusal fp8-block-moe-tp-split"]
    assert [f["status"] for f in found] == ["blocked"]
