"""irobust15: ishape's dense-MLP rule judged only LlamaForCausalLM, so a Qwen2.5-72B AWQ checkpoint (intermediate_size
29568, group_size 128) at --tp 8 was allowed: 29568 / 8 = 3696 per rank is not a multiple of 128, and SGLang's AWQ
linear / Marlin method raises ValueError 'The input size is not aligned with the quantized weight shape' as it builds
the down projection (the error the Qwen 72B AWQ issues report: vllm-project/vllm#5675, QwenLM/Qwen3-VL#831). Qwen2's
and Qwen3's MLP (Qwen2MLP) and Mistral's (LlamaForCausalLM's subclass) are the same two layers split by the full TP
size (sglang 0.5.9 / 0.5.23 wheels: srt/models/qwen2.py, qwen3.py, mistral.py), so they are judged too, and so is
the Qwen2-VL / Qwen2.5-VL language model (Qwen2Model on the whole config; Qwen2.5-VL builds none with --encoder-only).
The shapes are the published checkpoints' sizes written here by hand (Qwen2.5-72B, Qwen2.5-VL-72B, Qwen3-4B); the
configs are this test's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json
from recommend_cli import clean_recommend_env, recommend_json

from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.preflight.shapes import SHAPE_CHECK, shape_results

__all__ = ["clean_recommend_env"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23, 8 GPUs)

AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
BLOCK_FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
QWEN25_72B_AWQ: dict[str, Any] = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 8192, "num_attention_heads": 64,
    "num_key_value_heads": 8, "intermediate_size": 29568, "torch_dtype": "float16", "quantization_config": AWQ,
}  # fmt: skip
QWEN3_4B_FP8: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "hidden_size": 2560, "head_dim": 128,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 9728, "torch_dtype": "bfloat16",
    "quantization_config": BLOCK_FP8,
}  # fmt: skip


QWEN25_VL_72B_AWQ: dict[str, Any] = {
    **QWEN25_72B_AWQ, "architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
    "vision_config": {"depth": 32, "hidden_size": 1280, "intermediate_size": 3456, "num_heads": 16},
    "quantization_config": {**AWQ, "modules_to_not_convert": ["visual"]},
}  # fmt: skip


def _shape(config: dict[str, Any], tp: int) -> list[tuple[str, str]]:
    got = shape_results(attention_keys(config), False, tp, [tp], None, "0.5.23", "model m")
    return [(r.status, next(iter(r.observed))) for r in got]


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_qwen2_awq_share_not_a_multiple_of_the_group_fails(tp: int) -> None:
    assert _shape(QWEN25_72B_AWQ, tp) == [("fail", "intermediate_size")]  # (29568 = 231 x 128; before: [])


def test_qwen3_block_fp8_share_and_odd_size() -> None:
    assert _shape(QWEN3_4B_FP8, 8) == [("fail", "intermediate_size")]  # (9728 / 8 = 1216 = 9.5 x 128; before: [])
    assert _shape(QWEN3_4B_FP8, 4) == []  # (2432 = 19 x 128)
    mistral = {**QWEN3_4B_FP8, "architectures": ["MistralForCausalLM"], "model_type": "mistral"}
    assert _shape(mistral, 8) == [("fail", "intermediate_size")]
    odd = {**QWEN3_4B_FP8, "intermediate_size": 9729, "quantization_config": None}
    assert _shape(odd, 2) == [("fail", "intermediate_size")]


def test_the_result_names_the_qwen2_mlp_source() -> None:
    got = shape_results(attention_keys(QWEN25_72B_AWQ), False, 8, [8], None, "0.5.23", "model m")
    titles = " ".join(s["title"] for s in got[0].source or [])
    assert "srt/models/qwen2.py:62-84" in titles and "qwen2.py:74-98" in titles
    assert "3696" in got[0].message and "group_size 128" in got[0].message
    assert _shape(QWEN25_72B_AWQ, 1) == []
    plain = {k: v for k, v in QWEN25_72B_AWQ.items() if k != "quantization_config"}
    assert _shape(plain, 8) == []  # (3696 per rank loads unquantized)


def _gate(root: Path, config: dict[str, Any], *flags: str) -> tuple[str, list[tuple[str, str]]]:
    (root / "m").mkdir(exist_ok=True)
    (root / "m" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(root), "--dry-run", "--format", "json", "--",
                          "python", "-m", "sglang.launch_server", "--model-path", "m", *flags)  # fmt: skip
    return str(doc["decision"]), [
        (c["check"], c["status"]) for c in doc["preflight"]["checks"] if c["check"] == SHAPE_CHECK
    ]


def test_gate_refuses_a_qwen2_awq_at_tp_8(tmp_path: Path) -> None:
    assert _gate(tmp_path, QWEN25_72B_AWQ, "--tp", "8") == ("refuse", [(SHAPE_CHECK, "fail")])  # (before: allow)


def test_gate_refuses_a_qwen25_vl_awq_at_tp_4_unless_encoder_only(tmp_path: Path) -> None:
    assert _gate(tmp_path, QWEN25_VL_72B_AWQ, "--tp", "4") == ("refuse", [(SHAPE_CHECK, "fail")])  # (before: allow)
    assert _gate(tmp_path, QWEN25_VL_72B_AWQ, "--tp", "4", "--encoder-only")[1] == []  # (no language model built)


def test_qwen2_vl_and_nested_text_config() -> None:
    qwen2_vl = {**QWEN25_72B_AWQ, "architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl"}
    assert _shape(qwen2_vl, 8) == [("fail", "intermediate_size")]  # (before: [])
    text = {k: QWEN25_72B_AWQ[k] for k in ("hidden_size", "num_attention_heads", "num_key_value_heads",
                                           "intermediate_size")}  # fmt: skip
    nested = {"architectures": ["Qwen2_5_VLForConditionalGeneration"], "model_type": "qwen2_5_vl",
              "text_config": text, "quantization_config": AWQ}  # fmt: skip
    assert _shape(nested, 2) == [("fail", "intermediate_size")]  # (14784 = 115.5 x 128; before: [])


def test_recommend_picks_a_tp_the_awq_share_admits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Qwen2.5-14B's published shape (40 query / 8 KV heads, intermediate_size 13824) as an AWQ checkpoint: the heads
    # divide 8, but 13824 / 8 = 1728 is not a multiple of 128; 13824 / 4 = 3456 is
    config = {**QWEN25_72B_AWQ, "hidden_size": 5120, "num_attention_heads": 40, "intermediate_size": 13824}
    (tmp_path / "q14").mkdir()
    (tmp_path / "q14" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    rc, doc = recommend_json("--facts", str(FACTS), "--model-path", "q14")
    assert rc == 0 and doc["command"][doc["command"].index("--tp-size") + 1] == "4", doc["command"]  # (before: 8)
    assert any("a dense MLP's share per rank" in a for a in doc["assumptions"]), doc["assumptions"]


# an llm-compressor W4A16 export's quantization_config, in the shape such a checkpoint's config.json states it
W4A16: dict[str, Any] = {
    "quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
    "quantization_status": "compressed", "kv_cache_scheme": None,
    "config_groups": {"group_0": {
        "targets": ["Linear"], "input_activations": None, "output_activations": None,
        "weights": {"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group", "group_size": 128,
                    "dynamic": False, "actorder": None, "observer": "minmax"},
    }},
}  # fmt: skip
QWEN25_14B_W4A16: dict[str, Any] = {
    **QWEN25_72B_AWQ, "hidden_size": 5120, "num_attention_heads": 40, "intermediate_size": 13824,
    "quantization_config": W4A16,
}  # fmt: skip


def test_compressed_tensors_w4a16_share_not_a_multiple_of_the_group_fails() -> None:
    # (13824 / 8 = 1728 = 13.5 x 128: CompressedTensorsWNA16.create_weights asserts; before: [])
    assert _shape(QWEN25_14B_W4A16, 8) == [("fail", "intermediate_size")]
    got = shape_results(attention_keys(QWEN25_14B_W4A16), False, 8, [8], None, "0.5.23", "model m")
    assert "compressed-tensors WNA16 group_size 128" in got[0].message
    assert any("compressed_tensors_wNa16.py" in s["title"] for s in got[0].source or [])
    assert _shape(QWEN25_14B_W4A16, 4) == []  # (3456 = 27 x 128)
    # not this scheme, or the down projection left out: not judged
    groups = W4A16["config_groups"]
    w8a8 = {**W4A16, "config_groups": {"group_0": {**groups["group_0"], "input_activations": {"num_bits": 8}}}}
    for qc in (w8a8, {**W4A16, "ignore": ["lm_head", "re:.*down_proj"]}, {**W4A16, "format": "float-quantized"}):
        assert _shape({**QWEN25_14B_W4A16, "quantization_config": qc}, 8) == []


def test_gate_refuses_a_w4a16_qwen2_at_tp_8(tmp_path: Path) -> None:
    assert _gate(tmp_path, QWEN25_14B_W4A16, "--tp", "8") == ("refuse", [(SHAPE_CHECK, "fail")])  # (before: allow)


def test_a_thinker_config_text_config_is_judged() -> None:
    # Qwen3-Omni's shape: the heads and experts only under thinker_config.text_config (SGLang's get_hf_text_config
    # and qwen3_omni_moe.py read them there); 32 query heads at --tp 3 fail, none was judged before
    text = {"hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4, "num_experts": 128}
    omni = {"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
            "thinker_config": {"model_type": "qwen3_omni_moe_thinker", "text_config": text}}  # fmt: skip
    assert ("fail", "num_attention_heads") in _shape(omni, 3)  # (before: [])
    got = shape_results(attention_keys(omni), False, 8, [8], [3], "0.5.23", "model m")
    assert [(r.status, next(iter(r.observed))) for r in got] == [
        ("fail", "experts"),  # (128 % 3; before: [])
        ("fail", "thinker_config.audio_config.encoder_attention_heads"),  # (ifc70: 20 audio heads at 8)
    ]
    assert _shape(omni, 4) == []
    # a Llava*ForCausalLM is read at the top level (SGLang returns the whole config for it)
    llava = {"architectures": ["LlavaLlamaForCausalLM"], "model_type": "llava", "num_attention_heads": 32,
             "num_key_value_heads": 8, "text_config": {"num_attention_heads": 33}}  # fmt: skip
    assert _shape(llava, 2) == []  # (before: 33 heads judged, a fail)
