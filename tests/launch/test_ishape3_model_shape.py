"""ishape3: the model-shape check's quantized-MoE gaps, each a false pass (the gate allowed a launch SGLang refuses as
it builds the model):

- an AWQ MoE checkpoint's group_size against the MoE intermediate size per rank: AWQ Marlin's MoE check sends a
  share that is not a multiple of max(64, group) to moe_wna16, whose create_weights halves the group until it
  divides the share and asserts it stays >= 32 (sglang 0.5.9 awq.py:313-324, moe_wna16.py:258-261; 0.5.23
  awq/awq.py:378-392, moe_wna16.py:276-279): fail; a GPTQ MoE checkpoint whose share is not a multiple of its group:
  unknown (GPTQ Marlin's MoE method checks nothing; the load was not read);
- MixtralForCausalLM's intermediate_size is its experts' size (mixtral.py builds FusedMoE with it): judged by the MoE
  TP size as the other MoE architectures' (preflight.json model.model_shape.moe_intermediate).

The shapes are published checkpoints' values written here by hand: Qwen1.5-MoE-A2.7B (Qwen2MoeForCausalLM,
hidden_size 2048, 16 / 16 heads, 60 experts, moe_intermediate_size 1408, intermediate_size 5632); its
quantization_config in the keys an AutoAWQ GEMM export writes (quant_method awq, bits 4, group_size 128,
zero_point true, version gemm) and Qwen's own GPTQ-Int4 export writes (quant_method gptq, bits 4, group_size 128,
desc_act false, sym true); Mixtral-8x7B (32 / 8 heads, 8 local experts, intermediate_size 14336). The files are this
test's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json

from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.preflight.shapes import SHAPE_CHECK, shape_results

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23, 8 GPUs)
TABLE = (load(env={}).preflight.get("model") or {}).get("model_shape")

AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
GPTQ = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True, "damp_percent": 0.01}
QWEN15_MOE: dict[str, Any] = {
    "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60, "num_experts_per_tok": 4,
    "moe_intermediate_size": 1408, "intermediate_size": 5632, "shared_expert_intermediate_size": 5632,
}  # fmt: skip
MIXTRAL: dict[str, Any] = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_local_experts": 8, "intermediate_size": 14336,
}  # fmt: skip


def _shape(config: dict[str, Any], tp: int, eps: list[int], quantization: str | None = None) -> list[tuple[str, str]]:
    got = shape_results(attention_keys(config), False, tp, [tp], eps, "0.5.23", "model m", table=TABLE,
                        quantization=quantization)  # fmt: skip
    return [(r.status, r.check) for r in got]


def test_an_awq_moe_share_below_the_halved_group_fails() -> None:
    awq = {**QWEN15_MOE, "quantization_config": AWQ}
    # 1408 / 8 = 176: not a multiple of 64 (AWQ Marlin refuses it), then moe_wna16 halves 128 to 64, 32, 16 (< 32)
    assert _shape(awq, 8, [1]) == [("fail", SHAPE_CHECK)]
    got = shape_results(attention_keys(awq), False, 8, [8], [1], "0.5.23", "m", table=TABLE)[0]
    assert got.observed["group_size"] == 128 and "176" in got.message and "group_size >= 32" in got.message
    assert "moe_wna16.py:276-279" in " ".join(s["title"] for s in got.source or [])
    # 1408 / 4 = 352: moe_wna16 takes it at a group of 32 (352 = 11 x 32); unquantized at 8: loads
    assert _shape(awq, 4, [1]) == [] and _shape(QWEN15_MOE, 8, [1]) == []
    # EP 2 at TP 8: MoE TP 4, the same 352 per rank; where SGLang may take either EP size: unknown
    assert _shape(awq, 8, [2]) == [] and _shape(awq, 8, [1, 2]) == [("unknown", SHAPE_CHECK)]
    # --quantization awq takes AWQConfig, whose MoE method was not read: unknown; moe_wna16 asserts the same
    assert _shape(awq, 8, [1], "awq") == [("unknown", SHAPE_CHECK)]
    assert _shape(awq, 8, [1], "moe_wna16") == [("fail", SHAPE_CHECK)]
    # experts left unquantized may be among modules_to_not_convert: not judged
    assert _shape({**awq, "quantization_config": {**AWQ, "modules_to_not_convert": ["mlp.gate"]}}, 8, [1]) == []


def test_a_gptq_moe_share_off_the_group_is_unknown() -> None:
    gptq = {**QWEN15_MOE, "quantization_config": GPTQ}
    assert _shape(gptq, 8, [1]) == [("unknown", SHAPE_CHECK)]  # (176 % 128 = 48)
    assert _shape(gptq, 2, [1]) == [("unknown", SHAPE_CHECK)]  # (704 % 128 = 64)
    assert _shape(gptq, 1, [1]) == []  # (1408 = 11 x 128)
    got = shape_results(attention_keys(gptq), False, 8, [8], [1], "0.5.23", "m", table=TABLE)[0]
    assert "GPTQ Marlin's MoE method checks nothing" in got.message


def test_mixtral_experts_size_is_judged_by_the_moe_tp_size() -> None:
    # (an intermediate_size written here, 14000: Mixtral-8x7B's own 14336 splits at every power of two up to 2048)
    odd = {**MIXTRAL, "intermediate_size": 14000}
    assert _shape(odd, 32, [1]) == [("fail", SHAPE_CHECK)]  # (14000 % 32 = 16)
    assert _shape(MIXTRAL, 32, [1]) == [] and _shape(odd, 32, [2]) == []  # (MoE TP 16: 875 per rank)
    mixtral_awq = {**MIXTRAL, "quantization_config": AWQ}
    assert _shape(mixtral_awq, 8, [1]) == []  # (1792 = 14 x 128: AWQ Marlin)


# ---- end to end: `stackcheck gate` reads --quantization from the command line


def test_gate_judges_an_awq_moe_at_tp_8(tmp_path: Path) -> None:
    (tmp_path / "qwen15-moe-awq").mkdir()
    config = {**QWEN15_MOE, "quantization_config": AWQ}
    (tmp_path / "qwen15-moe-awq" / "config.json").write_text(json.dumps(config), encoding="utf-8")

    def gate(*flags: str) -> list[str]:
        doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(tmp_path), "--dry-run", "--format", "json",
                              "--", "python", "-m", "sglang.launch_server", "--model-path", "qwen15-moe-awq",
                              *flags)  # fmt: skip
        return [str(c["status"]) for c in doc["preflight"]["checks"] if c["check"] == SHAPE_CHECK]

    # one run (a process each): --quantization awq read from the command line makes the MoE method unknown; the
    # same launch without it fails (test_an_awq_moe_share_below_the_halved_group_fails, in process)
    assert gate("--tp", "8", "--quantization", "awq") == ["unknown"]  # (before: no result, allowed)


#: Llama-3.2-1B's shape (hidden_size 2048, head_dim 64, 32 / 8 heads, intermediate_size 8192) with the block-FP8
#: quantization_config keys Qwen3-4B-FP8's config.json states (test_ishape2_model_shape.BLOCK_FP8), written here
BLOCK_FP8 = {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}
LLAMA32_1B_FP8: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 2048, "head_dim": 64,
    "intermediate_size": 8192, "num_attention_heads": 32, "num_key_value_heads": 8, "quantization_config": BLOCK_FP8,
}  # fmt: skip


def test_block_fp8_attention_partitions_per_rank() -> None:
    # at 8: one KV head per rank, 64 wide, no multiple of block_n 128 (the QKV layer's partitions are all checked)
    got = shape_results(attention_keys(LLAMA32_1B_FP8), False, 8, [8], None, "0.5.23", "m", table=TABLE)
    assert [(r.status, r.observed.get("head_dim")) for r in got] == [("fail", 64)]
    assert "256 (query) / 64 (KV)" in got[0].message
    assert "linear.py:1105-1176" in " ".join(s["title"] for s in got[0].source or [])
    # at 4: 2 KV heads x 64 = 128, 8 query heads x 64 = 512: loads; unquantized at 8: loads
    assert _shape(LLAMA32_1B_FP8, 4, []) == [] and _shape({**LLAMA32_1B_FP8, "quantization_config": None}, 8, []) == []
    # head_dim not stated: a config class's default is not guessed (no result)
    unstated = {k: v for k, v in LLAMA32_1B_FP8.items() if k != "head_dim"}
    assert _shape(unstated, 8, []) == []
