"""irev82: recommend reads the served model with the gate preflight's read_model (irecmodel), but judged its line
without the preflight's model-config-keys results, which refuse the launch whatever its flags: ifc65's DeepSeek router
keys SGLang 0.5.20-0.5.23 read with no default, and irev82's norm_topk_prob that transformers 5 refuses
(tests/launch/test_irev82_config_types.py). It proposed a line (exit 0) for a config.json the gate refuses on every
line (unknown). Now no line is proposed (exit 1), the check named. The configs are this test's own minimal files."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from recommend_cli import clean_recommend_env, recommend_json

__all__ = ["clean_recommend_env"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23)
QWEN3_MOE: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 4,
    "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128, "torch_dtype": "bfloat16",
    "vocab_size": 1024, "num_experts": 16, "num_experts_per_tok": 4, "moe_intermediate_size": 512,
}  # fmt: skip
DEEPSEEK_V3_UNSTATED: dict[str, Any] = {  # (no topk_method / scoring_func / moe_layer_freq: ifc65's check)
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 128, "kv_lora_rank": 512, "q_lora_rank": 1536,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128, "n_routed_experts": 256,
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "zero": {**QWEN3_MOE, "norm_topk_prob": 0},
    "true": {**QWEN3_MOE, "norm_topk_prob": True},
    "unstated": DEEPSEEK_V3_UNSTATED,
}


@pytest.fixture
def inside(tmp_path: Path) -> Iterator[Path]:
    for name, config in MODELS.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps(config), encoding="utf-8")
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(before)


@pytest.mark.parametrize("name", ["zero", "unstated"])
def test_recommend_proposes_no_line_for_a_config_the_gate_refuses(inside: Path, name: str) -> None:
    rc, doc = recommend_json("--facts", str(FACTS), "--model-path", name, "--tp", "1")
    assert rc == 1 and doc["command"] == [], doc["command"]  # (fails before: exit 0 with a line)
    assert any("model-config-keys (unknown)" in n for n in doc["notes"]), doc["notes"]


def test_recommend_proposes_a_line_for_a_boolean(inside: Path) -> None:
    rc, doc = recommend_json("--facts", str(FACTS), "--model-path", "true", "--tp", "1")
    assert rc == 0 and doc["command"], doc["notes"]
