"""igap12: a compressed-tensors FP8 weight-only (W8A16) checkpoint on a model with routed experts is refused on every
release (refusal ct-fp8-w8a16-moe), and the expert refusals of a mixed-precision checkpoint are unknown, never blocked.

No compressed-tensors MoE scheme takes FP8 weights without FP8 activations: 0.5.22+ raise 'Unsupported FusedMoe
scheme' (compressed_tensors.py 0.5.22:990, 0.5.23:1004, the WNA16 test asking integer weights from 0.5.22); before,
per-channel FP8 weights went to the WNA16 MoE scheme, which asks a pack-quantized checkpoint (ValueError), per-tensor
ones to the same RuntimeError. The parent judged the FP8 W8A8 experts only, and allowed these on any GPU. Configs my
own, in the shape of llm-compressor's FP8 weight-only export (`FP8` scheme without activations) on a Qwen3-MoE-shaped
model. On the parent (b33a6f2) 5 of these fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, gate_tp8, model_dir, release_box
from registry_wheels import fetch_wheel, read_texts


def fp8_weight_only(model: dict[str, Any], strategy: str = "channel") -> dict[str, Any]:
    weights = {"num_bits": 8, "type": "float", "strategy": strategy, "symmetric": True, "dynamic": False}
    group = {"targets": ["Linear"], "weights": weights, "input_activations": None}
    qc = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": group}}
    return {**model, "quantization_config": {**qc, "ignore": ["lm_head", "re:.*mlp.gate$"], "kv_cache_scheme": None}}


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any]) -> dict[str, Any]:
    return gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", config))


def _refusals(doc: dict[str, Any]) -> dict[str, str]:
    return {
        str(r.get("feature")): str(r.get("status"))
        for r in doc.get("reasons") or []
        if str(r.get("feature", "")).startswith("refusal ct-")
    }


@pytest.mark.parametrize(
    ("release", "strategy"), [("0.5.23", "channel"), ("0.5.22", "tensor"), ("0.5.13", "channel"), ("0.5.5", "tensor")]
)
def test_fp8_weight_only_experts_are_refused(tmp_path: Path, release: str, strategy: str) -> None:
    doc = _gate(tmp_path, release, "9.0", fp8_weight_only(QWEN3_MOE, strategy))
    assert doc["decision"] == "refuse"
    assert _refusals(doc) == {"refusal ct-fp8-w8a16-moe": "blocked"}, doc.get("reasons")


def test_a_dense_fp8_weight_only_model_is_allowed(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", "8.0", fp8_weight_only(LLAMA3))
    assert _refusals(doc) == {}
    assert doc["decision"] == "allow", doc.get("reasons")


def test_a_mixed_precision_checkpoints_expert_refusals_are_unknown(tmp_path: Path) -> None:
    """Its groups name modules: an int8 W8A8 group may quantize the attention only, the experts taking another."""
    int8 = {"num_bits": 8, "type": "int", "symmetric": True}
    attn = {
        "targets": ["re:.*self_attn.*"],
        "format": "int-quantized",
        "weights": {**int8, "strategy": "channel", "dynamic": False},
        "input_activations": {**int8, "strategy": "token", "dynamic": True},
    }
    experts = {
        "targets": ["re:.*mlp.experts.*"],
        "format": "nvfp4-pack-quantized",
        "weights": {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True},
        "input_activations": {
            "num_bits": 4,
            "type": "float",
            "strategy": "tensor_group",
            "group_size": 16,
            "symmetric": True,
            "dynamic": "local",
        },
    }
    qc = {"quant_method": "compressed-tensors", "format": "mixed-precision", "config_groups": {"a": attn, "e": experts}}
    doc = _gate(tmp_path, "0.5.23", "10.0", {**QWEN3_MOE, "quantization_config": qc})
    assert _refusals(doc) == {"refusal ct-int8-moe-cuda": "unknown"}, doc.get("reasons")


@pytest.mark.registry
@pytest.mark.parametrize(("release", "int_test"), [("0.5.21", False), ("0.5.22", True), ("0.5.23", True)])
def test_the_wheels_moe_scheme_choice(release: str, int_test: bool) -> None:
    ct = "sglang/srt/layers/quantization/compressed_tensors/"
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n.startswith(ct) and n.endswith(".py"))
    config = texts[ct + "compressed_tensors.py"]
    assert "Unsupported FusedMoe scheme" in config
    assert ("is_int_type = weight_quant.type == QuantizationType.INT" in config) is int_test
    assert "W8A16Fp8MoE" not in config  # no FP8 weight-only MoE scheme
    assert (
        "quant_format == CompressionFormat.pack_quantized.value"
        in texts[ct + "schemes/compressed_tensors_wNa16_moe.py"]
    )
