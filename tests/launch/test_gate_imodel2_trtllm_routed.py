"""imodel2: --moe-runner-backend flashinfer_trtllm_routed (SGLang 0.5.18 on) takes the same trtllm-gen fused MoE as
flashinfer_trtllm: ModelOpt NVFP4 (modelopt_quant.py enable_flashinfer_trtllm_moe), FP8 (fp8.py) and unquantized
(fused_moe_triton/layer.py use_flashinfer_trtllm_moe) MoE methods all count it, and its runner calls FlashInfer's
trtllm_*_routed_moe, which build get_trtllm_moe_sm100_module (the TRTLLM_GEN_BMM cubins). The gate judged only the
flashinfer_trtllm value: an NVFP4 MiniMax-M2-shaped checkpoint on an offline B200 box without those cubins read
nvfp4 ok (a false pass). The configs are this test's own minimal files in the shape of config.json and
hf_quant_config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
ROUTED = ("--moe-runner-backend", "flashinfer_trtllm_routed")


def config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


MOE = {"num_local_experts": 16, "num_experts_per_tok": 2, "intermediate_size": 512}
FP8_BLOCK = {"quant_method": "fp8", "activation_scheme": "dynamic", "fmt": "e4m3", "weight_block_size": [128, 128]}
MODELS: dict[str, dict[str, Any]] = {
    "mm2-nvfp4": config("MiniMaxM2ForCausalLM", "minimax_m2", **MOE),
    "mm2-fp8": config("MiniMaxM2ForCausalLM", "minimax_m2", quantization_config=FP8_BLOCK, **MOE),
    "mixtral-bf16": config("MixtralForCausalLM", "mixtral", **MOE),
    "llama-nvfp4": config("LlamaForCausalLM", "llama", intermediate_size=8192),
}
NVFP4 = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4", "group_size": 16}}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel2-routed")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
        if name.endswith("nvfp4"):
            (root / name / "hf_quant_config.json").write_text(json.dumps(NVFP4), encoding="utf-8")
    return root


def rules(cwd: Path, case: str, model: str, feature: str, *words: str) -> dict[str, str]:
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == feature]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


def test_nvfp4_moe_on_the_routed_runner_needs_the_bmm_cubins(cwd: Path) -> None:
    # b200-cubins-offline: SGLang 0.5.20, 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    assert rules(cwd, "b200-cubins-offline", "mm2-nvfp4", "nvfp4", *ROUTED).get("bmm-cubins") == "fail"


def test_fp8_block_moe_on_the_routed_runner_needs_the_bmm_cubins(cwd: Path) -> None:
    assert rules(cwd, "b200-cubins-offline", "mm2-fp8", "fp8-block-gemm", *ROUTED).get("moe-bmm-cubins") == "fail"


def test_unquantized_moe_on_the_routed_runner_needs_the_bmm_cubins(cwd: Path) -> None:
    got = rules(cwd, "b200-cubins-offline", "mixtral-bf16", "moe-trtllm-gen-cubins", *ROUTED)
    assert got.get("unquantized-flag") == "fail"
    unread = rules(cwd, "b200-cubins-offline", "not-here", "moe-trtllm-gen-cubins", *ROUTED)
    assert unread.get("unquantized-flag-unread") == "unknown"


def test_hopper_and_dense_models_are_left_alone(cwd: Path) -> None:
    assert rules(cwd, "b200-cubins-offline", "llama-nvfp4", "moe-trtllm-gen-cubins", *ROUTED) == {}
    assert rules(cwd, "h200-newest", "mixtral-bf16", "moe-trtllm-gen-cubins", *ROUTED) == {}
