"""imodel4: Cohere2-MoE (Command A+, North Mini Code) and the BF16 trtllm-gen MoE's renormalize assertion.

SGLang's models/cohere2_moe.py passes config.norm_topk_prob (SGLang's own Cohere2MoeConfig: default true) as its
routed top-k's renormalize. SGLang 0.5.13-0.5.22 hand every top-k to the flashinfer_trtllm runner, whose BF16 call
asserts 'Renormalize is required for flashinfer trtllm moe'; 0.5.23 keeps a sigmoid selection without norm_topk_prob in
SGLang (its own cohere2_sigmoid_topk, a custom routing function _can_bypass_trtllm_routing never hands on) but hands a
softmax one on (RoutingMethodType.Default), which asserts. launch.model_moe_renormalize was not set for cohere2_moe,
so a North-Mini-Code-shaped checkpoint (sigmoid, norm_topk_prob false) on --moe-runner-backend flashinfer_trtllm was
allowed on a B200 with the cubins present (a false pass). The rule also held from 0.5.20 only, although every release
from 0.5.9 hands the top-k on and asserts (a BF16 Qwen3-MoE allowed on 0.5.9-0.5.19).

The configs are this test's own files in the shape of config.json: the keys and values of North Mini Code 1.0's
(model_type cohere2_moe, architectures Cohere2MoeForCausalLM, 128 experts, 8 per token, expert_selection_fn sigmoid,
norm_topk_prob false; as a public checker of that checkpoint states them), fewer layers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.launch.refusals import launch_model_moe_renormalize, launch_model_moe_topk_kept

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
RULES = ("unquantized-auto-renormalize", "unquantized-flag-renormalize")
NORTH: dict[str, Any] = {
    "architectures": ["Cohere2MoeForCausalLM"], "model_type": "cohere2_moe", "hidden_size": 2048, "head_dim": 128,
    "num_hidden_layers": 5, "intermediate_size": 768, "prefix_dense_intermediate_size": 3072,
    "num_attention_heads": 32, "num_key_value_heads": 4, "vocab_size": 262144, "num_experts": 128,
    "num_experts_per_tok": 8, "num_shared_experts": 0, "first_k_dense_replace": 1, "expert_selection_fn": "sigmoid",
    "norm_topk_prob": False, "sliding_window": 4096, "rope_theta": 50000, "max_position_embeddings": 500000,
    "use_parallel_block": True, "use_qk_norm": False, "torch_dtype": "bfloat16",
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "north": NORTH,
    "north-softmax": {**NORTH, "expert_selection_fn": "softmax"},
    "north-renorm": {**NORTH, "norm_topk_prob": True},  # (Command A+'s choice: sigmoid, renormalized)
    "cohere2-defaults": {k: v for k, v in NORTH.items() if k not in ("expert_selection_fn", "norm_topk_prob")},
    "qwen3moe": {
        "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
        "num_hidden_layers": 4, "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
        "vocab_size": 151936, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
        "torch_dtype": "bfloat16",
    },
}  # fmt: skip
VERSIONS = ("0.5.9", "0.5.16", "0.5.19", "0.5.20", "0.5.22", "0.5.23")


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel4-cohere2")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in VERSIONS:
        doc = json.loads(json.dumps(facts))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def failing(cwd: Path, version: str, model: str, *words: str) -> dict[str, dict[str, Any]]:
    """the renormalize rules of check moe-trtllm-gen-cubins that fail, by rule (b200-cubin-package: 8 x B200, the
    TRTLLM_GEN_BMM cubins present; SGLang set per test)"""
    doc = stackcheck_json("gate", "--facts", str(cwd / f"b200-{version}.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r["rule"]): r for f in found for r in f["reasons"] if r["result"] == "fail" and r.get("rule") in RULES}


FLAG = ("--moe-runner-backend", "flashinfer_trtllm")


@pytest.mark.parametrize("version", ["0.5.16", "0.5.19", "0.5.20", "0.5.22"])
def test_a_non_renormalizing_cohere2_on_trtllm_gen_is_refused(cwd: Path, version: str) -> None:
    # fails before: {} (cohere2_moe not read; 0.5.16 / 0.5.19 not in the rule's range)
    assert set(failing(cwd, version, "north", *FLAG)) == {"unquantized-flag-renormalize"}
    assert set(failing(cwd, version, "north-softmax", *FLAG)) == {"unquantized-flag-renormalize"}


def test_the_refusal_shows_observed_required_and_source(cwd: Path) -> None:
    reason = failing(cwd, "0.5.22", "north", *FLAG)["unquantized-flag-renormalize"]
    text = json.dumps(reason)
    assert "Cohere2-MoE" in text and "Renormalize is required" in text
    assert "models/cohere2_moe.py" in text  # the source read
    assert "false" in text.lower() and "true" in text.lower()  # observed false, required true


def test_0523_keeps_a_sigmoid_selection_but_hands_a_softmax_one_on(cwd: Path) -> None:
    assert failing(cwd, "0.5.23", "north", *FLAG) == {}  # (cohere2_sigmoid_topk kept in SGLang: the routed call)
    # fails before: {} (a softmax selection binds Default, handed on, asserted)
    assert set(failing(cwd, "0.5.23", "north-softmax", *FLAG)) == {"unquantized-flag-renormalize"}


def test_sglangs_own_pick_of_a_bf16_cohere2_is_refused_too(cwd: Path) -> None:
    # SGLang 0.5.20-0.5.23's Cohere2 override picks flashinfer_trtllm on SM100 for a BF16 checkpoint
    assert set(failing(cwd, "0.5.22", "north")) == {"unquantized-auto-renormalize"}  # fails before: {}
    assert failing(cwd, "0.5.23", "north") == {}


@pytest.mark.parametrize("version", VERSIONS)
def test_neighbours_stay_allowed(cwd: Path, version: str) -> None:
    for model in ("north-renorm", "cohere2-defaults"):  # norm_topk_prob true, or SGLang's config default true
        assert failing(cwd, version, model, *FLAG) == {}
    assert failing(cwd, version, "north", "--moe-runner-backend", "triton") == {}


@pytest.mark.parametrize("version", ["0.5.9", "0.5.16", "0.5.19"])
def test_a_bf16_qwen3_moe_before_0520_is_refused(cwd: Path, version: str) -> None:
    # fails before: {} (the rule held from 0.5.20 only; every release from 0.5.9 asserts)
    assert set(failing(cwd, version, "qwen3moe", *FLAG)) == {"unquantized-flag-renormalize"}


def test_the_facts_as_read() -> None:
    assert launch_model_moe_renormalize({"model": MODELS["north"]}) is False
    assert launch_model_moe_renormalize({"model": MODELS["cohere2-defaults"]}) is True
    assert launch_model_moe_topk_kept({"model": MODELS["north"]}) is True
    assert launch_model_moe_topk_kept({"model": MODELS["north-softmax"]}) is False
    assert launch_model_moe_topk_kept({"model": MODELS["cohere2-defaults"]}) is False  # (softmax by default)
    assert launch_model_moe_topk_kept({"model": {**NORTH, "expert_selection_fn": 1}}) is None
