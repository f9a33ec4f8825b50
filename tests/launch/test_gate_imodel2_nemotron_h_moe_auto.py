"""imodel2: SGLang 0.5.20-0.5.23's NemotronH override (arg_groups/model_overrides/nemotron_h.py) sets
--moe-runner-backend flashinfer_trtllm on SM100 with no all-to-all backend for a checkpoint without quantization
(or a ModelOpt FP8 / NVFP4 one); the unquantized MoE method then runs FlashInfer's trtllm_bf16_moe (the
TRTLLM_GEN_BMM cubins). The gate listed these architectures as `unmodelled` (moe_runner_auto unread), which no rule
of moe-trtllm-gen-cubins reads: a BF16 Nemotron-H MoE on an offline B200 box without the cubins read the check as
not applicable (a false pass). The configs are this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"


def config(arch: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": "nemotron_h", "hidden_size": 2048,
                            "num_hidden_layers": 6, "num_attention_heads": 16, "num_key_value_heads": 2,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024,
                            "hybrid_override_pattern": "MEM*EM", "mlp_hidden_act": "relu2"}  # fmt: skip
    base.update(extra)
    return base


MOE = {"n_routed_experts": 16, "num_experts_per_tok": 2, "moe_intermediate_size": 512}
MODELS = {
    "nemh-moe-bf16": config("NemotronHForCausalLM", **MOE),
    "nemh-dense-bf16": config("NemotronHForCausalLM", intermediate_size=8192),
    "nemh-moe-fp8": config("NemotronHForCausalLM", quantization_config={"quant_method": "fp8"}, **MOE),
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel2-nemh")
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


def test_a_bf16_nemotron_h_moe_on_sm100_runs_trtllm_bf16_moe(cwd: Path) -> None:
    # b200-cubins-offline: SGLang 0.5.20, 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    assert check_rules(cwd, "b200-cubins-offline", "nemh-moe-bf16").get("unquantized-auto") == "fail"


def test_not_this_pick(cwd: Path) -> None:
    assert check_rules(cwd, "b200-cubins-offline", "nemh-dense-bf16") == {}  # no routed experts
    assert check_rules(cwd, "b200-cubins-offline", "nemh-moe-bf16", "--moe-a2a-backend", "deepep") == {}
    assert check_rules(cwd, "b200-cubins-offline", "nemh-moe-bf16", "--moe-runner-backend", "triton") == {}
    assert check_rules(cwd, "b200-cubins-offline", "nemh-moe-fp8") == {}  # a quantized checkpoint: its feature's
    assert check_rules(cwd, "h200-newest", "nemh-moe-bf16") == {}  # is_sm100 only


def test_a_bf16_cohere2_moe_on_sm100_runs_trtllm_bf16_moe(tmp_path: Path) -> None:
    # model_overrides/cohere2_moe.py (0.5.20-0.5.23): runner auto, is_sm100 and no quantization -> flashinfer_trtllm
    moe = {"architectures": ["Cohere2MoeForCausalLM"], "model_type": "cohere2_moe", "hidden_size": 2048,
           "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
           "vocab_size": 1024, "num_experts": 16, "num_experts_per_tok": 2, "torch_dtype": "bfloat16"}  # fmt: skip
    fp8 = {**moe, "quantization_config": {"quant_method": "fp8"}}
    for name, cfg in (("c2-bf16", moe), ("c2-fp8", fp8)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    assert check_rules(tmp_path, "b200-cubins-offline", "c2-bf16").get("unquantized-auto") == "fail"
    assert check_rules(tmp_path, "b200-cubins-offline", "c2-fp8") == {}  # quantized: no pick
    assert check_rules(tmp_path, "h200-newest", "c2-bf16") == {}
