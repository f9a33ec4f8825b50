"""imodel4: a Gemma 4 MoE checkpoint on the trtllm-gen MoE runner. SGLang's Gemma4MoE (models/gemma4_causal.py,
0.5.12-0.5.23) builds its fused MoE with activation "gelu", and the trtllm-gen runner's BF16 call asserts
_SUPPORTED_BF16_ACTIVATIONS {silu, relu2} at the first MoE forward. The gate allowed a BF16 Gemma-4-26B-A4B-shaped
checkpoint with --moe-runner-backend flashinfer_trtllm on a B200 with the cubins present (a false pass). The FP4 path
takes gelu from 0.5.13 (SGLang's own pick for a ModelOpt NVFP4 Gemma 4). The configs are this test's own files in the
shape of Gemma 4 26B-A4B's config.json (model_type gemma4, text_config gemma4_text with enable_moe_block true, 128
experts, top_k_experts 8, moe_intermediate_size 704, as public converters of that checkpoint state its keys)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
FEATURE = "refusal moe-trtllm-gelu-experts"
TEXT: dict[str, Any] = {
    "model_type": "gemma4_text", "hidden_size": 2816, "intermediate_size": 2112, "moe_intermediate_size": 704,
    "num_attention_heads": 16, "num_key_value_heads": 8, "num_global_key_value_heads": 2, "head_dim": 256,
    "num_hidden_layers": 4, "vocab_size": 262144, "sliding_window": 1024, "enable_moe_block": True,
    "num_experts": 128, "top_k_experts": 8, "hidden_activation": "gelu_pytorch_tanh", "attention_k_eq_v": True,
}  # fmt: skip
A4B: dict[str, Any] = {
    "architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": TEXT,
    "torch_dtype": "bfloat16",
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "a4b": A4B,
    "a4b-text": {**TEXT, "architectures": ["Gemma4ForCausalLM"], "torch_dtype": "bfloat16"},
    # the dense Gemma 4 (no MoE block: the config class's default false)
    "dense": {**A4B, "text_config": {k: v for k, v in TEXT.items() if k not in ("enable_moe_block", "num_experts",
                                                                              "top_k_experts")}},
    "a4b-fp8": {**A4B, "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}},
}  # fmt: skip
VERSIONS = ("0.5.11", "0.5.12", "0.5.16", "0.5.22", "0.5.23")


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel4-gemma4")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in VERSIONS:
        doc = json.loads(json.dumps(facts))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def verdict(cwd: Path, version: str, model: str, *words: str) -> list[dict[str, Any]]:
    """the refusal's findings (b200-cubin-package: 8 x B200, the TRTLLM_GEN_BMM cubins present; SGLang per test)"""
    doc = stackcheck_json("gate", "--facts", str(cwd / f"b200-{version}.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    return [f for f in doc["reasons"] if f["feature"] == FEATURE]


def status(cwd: Path, version: str, model: str, *words: str) -> list[str]:
    return [str(f.get("status")) for f in verdict(cwd, version, model, *words)]


FLAG = ("--moe-runner-backend", "flashinfer_trtllm")


@pytest.mark.parametrize("version", ["0.5.12", "0.5.16", "0.5.22", "0.5.23"])
def test_a_bf16_gemma4_moe_on_trtllm_gen_is_refused(cwd: Path, version: str) -> None:
    assert status(cwd, version, "a4b", *FLAG) == ["blocked"]  # fails before: [] (no rule)
    assert status(cwd, version, "a4b-text", *FLAG) == ["blocked"]
    assert status(cwd, version, "a4b", "--moe-runner-backend", "flashinfer_trtllm_routed") == ["blocked"]


def test_the_refusal_shows_observed_required_and_source(cwd: Path) -> None:
    text = json.dumps(verdict(cwd, "0.5.22", "a4b", *FLAG))
    assert "Gemma4ForConditionalGeneration (enable_moe_block true)" in text and "'gelu'" in text
    assert "silu or relu2" in text  # required
    assert "gemma4_causal.py" in text  # the source read


@pytest.mark.parametrize("version", VERSIONS)
def test_neighbours_stay_allowed(cwd: Path, version: str) -> None:
    assert status(cwd, version, "a4b", "--moe-runner-backend", "triton") == []
    assert status(cwd, version, "a4b") == []  # (auto keeps a BF16 Gemma 4 off trtllm-gen)
    assert status(cwd, version, "dense", *FLAG) == []  # no MoE block
    # (0.5.11 has Gemma 4 too, its BF16 call asserts silu: refused there, test_ifc71_gemma4_cutlass_gelu.py)


def test_a_quantization_whose_path_was_not_read_is_unknown(cwd: Path) -> None:
    assert status(cwd, "0.5.22", "a4b-fp8", *FLAG) == ["unknown"]
    assert status(cwd, "0.5.22", "a4b", "--quantization", "modelopt_fp4", *FLAG) == []  # gelu on the FP4 path
    assert status(cwd, "0.5.12", "a4b", "--quantization", "modelopt_fp4", *FLAG) == ["blocked"]  # not yet in 0.5.12
