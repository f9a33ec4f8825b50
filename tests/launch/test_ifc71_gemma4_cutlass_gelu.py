"""ifc71 (factcheck71 row g5): a BF16 Gemma-4-26B-A4B-shaped checkpoint with --moe-runner-backend flashinfer_cutlass on
a B200 with SGLang 0.5.12 was allowed. SGLang builds Gemma 4's experts with activation "gelu" (models/gemma4_causal.py
Gemma4MoE), and on 0.5.12-0.5.14 the unquantized MoE method's FlashInfer CUTLASS call (layers/quantization/unquant.py
forward_cuda) passes ActivationType.Relu2 for relu2 and ActivationType.Swiglu for anything else, unchecked; FlashInfer
0.6.11.post1's CUTLASS MoE runs Swiglu as the SiLU-gated kernel (cutlass_fused_moe_kernels.cuh doActivation). The
server starts and answers with wrong outputs. From 0.5.15 the runner's own file maps gated gelu to GeGLU. The refusal
is moe-cutlass-gelu-experts-as-swiglu. Beside it: the 0.5.11 wheel has the Gemma 4 files too (imodel4 read 0.5.9-0.5.11
as having none), and its BF16 trtllm-gen call asserts the activation is silu, so moe-trtllm-gelu-experts starts at
0.5.11 and so does this rule. The configs are this test's own, in the shape imodel4's test gives Gemma 4
26B-A4B's config.json (text_config gemma4_text, enable_moe_block true, 128 experts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json

CASES = Path(__file__).resolve().parents[1] / "cases"
RULE = "refusal moe-cutlass-gelu-experts-as-swiglu"
TEXT: dict[str, Any] = {
    "model_type": "gemma4_text", "hidden_size": 2816, "intermediate_size": 2112, "moe_intermediate_size": 704,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 4,
    "vocab_size": 262144, "enable_moe_block": True, "num_experts": 128, "top_k_experts": 8,
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "a4b": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": TEXT,
            "torch_dtype": "bfloat16"},
    "a4b-text": {**TEXT, "architectures": ["Gemma4ForCausalLM"], "torch_dtype": "bfloat16"},
    "dense": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "torch_dtype": "bfloat16",
              "text_config": {k: v for k, v in TEXT.items() if k not in ("enable_moe_block", "num_experts",
                                                                          "top_k_experts")}},
    "a4b-fp8": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": TEXT,
                "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}},
}  # fmt: skip
VERSIONS = ("0.5.10", "0.5.11", "0.5.12", "0.5.14", "0.5.15")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ifc71-gemma4-cutlass")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in VERSIONS:
        doc = json.loads(json.dumps(facts))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def status(root: Path, version: str, model: str, runner: str = "flashinfer_cutlass") -> list[str]:
    return _statuses(root, version, model, runner, RULE)


def _statuses(root: Path, version: str, model: str, runner: str, rule: str) -> list[str]:
    """RULE's statuses in the gate's reasons (b200-cubin-package: 8 x B200; SGLang per test), in this process"""
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(root / model), "--attention-backend",
            "triton", "--tp", "8", "--moe-runner-backend", runner]  # fmt: skip
    _, doc = cli_json(["gate", "--facts", str(root / f"b200-{version}.json"), "--dry-run", "--format", "json", "--",
                       *line])  # fmt: skip
    return [str(f.get("status")) for f in doc["reasons"] if f["feature"] == rule]


@pytest.mark.parametrize("version", ["0.5.11", "0.5.12", "0.5.14"])
def test_a_bf16_gemma4_moe_on_the_cutlass_moe_is_refused_on_0_5_11_to_0_5_14(root: Path, version: str) -> None:
    assert status(root, version, "a4b-text" if version == "0.5.14" else "a4b") == ["blocked"]  # before: [] (no rule)


def test_a_bf16_gemma4_moe_on_trtllm_gen_is_refused_on_0_5_11_too(root: Path) -> None:
    # fails before: [] (moe-trtllm-gelu-experts did not apply below 0.5.12)
    assert _statuses(root, "0.5.11", "a4b", "flashinfer_trtllm", "refusal moe-trtllm-gelu-experts") == ["blocked"]


def test_the_message_names_the_silent_swiglu(root: Path) -> None:
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(root / "a4b"), "--tp", "8",
            "--moe-runner-backend", "flashinfer_cutlass"]  # fmt: skip
    rc, doc = cli_json(["gate", "--facts", str(root / "b200-0.5.12.json"), "--dry-run", "--format", "json", "--",
                        *line])  # fmt: skip
    assert rc == 1 and doc["decision"] == "refuse"
    (found,) = [f for f in doc["reasons"] if f["feature"] == RULE]
    text = json.dumps(found)
    assert "SwiGLU" in text and "unquant.py" in text and "0.5.15" in text, text


def test_what_stays_allowed_by_this_rule(root: Path) -> None:
    assert status(root, "0.5.15", "a4b") == []  # the runner's own file maps gelu to GeGLU
    assert status(root, "0.5.10", "a4b") == []  # no Gemma 4 model yet
    assert status(root, "0.5.12", "dense") == []  # no MoE block
    assert status(root, "0.5.12", "a4b", runner="triton") == []  # another runner
    assert status(root, "0.5.12", "a4b-fp8") == ["unknown"]  # a quantized path not judged refused: unknown
