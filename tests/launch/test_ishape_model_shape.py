"""ishape: the model's shape against the launch's parallelism (irobust13: 33 attention heads with --tp 2, or a head
count of NaN / true / 32.5 / "128", were allowed; SGLang's divide() asserts as it builds the model and the server
does not start). The gate's preflight check model-shape (stackcheck/launch/preflight/shapes.py) now refuses: the
query heads by the attention TP size, the KV heads and the TP size one way or the other, a Llama dense MLP's
intermediate_size by the TP size and its share by a block-FP8 checkpoint's weight block, the routed experts by the
expert parallel size; a head count or size that is not a positive whole number is unknown. The real shapes below are
the published checkpoints' head counts and sizes, written here by hand (Llama 3 8B / 70B, Llama 2 7B, Qwen3-30B-A3B,
Qwen1.5-MoE-A2.7B, DeepSeek-V3, GPT-OSS-120B); the configs are this test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json
from gate_cli import LLAMA3
from recommend_cli import clean_recommend_env, recommend_json

from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.preflight.shapes import SHAPE_CHECK, shape_results

__all__ = ["clean_recommend_env"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23, 8 GPUs)

LLAMA3_8B: dict[str, Any] = {**LLAMA3, "intermediate_size": 14336}
LLAMA3_70B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192, "num_attention_heads": 64,
    "num_key_value_heads": 8, "intermediate_size": 28672,
}  # fmt: skip
LLAMA2_7B: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
    "num_key_value_heads": 32, "intermediate_size": 11008,
}  # fmt: skip
BLOCK_FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
QWEN3_30B_A3B: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048, "head_dim": 128,
    "num_attention_heads": 32, "num_key_value_heads": 4, "num_experts": 128, "moe_intermediate_size": 768,
    "intermediate_size": 6144,
}  # fmt: skip
QWEN15_MOE: dict[str, Any] = {
    "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60, "moe_intermediate_size": 1408,
    "intermediate_size": 5632,
}  # fmt: skip
DEEPSEEK_V3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256, "kv_lora_rank": 512,
    "intermediate_size": 18432, "moe_intermediate_size": 2048,
}  # fmt: skip
GPT_OSS_120B: dict[str, Any] = {
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "hidden_size": 2880, "head_dim": 64,
    "num_attention_heads": 64, "num_key_value_heads": 8, "num_local_experts": 128, "intermediate_size": 2880,
}  # fmt: skip


def _shape(
    config: dict[str, Any], tp: int, attn: list[int] | None = None, eps: list[int] | None = None,
    mla: bool | None = False, version: str | None = "0.5.23",
) -> list[tuple[str, str]]:  # fmt: skip
    got = shape_results(attention_keys(config), mla, tp, attn or [tp], eps, version, "model m")
    return [(r.status, next(iter(r.observed))) for r in got]


@pytest.mark.parametrize(
    ("config", "tp", "mla"),
    [(LLAMA3_8B, 1, False), (LLAMA3_8B, 2, False), (LLAMA3_8B, 8, False), (LLAMA3_8B, 16, False),
     (LLAMA3_70B, 8, False), ({**LLAMA3_70B, "quantization_config": BLOCK_FP8}, 8, False),
     ({**LLAMA2_7B, "quantization_config": BLOCK_FP8}, 2, False), (QWEN3_30B_A3B, 4, False),
     (QWEN3_30B_A3B, 8, False), (DEEPSEEK_V3, 8, True), (DEEPSEEK_V3, 16, True), (GPT_OSS_120B, 8, False)],
)  # fmt: skip
def test_published_shapes_at_their_usual_tp_pass(config: dict[str, Any], tp: int, mla: bool) -> None:
    assert _shape(config, tp, eps=[tp], mla=mla) == []


@pytest.mark.parametrize(
    ("config", "tp", "mla"),
    [(LLAMA3_8B, 3, False), (LLAMA3_8B, 64, False), (DEEPSEEK_V3, 6, True), (GPT_OSS_120B, 3, False)],
)  # fmt: skip
def test_query_heads_not_divisible_by_tp_fail(config: dict[str, Any], tp: int, mla: bool) -> None:
    assert ("fail", "num_attention_heads") in _shape(config, tp, mla=mla)


def test_kv_heads_and_tp_dividing_neither_way_fail() -> None:
    mine = {**LLAMA3, "num_attention_heads": 48, "num_key_value_heads": 8}
    assert _shape(mine, 12) == [("fail", "num_key_value_heads")]  # (12 >= 8, 12 % 8 = 4)
    assert _shape(mine, 6) == [("fail", "num_key_value_heads")]  # (6 < 8, 8 % 6 = 2)
    assert _shape(mine, 16) == []  # (replicated: 16 % 8 = 0)
    assert _shape(mine, 16, mla=True) == []
    assert _shape(mine, 12, mla=None) == []  # (MLA not known: the KV rule not judged)


def test_attention_tp_with_dp_attention() -> None:
    # tp 8 with --dp 8 --enable-dp-attention: attention TP 1; 33 heads fail only at 8, where SGLang may run them
    odd = {**LLAMA3, "num_attention_heads": 33, "num_key_value_heads": 1}
    assert _shape(odd, 8, attn=[1]) == [("unknown", "num_attention_heads")]
    assert _shape(DEEPSEEK_V3, 8, attn=[1], mla=True) == []
    assert _shape(odd, 2, attn=[2]) == [("fail", "num_attention_heads")]


def test_dense_mlp_per_rank_against_the_fp8_block() -> None:
    fp8 = {**LLAMA2_7B, "quantization_config": BLOCK_FP8}
    assert _shape(fp8, 4) == [("fail", "intermediate_size")]  # (11008 / 4 = 2752, 2752 % 128 = 64)
    assert _shape(LLAMA2_7B, 4) == []  # (no block: 2752 per rank loads)
    assert _shape({**LLAMA2_7B, "intermediate_size": 11009}, 2) == [("fail", "intermediate_size")]
    # a MoE model's intermediate_size is not judged here (its dense layers, if any, are not read)
    assert _shape({**QWEN3_30B_A3B, "intermediate_size": 6145, "quantization_config": BLOCK_FP8}, 4) == []


def test_dense_mlp_per_rank_against_awq_and_gptq_groups() -> None:
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": False, "sym": True}
    assert _shape({**LLAMA2_7B, "quantization_config": awq}, 4) == [("fail", "intermediate_size")]  # (2752 % 128)
    assert _shape({**LLAMA2_7B, "quantization_config": awq}, 2) == []  # (5504 = 43 x 128)
    assert _shape({**LLAMA2_7B, "quantization_config": gptq}, 4) == [("unknown", "intermediate_size")]
    assert _shape({**LLAMA3_70B, "quantization_config": awq}, 8) == []  # (3584 = 28 x 128)
    assert _shape({**LLAMA2_7B, "quantization_config": {**awq, "group_size": -1}}, 4) == []  # (per channel)


def test_experts_by_the_expert_parallel_size() -> None:
    assert _shape(QWEN15_MOE, 8, eps=[8]) == [("fail", "experts")]  # (60 % 8 = 4)
    assert _shape(QWEN15_MOE, 4, eps=[4]) == []
    assert _shape(QWEN15_MOE, 8, eps=[4, 8]) == [("unknown", "experts")]  # (an all-to-all backend may set 8)
    assert _shape(QWEN15_MOE, 8, eps=None) == []  # (redundant experts etc.: not judged)
    assert _shape(DEEPSEEK_V3, 16, eps=[16], mla=True) == []
    assert _shape(GPT_OSS_120B, 8, eps=[8]) == []
    assert _shape({**GPT_OSS_120B, "num_local_experts": 100}, 8, eps=[8]) == [("fail", "experts")]


@pytest.mark.parametrize("value", [float("nan"), True, 32.5, "128", 0, -32])
def test_a_head_count_that_is_no_positive_whole_number_is_unknown(value: Any) -> None:
    got = shape_results(attention_keys({**LLAMA3, "num_attention_heads": value}), False, 1, [1], None, "0.5.23", "m")
    assert [(r.status, list(r.observed)) for r in got] == [("unknown", ["num_attention_heads"])]
    assert "num_attention_heads" in got[0].message and got[0].source
    assert any("configuration_llama.py:30 @strict" in s["title"] for s in got[0].source)  # (transformers 5.19.0)


def test_null_and_missing_values() -> None:
    assert _shape({**LLAMA3, "head_dim": None}, 2) == []  # (null: the config class derives it)
    unstated = {k: v for k, v in LLAMA3.items() if k != "num_attention_heads"}
    assert _shape(unstated, 2) == []  # (the config class's default decides: not judged, no ok either)
    assert _shape(unstated, 1) == []
    assert shape_results(None, False, 2, [2], [1], "0.5.23", "m") == []


def test_a_release_not_read_is_unknown_not_failed() -> None:
    odd = {**LLAMA3, "num_attention_heads": 33, "num_key_value_heads": 1}
    assert _shape(odd, 2, version="0.5.5") == [("unknown", "num_attention_heads")]
    assert _shape(odd, 2, version=None) == [("unknown", "num_attention_heads")]
    assert _shape(odd, 2, version="0.5.9") == [("fail", "num_attention_heads")]


def test_sources_name_file_and_line_per_release() -> None:
    got = shape_results(attention_keys({**LLAMA3, "num_attention_heads": 33}), False, 2, [2], None, "0.5.23", "m")
    titles = " ".join(s["title"] for s in got[0].source or [])
    assert "0.5.9 wheel: srt/layers/linear.py:890-896" in titles and "0.5.23 wheel: srt/layers/linear.py:1139" in titles
    assert got[0].required == "num_attention_heads divisible by the attention TP size"


# ---- end to end: `stackcheck gate` and `stackcheck recommend` on config.json files written here

MODELS: dict[str, dict[str, Any]] = {
    "heads33": {**LLAMA3, "num_attention_heads": 33, "num_key_value_heads": 33, "hidden_size": 4224},
    "llama3-8b": LLAMA3_8B,
    "nan": {**LLAMA3, "num_attention_heads": float("nan")},
    "text": {**LLAMA3, "num_attention_heads": "128"},
    "qwen15-moe": QWEN15_MOE,
    "qwen25-7b": {  # (Qwen2.5-7B-Instruct's published heads: 28 query, 4 KV)
        "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 3584, "num_attention_heads": 28,
        "num_key_value_heads": 4, "intermediate_size": 18944, "torch_dtype": "bfloat16",
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ishape")
    for name, config in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return root


def _gate(models: Path, name: str, *flags: str) -> tuple[str, list[tuple[str, str]]]:
    doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(models), "--dry-run", "--format", "json", "--",
                          "python", "-m", "sglang.launch_server", "--model-path", name, *flags)  # fmt: skip
    checks = [(c["check"], c["status"]) for c in doc["preflight"]["checks"] if c["check"] == SHAPE_CHECK]
    return str(doc["decision"]), checks


def test_gate_refuses_33_heads_at_tp_2_and_allows_32(models: Path) -> None:
    assert _gate(models, "heads33", "--tp", "2") == ("refuse", [(SHAPE_CHECK, "fail")] * 2)  # (before: allow)
    assert _gate(models, "heads33", "--tp", "1") == ("allow", [])
    assert _gate(models, "llama3-8b", "--tp", "2") == ("allow", [])


@pytest.mark.parametrize("name", ["nan", "text"])
def test_gate_leaves_a_head_count_of_another_type_unknown(models: Path, name: str) -> None:
    assert _gate(models, name, "--tp", "2") == ("refuse", [(SHAPE_CHECK, "unknown")])  # (before: allow)


def test_gate_refuses_60_experts_at_ep_8(models: Path) -> None:
    assert (SHAPE_CHECK, "fail") in _gate(models, "qwen15-moe", "--tp", "8", "--ep-size", "8")[1]
    assert _gate(models, "qwen15-moe", "--tp", "4", "--ep-size", "4")[1] == []


def test_recommend_proposes_no_tp_the_shape_refuses(models: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(models)
    rc, doc = recommend_json("--facts", str(FACTS), "--model-path", "heads33", "--tp", "2")
    assert rc == 1 and doc["command"] == [], doc["command"]  # (before: exit 0 with --tp-size 2)
    assert any(f"{SHAPE_CHECK} (blocked)" in n for n in doc["notes"]), doc["notes"]
    rc, doc = recommend_json("--facts", str(FACTS), "--model-path", "llama3-8b", "--tp", "2")
    assert rc == 0 and "--tp-size" in doc["command"], doc["notes"]


def test_recommend_without_tp_takes_the_largest_size_the_heads_divide(
    models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(models)
    rc, doc = recommend_json("--facts", str(FACTS), "--model-path", "qwen25-7b")
    assert rc == 0 and doc["command"][doc["command"].index("--tp-size") + 1] == "4", doc["command"]  # (before: 8)
    assert any("tensor-parallel size 4: the largest" in a for a in doc["assumptions"]), doc["assumptions"]
    rc, doc = recommend_json("--facts", str(FACTS), "--model-path", "llama3-8b")
    assert rc == 0 and doc["command"][doc["command"].index("--tp-size") + 1] == "8", doc["command"]
