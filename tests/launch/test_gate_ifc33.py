"""ifc33 (the thirty-third fact-check sample): two false passes of ModelOpt MIXED_PRECISION / W4AFP8 checkpoints.

Rows 8 and 9: a MIXED_PRECISION checkpoint with an NVFP4 layer loads as modelopt_mixed; its W4A8_AWQ experts get no
MoE method from ModelOptMixedPrecisionConfig (0.5.10-0.5.23), so FusedMoE builds UnquantizedFusedMoEMethod, whose
BF16 weights the int4-packed tensors do not fit: the load raises (rule modelopt-mixed-unloadable-experts).
Rows 7 and 10: a NemotronH checkpoint loaded as w4afp8 runs W4AFp8MoEMethod, sized for gated experts, on NemotronH's
non-gated ones: the up projection does not fit, the load raises (rule w4afp8-non-gated-experts, 0.5.6-0.5.23).
On the parent (40d2577) the refused cases are allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401
from gate_cli import LLAMA3, QWEN3_MOE, gate_tp8, release_box

W4A8 = {"quant_algo": "W4A8_AWQ", "group_size": 128}
NVFP4 = {"quant_algo": "NVFP4", "group_size": 16}
FP8 = {"quant_algo": "FP8"}
W4A8_ONLY = {"model.layers.0.mlp.experts.0.w1": W4A8, "model.layers.0.self_attn.q_proj": FP8}
WITH_NVFP4 = {**W4A8_ONLY, "model.layers.1.mlp.experts.0.w1": NVFP4}
NVFP4_FP8 = {"model.layers.0.mlp.experts.0.w1": NVFP4, "model.layers.1.mlp.experts.0.w1": FP8,
             "model.layers.0.self_attn.q_proj": FP8}  # fmt: skip
NEMOTRON = {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}
DENSE_NEMOTRON = {**LLAMA3, "architectures": ["NemotronHForCausalLM"]}
LOAD, GATED = "refusal modelopt-mixed-unloadable-experts", "refusal w4afp8-non-gated-experts"


def _gate(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], layers: dict[str, Any] | None, *flags: str
) -> tuple[str, dict[str, str]]:
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    if layers is not None:
        quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": layers}
        hf_quant = {"producer": {"name": "modelopt"}, "quantization": quant}
        (model / "hf_quant_config.json").write_text(json.dumps(hf_quant))
    doc = gate_tp8(release_box(tmp_path, release, cc), model, *flags)
    return str(doc["decision"]), {str(r["feature"]): str(r["status"]) for r in doc.get("reasons") or []}


@pytest.mark.parametrize(
    ("release", "cc", "config", "layers", "flags", "rule"),
    [
        ("0.5.17", "10.0", QWEN3_MOE, WITH_NVFP4, (), LOAD),  # row 8
        ("0.5.20", "10.0", NEMOTRON, WITH_NVFP4, (), LOAD),  # row 9
        ("0.5.23", "10.0", QWEN3_MOE, WITH_NVFP4, ("--quantization", "w4afp8"), LOAD),  # the flag overridden
        ("0.5.13", "9.0", NEMOTRON, W4A8_ONLY, (), LOAD),  # 0.5.10-0.5.14 map NemotronH to modelopt_mixed
        ("0.5.15", "9.0", NEMOTRON, W4A8_ONLY, (), GATED),  # row 7
        ("0.5.21", "9.0", NEMOTRON, W4A8_ONLY, (), GATED),  # row 10
        ("0.5.8", "9.0", NEMOTRON, None, ("--quantization", "w4afp8"), GATED),
    ],
)
def test_experts_the_release_cannot_load_are_refused(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], layers: Any, flags: tuple[str, ...], rule: str
) -> None:
    decision, reasons = _gate(tmp_path, release, cc, config, layers, *flags)
    assert reasons.get(rule) == "blocked", reasons
    assert decision == "refuse"


@pytest.mark.parametrize(
    ("release", "cc", "config", "layers", "flags"),
    [
        ("0.5.23", "10.0", NEMOTRON, NVFP4_FP8, ()),  # modelopt_mixed with mapped experts (NVFP4, FP8)
        ("0.5.21", "9.0", QWEN3_MOE, W4A8_ONLY, ()),  # w4afp8 on gated experts: W4AFp8MoEMethod loads them
        ("0.5.21", "9.0", DENSE_NEMOTRON, W4A8_ONLY, ()),  # no routed experts
        ("0.5.5", "9.0", NEMOTRON, None, ("--quantization", "w4afp8")),  # no non-gated experts before 0.5.6
        ("0.5.9", "9.0", QWEN3_MOE, WITH_NVFP4, ()),  # no modelopt_mixed before 0.5.10: w4afp8, gated experts
    ],
)
def test_experts_it_loads_are_not_refused_by_these_rules(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], layers: Any, flags: tuple[str, ...]
) -> None:
    reasons = _gate(tmp_path, release, cc, config, layers, *flags)[1]
    assert LOAD not in reasons and GATED not in reasons, reasons


def test_an_experts_algo_outside_the_release_table_is_not_decided(tmp_path: Path) -> None:
    """FP8_BLOCK_SCALES experts get no MoE method in 0.5.19 (mapped from 0.5.20): not in the rule's table, unknown."""
    layers = {"model.layers.0.mlp.experts.0.w1": {"quant_algo": "FP8_BLOCK_SCALES"}, "model.layers.1.x": NVFP4}
    assert _gate(tmp_path, "0.5.19", "10.0", QWEN3_MOE, layers)[1].get(LOAD) == "unknown"
