"""icubin3: SGLang 0.5.20-0.5.23's DeepSeek-family pick on SM100 (arg_groups/overrides.py
_deepseek_moe_quant_resolution) sets flashinfer_trtllm for a checkpoint without quantization too (BF16 weights:
`quantization is None`), whose unquantized MoE method then runs FlashInfer's trtllm_bf16_moe, built with the
TRTLLM_GEN_BMM cubins. A BF16 DeepSeek-V3-shaped model on an offline B200 box without them passed the gate (no
feature judged an unquantized MoE); check moe-trtllm-gen-cubins now refuses it. The configs are this test's own
minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}


def config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


MODELS = {
    "ds3-bf16": config("DeepseekV3ForCausalLM", "deepseek_v3", n_routed_experts=16, moe_intermediate_size=512, **MLA),
    "qwen3moe-bf16": config("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512),
    "glm45-bf16": config("Glm4MoeForCausalLM", "glm4_moe", n_routed_experts=16, moe_intermediate_size=512),
    "llama-bf16": config("LlamaForCausalLM", "llama", intermediate_size=8192),
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("icubin3-bf16")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


def check_rules(cwd: Path, case: str, model: str, *words: str) -> dict[str, str]:
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


def test_a_bf16_deepseek_model_on_sm100_runs_trtllm_bf16_moe(cwd: Path) -> None:
    # b200-cubins-offline: SGLang 0.5.20, 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    assert check_rules(cwd, "b200-cubins-offline", "ds3-bf16").get("unquantized-auto") == "fail"


def test_a_runner_given_an_a2a_backend_or_another_model_is_not_this_pick(cwd: Path) -> None:
    assert check_rules(cwd, "b200-cubins-offline", "ds3-bf16", "--moe-runner-backend", "triton") == {}
    assert check_rules(cwd, "b200-cubins-offline", "llama-bf16") == {}
    # model_overrides/qwen3_moe.py picks flashinfer_trtllm for no quantization too (modelled by icubin3)
    assert check_rules(cwd, "b200-cubins-offline", "qwen3moe-bf16").get("unquantized-auto") == "fail"


def test_a_quantized_launch_is_left_to_its_feature(cwd: Path) -> None:
    # --quantization fp8 on the same model: fp8-block-gemm's moe-bmm-cubins-auto judges it, this check does not
    assert check_rules(cwd, "b200-cubins-offline", "ds3-bf16", "--quantization", "fp8") == {}


def test_hopper_is_not_sm100(cwd: Path) -> None:
    assert check_rules(cwd, "h200-newest", "ds3-bf16") == {}


def test_the_runner_given_on_an_unquantized_moe_model_runs_trtllm_bf16_moe(cwd: Path) -> None:
    # --moe-runner-backend flashinfer_trtllm on a BF16 MoE model: FusedMoE's unquantized method takes the same
    # trtllm_bf16_moe (no feature judged it: the flag's choice needs nothing)
    given = ("--moe-runner-backend", "flashinfer_trtllm")
    assert check_rules(cwd, "b200-cubins-offline", "qwen3moe-bf16", *given).get("unquantized-flag") == "fail"
    assert check_rules(cwd, "b200-cubins-offline", "llama-bf16", *given) == {}  # dense: no MoE layer
    unread = check_rules(cwd, "b200-cubins-offline", "not-here", *given)
    assert unread.get("unquantized-flag-unread") == "unknown"  # not read: its experts unknown, never ok
    assert check_rules(cwd, "h200-newest", "qwen3moe-bf16", *given) == {}


def test_glm45_without_quantization_runs_trtllm_bf16_moe(cwd: Path) -> None:
    # model_overrides/glm4_moe.py: modelopt_fp4 or no quantization, no all-to-all backend -> flashinfer_trtllm
    assert check_rules(cwd, "b200-cubins-offline", "glm45-bf16").get("unquantized-auto") == "fail"
    assert check_rules(cwd, "b200-cubins-offline", "glm45-bf16", "--moe-a2a-backend", "deepep") == {}
