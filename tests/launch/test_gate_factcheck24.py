"""The twenty-fourth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twenty-fourth sample"; the rows
in bench/factcheck24_drawn.json), each read in the real sglang wheels (not run on a GPU):

- a3: Qwen3-MoE compressed-tensors FP8 with --moe-a2a-backend deepep --deepep-mode low_latency (0.5.14, 9.0).
  get_moe_impl_class gives every MoE layer DeepEPMoE, whose constructor hands a layer back to the fused MoE runner
  only for an Fp8Config with DeepGEMM on (and a few runners this launch does not use); a CompressedTensorsConfig
  layer stays, and run_moe_core reaches assert False 'forward_deepgemm_masked is deprecated' (normal dispatch:
  '..._contiguous is deprecated') in the first MoE forward (layer.py 0.5.14:90-93, :215, :220).
- a0 / a6: Qwen3-MoE block FP8 with --moe-a2a-backend deepep, --deepep-mode normal (0.5.15) and auto (0.5.14), on
  12.0. SGLang's DeepGEMM configurer turns DeepGEMM off for sm_version == 120 in 0.5.13-0.5.19, so the Fp8Config
  layer stays in DeepEPMoE too: 'DeepEP auto mode requires deep_gemm' as the model is built (0.5.14:146-148), or the
  deprecated-forward assertion at the first normal dispatch (0.5.15:215). Below SM90 every release keeps DeepGEMM
  off: the same.

Model configs are written for the tests in the published checkpoints' shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_tp8, model_dir, release_box

OTHER = "refusal moe-a2a-deepep-quantized-moe-method"
BELOW = "refusal moe-a2a-deepep-fp8-moe-below-sm90"
SM120 = "refusal moe-a2a-deepep-fp8-moe-sm120"
OURS = (OTHER, BELOW, SM120)
QWEN3_MOE: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
    "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "num_hidden_layers": 94, "torch_dtype": "bfloat16",
}  # fmt: skip
FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
_W = {"type": "float", "num_bits": 8, "strategy": "channel", "symmetric": True, "dynamic": False}
_A = {"type": "float", "num_bits": 8, "strategy": "token", "symmetric": True, "dynamic": True}
CT_FP8 = {
    "quant_method": "compressed-tensors", "format": "float-quantized", "quantization_status": "compressed",
    "config_groups": {"group_0": {"targets": ["Linear"], "weights": _W, "input_activations": _A}},
    "ignore": ["lm_head", "re:.*mlp.gate$"], "kv_cache_scheme": None,
}  # fmt: skip
MODELOPT_FP8 = {"quant_method": "modelopt", "quant_algo": "FP8", "exclude_modules": ["lm_head"]}
W8A8_INT8 = {"quant_method": "w8a8_int8"}
W4AFP8 = {"quant_method": "w4afp8", "linear_activation_scheme": "dynamic", "moe_activation_scheme": "static"}


def _deepep(tmp_path: Path, release: str, cc: str, config: dict[str, Any] | None, *flags: str) -> dict[str, str]:
    """The gate's reasons (subject -> status) for a launch with --moe-a2a-backend deepep --ep 8 and FLAGS."""
    model = model_dir(tmp_path, "m", config) if config is not None else tmp_path / "not-downloaded"
    doc = gate_tp8(release_box(tmp_path, release, cc), model, "--moe-a2a-backend", "deepep", "--ep", "8", *flags)
    return {str(r["feature"]): str(r.get("status")) for r in doc.get("reasons") or []}


def _moe(qc: dict[str, Any] | None) -> dict[str, Any]:
    return {**QWEN3_MOE, "quantization_config": qc} if qc is not None else QWEN3_MOE


@pytest.mark.parametrize(
    ("release", "cc", "qc", "flags"),
    [
        ("0.5.14", "9.0", CT_FP8, ("--deepep-mode", "low_latency")),  # row a3
        ("0.5.23", "10.0", CT_FP8, ("--deepep-mode", "normal")),
        ("0.5.5", "9.0", CT_FP8, ()),
        ("0.5.9", "9.0", MODELOPT_FP8, ()),
        ("0.5.19", "10.0", W8A8_INT8, ("--moe-runner-backend", "triton")),
        ("0.5.16", "9.0", None, ("--quantization", "w8a8_fp8")),
    ],
)
def test_deepep_with_a_moe_quantized_another_way_is_refused(
    tmp_path: Path, release: str, cc: str, qc: dict[str, Any] | None, flags: tuple[str, ...]
) -> None:
    # fails on the parent: allowed (DeepEPMoE's deprecated forward, or its DeepGEMM assertion)
    assert _deepep(tmp_path, release, cc, _moe(qc), *flags).get(OTHER) == "blocked"


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.15", ("--deepep-mode", "normal")),  # row a0
        ("0.5.14", ("--deepep-mode", "auto")),  # row a6
        ("0.5.19", ("--deepep-mode", "low_latency")),
        ("0.5.13", ()),
    ],
)
def test_deepep_with_an_fp8_moe_on_sm120_is_refused(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    # fails on the parent: allowed (SGLang 0.5.13-0.5.19 keep DeepGEMM off on sm_120)
    assert _deepep(tmp_path, release, "12.0", _moe(FP8_BLOCK), *flags).get(SM120) == "blocked"


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [("0.5.10", "8.9", _moe(FP8_BLOCK), ()), ("0.5.23", "8.0", QWEN3_MOE, ("--quantization", "fp8"))],
)
def test_deepep_with_an_fp8_moe_below_sm90_is_refused(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    # fails on the parent: allowed by these rules (DeepGEMM off below SM90 in every release)
    assert _deepep(tmp_path, release, cc, config, *flags).get(BELOW) == "blocked"


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.15", "9.0", _moe(FP8_BLOCK), ()),  # DeepGEMM on: handed back to the fused runner
        ("0.5.23", "10.0", _moe(FP8_BLOCK), ("--deepep-mode", "normal")),
        ("0.5.20", "12.0", _moe(FP8_BLOCK), ()),  # DeepGEMM on SM120 where deep_gemm has its entry points
        ("0.5.21", "12.0", _moe(FP8_BLOCK), ()),
        ("0.5.12", "12.0", _moe(FP8_BLOCK), ()),  # no SM120 test in the configurer: not judged here
        ("0.5.15", "9.0", _moe(W4AFP8), ()),  # W4AFp8 has DeepEPMoE's own CUTLASS paths
        ("0.5.15", "9.0", _moe(CT_FP8), ("--moe-runner-backend", "deep_gemm")),  # a runner not followed
        ("0.5.4", "9.0", _moe(CT_FP8), ()),  # another DeepEPMoE, not read
        ("0.5.15", "9.0", {**LLAMA3, "quantization_config": CT_FP8}, ()),  # no MoE layer
    ],
)
def test_deepep_left_alone(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    # guards (pass on the parent too)
    reasons = _deepep(tmp_path, release, cc, config, *flags)
    assert not [s for s in OURS if s in reasons], reasons


def test_unread_model_is_unknown_not_ok(tmp_path: Path) -> None:
    # a model not downloaded: whether it is quantized is not known, so the rule says unknown (fails closed)
    assert _deepep(tmp_path, "0.5.15", "9.0", None).get(OTHER) == "unknown"
