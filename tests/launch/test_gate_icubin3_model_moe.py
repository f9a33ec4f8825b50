"""icubin3: the model's MoE-ness as a launch fact (launch.model_moe). The trtllm-gen fused MoE loads FlashInfer's
TRTLLM_GEN_BMM cubins at its first MoE layer; a model whose config.json (and its draft's) names no routed experts has
no MoE layer, so the rules on what SGLang's default MoE runner may run (nvfp4's and mxfp4-moe's bmm-cubins-default,
fp8-block-gemm's moe-bmm-cubins-auto-unread) do not apply to it. An MoE model, a model not read, or a draft model
with experts keeps them (unknown, never ok). The configs below are this test's own minimal files in the shape of
config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
BLOCK_FP8 = {"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic"}
NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4"}


def config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


MODELS = {
    "dense": config("LlamaForCausalLM", "llama", intermediate_size=8192, quantization_config=NVFP4),
    "dense-bf16": config("LlamaForCausalLM", "llama", intermediate_size=8192),
    "moe": config(
        "Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512, quantization_config=NVFP4
    ),
    "glm45-dense": config(
        "Glm4MoeForCausalLM", "glm4_moe", n_routed_experts=1, intermediate_size=8192, quantization_config=BLOCK_FP8
    ),
    "qwen35-dense": config(
        "Qwen3_5ForConditionalGeneration", "qwen3_5", intermediate_size=8192, quantization_config=BLOCK_FP8
    ),
    "qwen35-moe": config(
        "Qwen3_5MoeForConditionalGeneration",
        "qwen3_5_moe",
        num_experts=16,
        moe_intermediate_size=512,
        quantization_config=BLOCK_FP8,
    ),
    "moe-draft": config("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512),
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("icubin3-models")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


def rules(cwd: Path, feature: str, model: str, *words: str) -> dict[str, str]:
    # b200-cubins-offline: SGLang 0.5.20, 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    doc = stackcheck_json("gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--cwd", str(cwd),
                          "--dry-run", "--format", "json", "--", "python", "-m", "sglang.launch_server",
                          "--model-path", model, "--attention-backend", "triton", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == feature]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


def test_a_dense_nvfp4_checkpoint_runs_no_moe_layer(cwd: Path) -> None:
    assert "bmm-cubins-default" not in rules(cwd, "nvfp4", "dense")


def test_an_moe_nvfp4_checkpoint_keeps_the_default_runner_unknown(cwd: Path) -> None:
    assert rules(cwd, "nvfp4", "moe").get("bmm-cubins-default") == "unknown"


def test_a_model_not_read_keeps_it_unknown(cwd: Path) -> None:
    assert rules(cwd, "nvfp4", "not-here", "--quantization", "modelopt_fp4").get("bmm-cubins-default") == "unknown"


def test_a_draft_model_with_experts_keeps_it_unknown(cwd: Path) -> None:
    got = rules(cwd, "nvfp4", "dense", "--speculative-algorithm", "EAGLE", "--speculative-draft-model-path",
                "moe-draft")  # fmt: skip
    assert got.get("bmm-cubins-default") == "unknown"


def test_a_dense_model_of_an_unmodelled_override_runs_no_moe_layer(cwd: Path) -> None:
    # Glm4MoeForCausalLM is on the unmodelled list (its override may set a flashinfer runner): the pick is not read,
    # but a checkpoint of it with no routed experts has no MoE layer for that runner to run
    assert "moe-bmm-cubins-auto-unread" not in rules(cwd, "fp8-block-gemm", "glm45-dense")


def test_a_dense_model_of_a_modelled_pick_runs_no_moe_layer(cwd: Path) -> None:
    # Qwen3_5ForConditionalGeneration's override picks flashinfer_trtllm on SM100 whatever its experts: a dense
    # checkpoint runs no MoE layer on it, an MoE one does
    dense = rules(cwd, "fp8-block-gemm", "qwen35-dense")
    assert "moe-bmm-cubins-auto" not in dense and "moe-bmm-cubins-auto-unread" not in dense
    assert rules(cwd, "fp8-block-gemm", "qwen35-moe").get("moe-bmm-cubins-auto") == "fail"


def test_an_nvfp4_moe_checkpoint_of_a_modelled_pick_runs_the_trtllm_fp4_moe(cwd: Path) -> None:
    # model_overrides/qwen3_moe.py picks flashinfer_trtllm for modelopt_fp4 on SM100; ModelOpt's NVFP4 MoE method then
    # runs trtllm_fp4_block_scale_moe (TRTLLM_GEN_BMM): blocked on the offline box, not only 'may or may not'
    assert rules(cwd, "nvfp4", "moe").get("bmm-cubins-auto") == "fail"
    assert "bmm-cubins-auto" not in rules(cwd, "nvfp4", "moe", "--moe-runner-backend", "triton")
