"""imodel2: a ModelOpt FP8 MoE checkpoint (hf_quant_config.json quant_algo FP8: modelopt_fp8) on SM100 whose MoE
runner is flashinfer_trtllm, picked by SGLang 0.5.20-0.5.23 itself (the DeepSeek family's
_deepseek_moe_quant_resolution lists modelopt_fp8) or given: ModelOptFp8MoEMethod's trtllm path calls FlashInfer's
per-tensor FP8 trtllm-gen MoE (the TRTLLM_GEN_BMM cubins). No feature of a modelopt_fp8 checkpoint judged the
cubins: on an offline B200 box without them the gate read moe-trtllm-gen-cubins as not applicable (a false pass).
Whether the per-tensor path runs depends on the model's router (0.5.23 falls back to Triton for an undeclared
one), which the gate does not read: unknown unless the cubins are ready. The configs are this test's own minimal
files in the shape of config.json and hf_quant_config.json."""

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
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16,
                            "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


MODELS = {
    "ds3-mo-fp8": config("DeepseekV3ForCausalLM", "deepseek_v3", n_routed_experts=16, **MLA),
    "mixtral-mo-fp8": config("MixtralForCausalLM", "mixtral", num_local_experts=8, head_dim=128),
    "llama-mo-fp8": config("LlamaForCausalLM", "llama", head_dim=128, intermediate_size=8192),
}
FP8 = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": None}}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel2-mofp8")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
        (root / name / "hf_quant_config.json").write_text(json.dumps(FP8), encoding="utf-8")
    return root


def check_rules(cwd: Path, case: str, model: str, *words: str) -> dict[str, str]:
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


def test_sglangs_own_pick_on_a_modelopt_fp8_deepseek_checkpoint(cwd: Path) -> None:
    # b200-cubins-offline: SGLang 0.5.20, 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    assert check_rules(cwd, "b200-cubins-offline", "ds3-mo-fp8").get("modelopt-fp8-trtllm") == "unknown"


def test_the_runner_given_on_a_modelopt_fp8_moe_checkpoint(cwd: Path) -> None:
    for runner in ("flashinfer_trtllm", "flashinfer_trtllm_routed"):
        got = check_rules(cwd, "b200-cubins-offline", "mixtral-mo-fp8", "--moe-runner-backend", runner)
        assert got.get("modelopt-fp8-trtllm") == "unknown", runner


def test_not_this_path(cwd: Path) -> None:
    assert check_rules(cwd, "b200-cubins-offline", "ds3-mo-fp8", "--moe-runner-backend", "triton") == {}
    assert check_rules(cwd, "b200-cubins-offline", "mixtral-mo-fp8") == {}  # no SGLang pick: auto
    given = ("--moe-runner-backend", "flashinfer_trtllm")
    assert check_rules(cwd, "b200-cubins-offline", "llama-mo-fp8", *given) == {}  # dense
    assert check_rules(cwd, "h200-newest", "ds3-mo-fp8") == {}


MIXED = {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {
    "model.layers.1.mlp.experts.0.gate_proj": {"quant_algo": "NVFP4", "group_size": 16},
    "model.layers.0.self_attn.o_proj": {"quant_algo": "FP8"}}}}  # fmt: skip


def test_a_modelopt_mixed_precision_deepseek_checkpoint(tmp_path: Path) -> None:
    # hf_quant_config.json MIXED_PRECISION with NVFP4 expert layers: SGLang 0.5.20 reads modelopt_mixed
    # (configs/model_config.py), which the DeepSeek-family pick sends to flashinfer_trtllm; the gate reads
    # w4afp8 there and judged no cubins (a false pass): unknown unless they are ready
    (tmp_path / "ds3-mixed").mkdir()
    cfg = MODELS["ds3-mo-fp8"]
    (tmp_path / "ds3-mixed" / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    (tmp_path / "ds3-mixed" / "hf_quant_config.json").write_text(json.dumps(MIXED), encoding="utf-8")
    assert check_rules(tmp_path, "b200-cubins-offline", "ds3-mixed").get("modelopt-mixed-trtllm") == "unknown"
    assert check_rules(tmp_path, "h200-newest", "ds3-mixed") == {}
