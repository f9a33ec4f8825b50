"""ifc64 (the sixty-fourth fact-check sample, row b3): SGLang 0.5.20-0.5.23's BF16 trtllm-gen MoE (the unquantized
MoE method on the flashinfer_trtllm runner) asserts that the routed top-k renormalizes ('Renormalize is required for
flashinfer trtllm moe', layers/moe/moe_runner/flashinfer_trtllm.py), and Qwen3-MoE's renormalize is config.json's
norm_topk_prob, which transformers' Qwen3MoeConfig defaults to false. A BF16 Qwen3-MoE config without the key, on a
B200 with the TRTLLM_GEN_BMM cubins present, was allowed: SGLang picks flashinfer_trtllm itself there and the first
MoE forward raises. Now check moe-trtllm-gen-cubins fails it (rules unquantized-auto-renormalize /
unquantized-flag-renormalize on launch.model_moe_renormalize). The configs are this test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.launch.refusals import launch_model_moe_renormalize

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
    "qwen3moe-nokey": config("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512),
    "qwen3moe-norm": config("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512,
                            norm_topk_prob=True),
    "glm45-nonorm": config("Glm4MoeForCausalLM", "glm4_moe", n_routed_experts=16, moe_intermediate_size=512,
                           norm_topk_prob=False),
    "ds3-nokey": config("DeepseekV3ForCausalLM", "deepseek_v3", n_routed_experts=16, moe_intermediate_size=512, **MLA),
    "ds2-nokey": config("DeepseekV2ForCausalLM", "deepseek_v2", n_routed_experts=16, moe_intermediate_size=512, **MLA),
    "llama": config("LlamaForCausalLM", "llama", intermediate_size=8192),
}  # fmt: skip


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ifc64-renormalize")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


def gate(cwd: Path, case: str, model: str, *words: str) -> tuple[str, dict[str, str]]:
    """(check moe-trtllm-gen-cubins's status, its rules that are not ok with their results)"""
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    status = [str(f["status"]) for f in doc["features"] if f["feature"] == "moe-trtllm-gen-cubins"]
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]  # (its rules not ok)
    return ",".join(status), {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


def test_a_bf16_qwen3_moe_without_norm_topk_prob_is_refused_with_the_cubins_present(cwd: Path) -> None:
    # b200-cubin-package: SGLang 0.5.20 on B200 with flashinfer-cubin (the TRTLLM_GEN_BMM cubins ready)
    status, rules = gate(cwd, "b200-cubin-package", "qwen3moe-nokey")
    assert rules == {"unquantized-auto-renormalize": "fail"}  # fails before: {} (no such rule; the cubins are there)
    assert status == "blocked"  # (before: ok)


def test_the_runner_given_on_a_model_that_does_not_renormalize(cwd: Path) -> None:
    given = ("--moe-runner-backend", "flashinfer_trtllm")
    assert gate(cwd, "b200-cubin-package", "glm45-nonorm", *given)[1].get("unquantized-flag-renormalize") == "fail"
    assert gate(cwd, "b200-cubin-package", "ds2-nokey", *given)[1].get("unquantized-flag-renormalize") == "fail"


def test_a_model_that_renormalizes_keeps_its_verdict(cwd: Path) -> None:
    for model in ("qwen3moe-norm", "ds3-nokey"):
        status, rules = gate(cwd, "b200-cubin-package", model)
        assert (status, rules) == ("ok", {}), model


def test_another_runner_hopper_or_a_dense_model_is_not_this_path(cwd: Path) -> None:
    assert gate(cwd, "b200-cubin-package", "qwen3moe-nokey", "--moe-runner-backend", "triton")[1] == {}
    assert gate(cwd, "h200-newest", "qwen3moe-nokey")[1] == {}
    assert gate(cwd, "b200-cubin-package", "llama")[1] == {}
    # (offline without the cubins: the cubin rule fails beside it, as before)
    assert gate(cwd, "b200-cubins-offline", "qwen3moe-norm")[1] == {"unquantized-auto": "fail"}


@pytest.mark.parametrize(
    ("keys", "want"),
    [({"model_type": "qwen3_moe"}, False), ({"model_type": "qwen3_moe", "norm_topk_prob": True}, True),
     ({"model_type": "qwen2_moe"}, False), ({"model_type": "deepseek_v3"}, True),
     ({"model_type": "deepseek_v2"}, False),
     ({"model_type": "glm4_moe", "norm_topk_prob": False}, False), ({"model_type": "mixtral"}, None),
     ({"model_type": "qwen3_moe", "norm_topk_prob": "false"}, None), ({}, None)],
)  # fmt: skip
def test_the_fact_from_config_json(keys: dict[str, Any], want: bool | None) -> None:
    assert launch_model_moe_renormalize({"model": keys}) is want
    assert launch_model_moe_renormalize({"model": None}) is None and launch_model_moe_renormalize({}) is None
