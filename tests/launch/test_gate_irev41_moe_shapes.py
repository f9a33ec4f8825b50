"""irev41: --moe-runner-backend deep_gemm needs dropped (launch.json option `moe_only`, igap4) only where the model
is read as dense. The reading looked one level down and for a number only, so two MoE models SGLang loads read as
dense and the launch was allowed on SM 12.0 where the same flag on a Qwen3 MoE is refused (a false pass):
- Qwen3-Omni MoE: its experts sit in thinker_config.text_config (sglang 0.5.23 models/qwen3_omni_moe.py:551-553 builds
  the thinker from config.thinker_config; configs/qwen3_omni.py:181-227 reads its text_config, num_experts default 128
  at :137);
- ERNIE-4.5-VL MoE: moe_num_experts is a list [text, vision] (models/ernie45_moe_vl.py:169-170 max() of it; the MoE
  layers are get_moe_impl_class, :218 and :251).
The configs are written for the tests in the published shape; nothing is copied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import _UNKNOWN, _model_moe

TEXT: dict[str, Any] = {
    "model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4,
    "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
}  # fmt: skip
QWEN3_OMNI: dict[str, Any] = {
    "architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
    "thinker_config": {"model_type": "qwen3_omni_moe_thinker", "text_config": TEXT},
}  # fmt: skip
ERNIE_VL: dict[str, Any] = {
    "architectures": ["Ernie4_5_VLMoeForConditionalGeneration"], "model_type": "ernie4_5_moe_vl", "hidden_size": 2560,
    "num_attention_heads": 20, "num_key_value_heads": 4, "moe_num_experts": [64, 64],
    "moe_intermediate_size": [1536, 512],
}  # fmt: skip


def _gate(tmp_path: Path, release: str, config: dict[str, Any]) -> Any:
    model = model_dir(tmp_path, str(config["architectures"][0]), config)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8"]
    args = ["gate", "--facts", str(release_box(tmp_path, release, "12.0")), "--dry-run", "--format", "json", "--"]
    return cli_json([*args, *line, "--moe-runner-backend", "deep_gemm"])[1]


def _deepgemm(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in doc["features"] if f["feature"] == "deepgemm"), None)


@pytest.mark.parametrize("config", [QWEN3_OMNI, ERNIE_VL], ids=["qwen3-omni", "ernie-vl"])
def test_moe_models_keep_the_runner_need(tmp_path: Path, config: dict[str, Any]) -> None:
    # fails on bfbcc06: allowed on SM 12.0, the deepgemm need dropped as for a dense model
    doc = _gate(tmp_path, "0.5.23", config)
    dg = _deepgemm(doc)
    assert doc["decision"] == "refuse" and dg is not None and dg["kind"] == "explicit", doc["reasons"]


def test_reading_of_expert_counts() -> None:
    # fails on bfbcc06 for the nested, list and unknown shapes; the dense and flat ones are guards
    assert _model_moe(attention_keys(QWEN3_OMNI)) is True
    assert _model_moe(attention_keys(ERNIE_VL)) is True
    assert _model_moe({"num_experts": "128"}) is _UNKNOWN  # a shape not known: fail closed
    assert _model_moe({"text_config": {"num_experts": {"n": 8}}}) is _UNKNOWN
    assert _model_moe(attention_keys(LLAMA3)) is False
    assert _model_moe({"num_local_experts": 8}) is True
    assert _model_moe({"moe_num_experts": [1, 1]}) is False
    assert _model_moe(None) is _UNKNOWN


def test_guard_dense_model_still_drops_the_need(tmp_path: Path) -> None:
    # guard (passes on bfbcc06 too)
    doc = _gate(tmp_path, "0.5.23", LLAMA3)
    assert doc["decision"] == "allow", doc["reasons"]


def _gate_draft(tmp_path: Path, draft: dict[str, Any], *extra: str) -> Any:
    model = model_dir(tmp_path, "target", LLAMA3)
    drafted = model_dir(tmp_path, "draft", draft)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8"]
    line += ["--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", str(drafted), *extra]
    args = ["gate", "--facts", str(release_box(tmp_path, "0.5.23", "12.0")), "--dry-run", "--format", "json", "--"]
    return cli_json([*args, *line, "--moe-runner-backend", "deep_gemm"])[1]


def test_a_moe_draft_model_keeps_the_runner_need(tmp_path: Path) -> None:
    # fails on bfbcc06: a dense target with a MoE draft model was allowed on SM 12.0 (the target alone read); the
    # draft's MoE layers take the same runner (sglang 0.5.23 layers/moe/utils.py:471-496)
    doc = _gate_draft(
        tmp_path, QWEN3_OMNI["thinker_config"]["text_config"] | {"architectures": ["Qwen3MoeForCausalLM"]}
    )
    dg = _deepgemm(doc)
    assert dg is not None and dg["kind"] == "explicit", doc["reasons"]


def test_guard_a_dense_draft_model_drops_the_need(tmp_path: Path) -> None:
    # guard (passes on bfbcc06 too)
    doc = _gate_draft(tmp_path, LLAMA3)
    dg = _deepgemm(doc)
    assert dg is None or dg["kind"] != "explicit", doc["reasons"]
