"""imend17 (imodel3's find): a false refusal on SGLang 0.5.23. ifc64's rules unquantized-auto-renormalize /
unquantized-flag-renormalize refused a BF16 Qwen3-MoE / Qwen2-MoE / DeepSeek-V2 / GLM-4.x-MoE whose top-k does not
renormalize on the trtllm-gen runner, but 0.5.23 hands such a top-k to FlashInfer only where its routing method
matches (layers/moe/topk.py _can_bypass_trtllm_routing: Renormalize / RenormalizeNaive / DeepSeekV3 need renormalize
true), else keeps it in SGLang and calls the routed BF16 MoE, never reaching the assertion. 0.5.20-0.5.22 hand every
top-k on (still refused), and so does 0.5.23 for Llama 4's one-expert top-k (still refused). The configs are this
test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.launch.refusals import launch_model_moe_topk_kept

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128}
RULES = ("unquantized-auto-renormalize", "unquantized-flag-renormalize")


def config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


MODELS = {
    "qwen3moe": config("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512),
    "qwen2moe": config("Qwen2MoeForCausalLM", "qwen2_moe", num_experts=16, moe_intermediate_size=512),
    "ds2": config("DeepseekV2ForCausalLM", "deepseek_v2", n_routed_experts=16, moe_intermediate_size=512, **MLA),
    "ds2-method": config("DeepseekV2ForCausalLM", "deepseek_v2", n_routed_experts=16, moe_intermediate_size=512,
                         routing_method_type=0, **MLA),
    "glm45": config("Glm4MoeForCausalLM", "glm4_moe", n_routed_experts=16, moe_intermediate_size=512,
                    norm_topk_prob=False),
    "llama4": config("Llama4ForCausalLM", "llama4_text", num_local_experts=16, num_experts_per_tok=1,
                     intermediate_size=4096, intermediate_size_mlp=8192),
}  # fmt: skip


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imend17-renormalize")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in ("0.5.22", "0.5.23"):
        doc = json.loads(json.dumps(facts))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def failing(cwd: Path, version: str, model: str, *words: str) -> set[str]:
    """the renormalize rules of check moe-trtllm-gen-cubins that fail (b200-cubin-package: 8 x B200, the TRTLLM_GEN_BMM
    cubins present; SGLang set per test)"""
    doc = stackcheck_json("gate", "--facts", str(cwd / f"b200-{version}.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")) for f in found for r in f["reasons"] if r["result"] == "fail" and r.get("rule") in RULES}


FLAG = ("--moe-runner-backend", "flashinfer_trtllm")


@pytest.mark.parametrize("model", ["qwen3moe", "qwen2moe", "ds2", "glm45"])
def test_0523_keeps_a_non_renormalizing_top_k_off_the_assertion(cwd: Path, model: str) -> None:
    # fails before: {'unquantized-flag-renormalize'} on 0.5.23 (a false refusal)
    assert failing(cwd, "0.5.23", model, *FLAG) == set()
    assert failing(cwd, "0.5.22", model, *FLAG) == {"unquantized-flag-renormalize"}  # (0.5.22 hands it on)


def test_0523_auto_pick_of_a_bf16_qwen3_moe_is_not_refused(cwd: Path) -> None:
    assert failing(cwd, "0.5.23", "qwen3moe") == set()  # fails before: {'unquantized-auto-renormalize'}
    assert failing(cwd, "0.5.22", "qwen3moe") == {"unquantized-auto-renormalize"}


def test_llama4_and_an_unread_routing_method_stay_refused_on_0523(cwd: Path) -> None:
    assert failing(cwd, "0.5.23", "llama4", *FLAG) == {"unquantized-flag-renormalize"}
    # (deepseek_v2.py reads routing_method_type from the config: a stated one is not judged, fail closed)
    assert failing(cwd, "0.5.23", "ds2-method", *FLAG) == {"unquantized-flag-renormalize"}


def test_the_fact_as_read() -> None:
    assert launch_model_moe_topk_kept({"model": MODELS["qwen3moe"]}) is True
    assert launch_model_moe_topk_kept({"model": MODELS["llama4"]}) is False
    assert launch_model_moe_topk_kept({"model": MODELS["ds2-method"]}) is None
    assert launch_model_moe_topk_kept({"model": {"model_type": "mixtral"}}) is None
    assert launch_model_moe_topk_kept({}) is None
