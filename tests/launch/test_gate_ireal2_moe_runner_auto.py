"""ireal2: the MoE runner SGLang 0.5.20-0.5.23 pick themselves on SM100 (--moe-runner-backend auto) for the DeepSeek
family (arg_groups/overrides.py _deepseek_moe_quant_resolution: flashinfer_trtllm with an FP8 / ModelOpt checkpoint
and no MoE all-to-all backend) was not followed: a block-FP8 DeepSeek-V3 checkpoint on a B200 box whose FlashInfer
cubin cache lacks TRTLLM_GEN_BMM and refuses downloads (FLASHINFER_NO_DOWNLOAD) passed fp8-block-gemm, while its first
MoE layer runs trtllm_fp8_block_scale_moe and raises 'Artifact not found locally'. The gate now reads the served
model's architecture and quantization against launch.json refusals.auto.moe_runner (launch.moe_runner_auto) and
fp8-block-gemm judges the BMM cubins there (rule moe-bmm-cubins-auto), unknown where the pick is not modelled
(moe-bmm-cubins-auto-unread). The model configs below are this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
BLOCK_FP8 = {"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic"}
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}


def config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


MODELS = {
    "ds3": config(
        "DeepseekV3ForCausalLM",
        "deepseek_v3",
        n_routed_experts=16,
        moe_intermediate_size=512,
        quantization_config=BLOCK_FP8,
        **MLA,
    ),
    "glm5": config(
        "GlmMoeDsaForCausalLM",
        "glm_moe_dsa",
        n_routed_experts=16,
        moe_intermediate_size=512,
        quantization_config=BLOCK_FP8,
        index_topk=256,
        **MLA,
    ),
    "qwen3moe": config(
        "Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512, quantization_config=BLOCK_FP8
    ),
    "glm45": config(
        "Glm4MoeForCausalLM", "glm4_moe", n_routed_experts=16, moe_intermediate_size=512, quantization_config=BLOCK_FP8
    ),
    "llama": config("LlamaForCausalLM", "llama", intermediate_size=8192, quantization_config=BLOCK_FP8),
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ireal2-models")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


def fp8_rules(cwd: Path, case: str, model: str, *words: str) -> dict[str, str]:
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "fp8-block-gemm"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


@pytest.mark.parametrize("model", ["ds3", "glm5"])
def test_the_deepseek_family_on_sm100_runs_the_trtllm_moe_and_its_bmm_cubins(cwd: Path, model: str) -> None:
    # b200-cubins-offline: SGLang 0.5.20, 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    assert fp8_rules(cwd, "b200-cubins-offline", model).get("moe-bmm-cubins-auto") == "fail"


def test_a_runner_given_or_an_all_to_all_backend_is_not_the_auto_pick(cwd: Path) -> None:
    triton = fp8_rules(cwd, "b200-cubins-offline", "ds3", "--moe-runner-backend", "triton")
    assert "moe-bmm-cubins-auto" not in triton and "moe-bmm-cubins-auto-unread" not in triton
    deepep = fp8_rules(cwd, "b200-cubins-offline", "ds3", "--moe-a2a-backend", "deepep")
    assert "moe-bmm-cubins-auto" not in deepep  # the DeepSeek pick needs moe_a2a_backend none
    assert deepep.get("moe-bmm-cubins-auto-unread") == "unknown"  # what the a2a hooks pick is not modelled


def test_an_override_not_modelled_is_unknown_and_a_model_without_one_is_not_judged(cwd: Path) -> None:
    # glm4_moe.py sets a flashinfer runner on SM100 under conditions not modelled here: unknown, never ok
    assert fp8_rules(cwd, "b200-cubins-offline", "glm45").get("moe-bmm-cubins-auto-unread") == "unknown"


def test_the_qwen3_moe_family_on_sm100_runs_the_trtllm_moe_and_its_bmm_cubins(cwd: Path) -> None:
    # icubin3: model_overrides/qwen3_moe.py is a static function of the architecture, the quantization and the
    # all-to-all backend (fp8 / modelopt_fp4 / none -> flashinfer_trtllm): modelled, no longer unread
    assert fp8_rules(cwd, "b200-cubins-offline", "qwen3moe").get("moe-bmm-cubins-auto") == "fail"
    llama = fp8_rules(cwd, "b200-cubins-offline", "llama")  # no override of LlamaForCausalLM sets a MoE runner
    assert "moe-bmm-cubins-auto" not in llama and "moe-bmm-cubins-auto-unread" not in llama


def test_a_model_not_read_is_unknown(cwd: Path) -> None:
    assert fp8_rules(cwd, "b200-cubins-offline", "not-here", "--quantization", "fp8").get(
        "moe-bmm-cubins-auto-unread"
    ) == "unknown"  # fmt: skip


def test_hopper_is_not_sm100(cwd: Path) -> None:
    rules = fp8_rules(cwd, "h200-newest", "ds3")
    assert "moe-bmm-cubins-auto" not in rules and "moe-bmm-cubins-auto-unread" not in rules


def test_gpt_oss_mxfp4_on_sm100_runs_the_trtllm_gen_mxfp4_moe(tmp_path: Path) -> None:
    # sglang 0.5.20-0.5.23 arg_groups/model_overrides/gpt_oss.py: an mxfp4 checkpoint on SM100 with the runner auto
    # gets flashinfer_mxfp4, whose SM100 kernel is trtllm_fp4_block_scale_moe (the TRTLLM_GEN_BMM cubins): blocked on
    # the offline box, where mxfp4-moe's bmm-cubins-default only said the default 'may or may not' run it
    cfg = config("GptOssForCausalLM", "gpt_oss", num_local_experts=32, quantization_config={"quant_method": "mxfp4"})
    (tmp_path / "oss").mkdir()
    (tmp_path / "oss" / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    doc = stackcheck_json("gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--cwd",
                          str(tmp_path), "--dry-run", "--format", "json", "--", "python", "-m",
                          "sglang.launch_server", "--model-path", "oss", "--attention-backend", "triton")  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "mxfp4-moe"]
    assert found and found[0]["status"] == "blocked"
    assert {str(r.get("rule")): str(r["result"]) for r in found[0]["reasons"]}.get("bmm-cubins-auto") == "fail"
