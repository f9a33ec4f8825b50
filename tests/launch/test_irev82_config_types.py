"""irev82: one answer for one config.json. irobust12 read that transformers 5.12.1 / 5.19.0 (the pins of SGLang
0.5.15-0.5.23) type norm_topk_prob as a boolean under huggingface_hub's @strict, but made only the BF16 trtllm-gen
rule unknown for a value of another type: the same Qwen3-MoE config with `"norm_topk_prob": 0` was allowed on an H200
(any other MoE runner), though loading the config raises before the server starts (a false pass). It is now the
preflight's model-config-keys unknown, beside ifc65's unstated DeepSeek router keys. And recommend, which reads the
model with the gate's read_model, judged its line without that check: it proposed a line (exit 0) for a config the gate
refuses on every line (ifc65's keys too): tests/recommend/test_irev82_recommend_config_keys.py. The configs are
this test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json

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
    "text": {**QWEN3_MOE, "norm_topk_prob": "true"},
    "true": {**QWEN3_MOE, "norm_topk_prob": True},
    "unstated": DEEPSEEK_V3_UNSTATED,
}


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irev82-config-types")
    for name, config in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return root


def _gate(models: Path, name: str) -> tuple[str, list[str]]:
    doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(models), "--dry-run", "--format", "json", "--",
                          "python", "-m", "sglang.launch_server", "--model-path", name, "--tp", "1")  # fmt: skip
    return str(doc["decision"]), [c["check"] for c in doc["preflight"]["checks"] if c["status"] != "ok"]


@pytest.mark.parametrize("name", ["zero", "text"])
def test_a_norm_topk_prob_transformers_5_refuses_is_unknown_whatever_the_runner(models: Path, name: str) -> None:
    assert _gate(models, name) == ("refuse", ["model-config-keys"])  # (fails before: allow, no check)


def test_a_boolean_is_allowed_as_before(models: Path) -> None:
    assert _gate(models, "true") == ("allow", [])


@pytest.mark.parametrize(
    ("model_type", "value", "unknown"),
    [("qwen3_moe", 1, True), ("qwen2_moe", None, True), ("glm4_moe", "false", True), ("deepseek_v2", 0, True),
     ("deepseek_v3", None, False), ("deepseek_v2", None, False), ("qwen3_moe", False, False), ("llama", 0, False)],
)  # fmt: skip
def test_the_typed_keys_by_model_type(model_type: str, value: Any, unknown: bool) -> None:
    from stackcheck.launch.preflight.model import config_types_result

    got = config_types_result({"model_type": model_type, "norm_topk_prob": value}, "0.5.23", "model m")
    assert (got is not None and got.status == "unknown") is unknown


def test_releases_with_a_transformers_4_pin_are_not_judged() -> None:
    from stackcheck.launch.preflight.model import config_types_result

    assert config_types_result({"model_type": "qwen3_moe", "norm_topk_prob": 0}, "0.5.9", "model m") is None
