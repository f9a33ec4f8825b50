"""imodel3: SGLang's models/llama4.py builds Llama 4's routed top-k with renormalize=False whatever config.json says
(0.5.9-0.5.23). On the flashinfer_trtllm runner SGLang 0.5.20-0.5.22 hand every top-k on as router logits, and 0.5.23
hands Llama 4's on too (_can_bypass_trtllm_routing: one expert per token, no renormalize, its custom routing
function), so a BF16 Llama 4 reaches the BF16 trtllm-gen MoE's assertion 'Renormalize is required for flashinfer
trtllm moe' at the first MoE forward. launch.model_moe_renormalize was not set for Llama 4 (its model type not in
ifc64's table) and the gate allowed the launch on a B200 with the cubins present (a false pass). The configs are this
test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.launch.refusals import launch_model_moe_renormalize

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
TEXT: dict[str, Any] = {
    "model_type": "llama4_text", "hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16,
    "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 1024, "num_local_experts": 16,
    "num_experts_per_tok": 1, "intermediate_size": 4096, "intermediate_size_mlp": 8192, "norm_topk_prob": True,
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    # norm_topk_prob true in config.json: llama4.py never reads it
    "llama4": {
        "architectures": ["Llama4ForConditionalGeneration"],
        "model_type": "llama4",
        "text_config": TEXT,
        "torch_dtype": "bfloat16",
    },
    "llama4-text": {**TEXT, "architectures": ["Llama4ForCausalLM"], "torch_dtype": "bfloat16"},
    "llama4-fp8": {
        "architectures": ["Llama4ForConditionalGeneration"],
        "model_type": "llama4",
        "text_config": TEXT,
        "torch_dtype": "bfloat16",
        "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"},
    },
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel3-llama4")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in ("0.5.20", "0.5.22", "0.5.23"):
        doc = json.loads(json.dumps(facts))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def rules(cwd: Path, version: str, model: str, *words: str) -> dict[str, str]:
    """check moe-trtllm-gen-cubins's rules that are not ok, with their results (b200-cubin-package: 8 x B200 with the
    TRTLLM_GEN_BMM cubins present; SGLang set per test)"""
    doc = stackcheck_json("gate", "--facts", str(cwd / f"b200-{version}.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"] if r["result"] != "pass"}


def test_llama4_renormalize_is_the_model_files_false() -> None:
    assert launch_model_moe_renormalize({"model": MODELS["llama4"]}) is False
    assert launch_model_moe_renormalize({"model": MODELS["llama4-text"]}) is False
    assert launch_model_moe_renormalize({"model": {"model_type": "llama"}}) is None


@pytest.mark.parametrize("version", ["0.5.20", "0.5.22", "0.5.23"])
def test_bf16_llama4_on_the_trtllm_gen_runner_fails_the_assertion(cwd: Path, version: str) -> None:
    for model in ("llama4", "llama4-text"):
        found = rules(cwd, version, model, "--moe-runner-backend", "flashinfer_trtllm")
        assert found.get("unquantized-flag-renormalize") == "fail", (version, model, found)


def test_other_runners_and_quantized_llama4_pass_this_rule(cwd: Path) -> None:
    assert "unquantized-flag-renormalize" not in rules(cwd, "0.5.23", "llama4", "--moe-runner-backend", "triton")
    assert "unquantized-flag-renormalize" not in rules(cwd, "0.5.23", "llama4")  # no BF16 pick for Llama 4
    fp8 = rules(cwd, "0.5.23", "llama4-fp8", "--moe-runner-backend", "flashinfer_trtllm")
    assert "unquantized-flag-renormalize" not in fp8  # the FP8 path passes renormalize on, no assertion


def test_recommend_reads_the_same_value() -> None:
    from stackcheck.launch.recommend import _line_moe_renormalize

    class Seen:
        config = MODELS["llama4"]

    assert _line_moe_renormalize(Seen()) is False  # type: ignore[arg-type]
