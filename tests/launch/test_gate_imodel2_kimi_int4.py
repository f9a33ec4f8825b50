"""imodel2: a Kimi K2 / K2.5 thinking checkpoint in compressed-tensors INT4 (config_groups.group_0.weights: int, 4
bits, group 32, strategy group) on SM100. SGLang 0.5.20-0.5.23's DeepSeek-family pick (arg_groups/overrides.py
_deepseek_moe_quant_resolution, its is_kimi_k2_k25_thinking_int4 test) sets --moe-runner-backend flashinfer_trtllm
for it, and the compressed-tensors MoE method then takes CompressedTensorsMxInt4MoE, which calls FlashInfer's
trtllm_mxint4_block_scale_moe (the TRTLLM_GEN_BMM cubins). On an offline B200 box without those cubins the gate
read the MoE check as not applicable (a false pass: moe_runner_auto was `unread` and no rule judged a
compressed-tensors checkpoint). The configs are this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 1536}


def ct_int4(group_size: int) -> dict[str, Any]:
    weights = {"type": "int", "num_bits": 4, "group_size": group_size, "strategy": "group", "symmetric": True,
               "dynamic": False, "actorder": None}  # fmt: skip
    return {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "ignore": ["lm_head"],
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": None}},
    }


def config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16,
                            "torch_dtype": "bfloat16", "vocab_size": 1024, **MLA}  # fmt: skip
    base.update(extra)
    return base


MODELS = {
    "k2-int4": config("DeepseekV3ForCausalLM", "kimi_k2", n_routed_experts=16, quantization_config=ct_int4(32)),
    "k25-int4": {
        "architectures": ["KimiK25ForConditionalGeneration"],
        "model_type": "kimi_k25",
        "quantization_config": ct_int4(32),
        "text_config": config("DeepseekV3ForCausalLM", "kimi_k2", n_routed_experts=16),
    },
    "k2-int4-g128": config("DeepseekV3ForCausalLM", "kimi_k2", n_routed_experts=16, quantization_config=ct_int4(128)),
    "dense-int4": config("DeepseekV3ForCausalLM", "kimi_k2", quantization_config=ct_int4(32)),
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel2-kimi")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


def gate(cwd: Path, case: str, model: str, *words: str) -> dict[str, Any]:
    return stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--cwd", str(cwd), "--dry-run",
                           "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                           "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip


def check_rules(cwd: Path, case: str, model: str, *words: str) -> dict[str, str]:
    found = [f for f in gate(cwd, case, model, *words)["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


def test_kimi_int4_on_sm100_runs_trtllm_mxint4_moe(cwd: Path) -> None:
    # b200-cubins-offline: SGLang 0.5.20, 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    assert check_rules(cwd, "b200-cubins-offline", "k2-int4").get("mxint4-auto") == "fail"
    assert check_rules(cwd, "b200-cubins-offline", "k25-int4").get("mxint4-auto") == "fail"
    # whatever --quantization says: SGLang's test reads the checkpoint's group_0 weights
    assert check_rules(cwd, "b200-cubins-offline", "k2-int4", "--quantization", "compressed-tensors").get(
        "mxint4-auto") == "fail"  # fmt: skip


def test_not_the_kimi_recipe_or_not_this_pick(cwd: Path) -> None:
    # group size 128: not SGLang's Kimi test; the pick stays unread (another quantization of a picks architecture)
    assert "mxint4-auto" not in check_rules(cwd, "b200-cubins-offline", "k2-int4-g128")
    assert check_rules(cwd, "b200-cubins-offline", "k2-int4", "--moe-runner-backend", "triton") == {}
    assert check_rules(cwd, "b200-cubins-offline", "k2-int4", "--moe-a2a-backend", "deepep") == {}
    assert "mxint4-auto" not in check_rules(cwd, "b200-cubins-offline", "dense-int4")  # no routed experts
    assert check_rules(cwd, "h200-newest", "k2-int4") == {}  # is_sm100 only


def test_the_runner_given_on_a_compressed_tensors_moe_checkpoint(cwd: Path) -> None:
    # --moe-runner-backend flashinfer_trtllm on the Kimi recipe: CompressedTensorsMxInt4MoE, the same cubins
    given = ("--moe-runner-backend", "flashinfer_trtllm")
    assert check_rules(cwd, "b200-cubins-offline", "k2-int4", *given).get("compressed-tensors-flag") == "unknown"
    assert check_rules(cwd, "b200-cubins-offline", "dense-int4", *given) == {}
