"""itfm1: a Gemma 4 MoE with --model-impl transformers was allowed. SGLang's Transformers backend
(models/transformers.py MoEMixin.recursive_replace, 0.5.10-0.5.23) replaces the experts with SGLang's fused MoE,
takes the top-k from the text config's num_experts_per_tok or top_k and asserts it found one; transformers'
Gemma4TextConfig names it top_k_experts and pops a config.json top_k as a generation parameter, so the model fails
while it is built. Where config.json adds num_experts_per_tok, the backend gives the experts activation 'silu' while
Gemma 4's use gelu_pytorch_tanh: wrong outputs. The refusal is transformers-backend-gemma4-moe. The configs are this
test's own, in the shape of Gemma 4 26B-A4B's config.json (text_config gemma4_text, enable_moe_block true, 128
experts, top_k_experts 8)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json

CASES = Path(__file__).resolve().parents[1] / "cases"
RULE = "refusal transformers-backend-gemma4-moe"
TEXT: dict[str, Any] = {
    "model_type": "gemma4_text", "hidden_size": 2816, "intermediate_size": 2112, "moe_intermediate_size": 704,
    "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 256, "num_hidden_layers": 4,
    "vocab_size": 262144, "enable_moe_block": True, "num_experts": 128, "top_k_experts": 8,
    "hidden_activation": "gelu_pytorch_tanh",
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "a4b": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": TEXT,
            "torch_dtype": "bfloat16"},
    "a4b-text-k": {**TEXT, "architectures": ["Gemma4ForCausalLM"], "num_experts_per_tok": 8,
                   "torch_dtype": "bfloat16"},
    "dense": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "torch_dtype": "bfloat16",
              "text_config": {k: v for k, v in TEXT.items() if k not in ("enable_moe_block", "num_experts",
                                                                          "top_k_experts")}},
}  # fmt: skip
VERSIONS = ("0.5.10", "0.5.14", "0.5.23")


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("itfm1-gemma4-transformers")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in VERSIONS:
        doc = json.loads(json.dumps(facts))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def reasons(root: Path, version: str, model: str, *impl: str) -> list[dict[str, Any]]:
    """RULE's reasons in the gate's answer (b200-cubin-package: 8 x B200; SGLang per test), in this process"""
    line = ["python", "-m", "sglang.launch_server", "--model-path", str(root / model), "--tp", "8", *impl]
    _, doc = cli_json(["gate", "--facts", str(root / f"b200-{version}.json"), "--dry-run", "--format", "json", "--",
                       *line])  # fmt: skip
    return [f for f in doc["reasons"] if f["feature"] == RULE]


def test_a_gemma4_moe_through_the_transformers_backend_is_refused(root: Path) -> None:
    found = reasons(root, "0.5.14", "a4b", "--model-impl", "transformers")
    assert [f["status"] for f in found] == ["blocked"]  # before: [] (no rule)
    assert "top_k_experts 8 and no num_experts_per_tok" in json.dumps(found[0])
    assert "Cannot determine top_k from config." in json.dumps(found[0])


def test_a_config_that_names_num_experts_per_tok_gets_the_silent_silu_refused(root: Path) -> None:
    found = reasons(root, "0.5.23", "a4b-text-k", "--model-impl=transformers")
    assert [f["status"] for f in found] == ["blocked"]  # before: []
    assert "'gelu_pytorch_tanh'" in json.dumps(found[0]) and "gated 'silu'" in json.dumps(found[0])


def test_auto_reaches_the_backend_only_where_sglang_has_no_gemma4_class(root: Path) -> None:
    assert [f["status"] for f in reasons(root, "0.5.10", "a4b")] == ["blocked"]  # before: []
    assert [f["status"] for f in reasons(root, "0.5.23", "a4b")] == []  # SGLang's own Gemma 4 class


def test_an_unread_config_under_auto_is_left_to_the_model_check(root: Path) -> None:
    assert [f["status"] for f in reasons(root, "0.5.10", "absent")] == []  # before: ['unknown'] on every model
    assert [f["status"] for f in reasons(root, "0.5.23", "absent", "--model-impl", "transformers")] == ["unknown"]


def test_a_dense_gemma4_through_the_transformers_backend_is_not_this_refusal(root: Path) -> None:
    assert [f["status"] for f in reasons(root, "0.5.23", "dense", "--model-impl", "transformers")] == []
