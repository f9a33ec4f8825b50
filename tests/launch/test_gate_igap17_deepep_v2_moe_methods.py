"""The MoE methods `--moe-a2a-backend deepep_v2` refuses that the twenty-seventh sample left open (igap17), read
in the real wheels 0.5.19-0.5.23: FusedMoE.__init__ calls _validate_deepep_v2_quant_method (fused_moe_triton/
layer.py, 0.5.20:242-267 and :463, 0.5.23:275-305 and :528), which takes Fp8MoEMethod with weight_block_size
[128, 128] and dynamic activations (0.5.21 on: also 1x32 MXFP8 and UnquantizedFusedMoEMethod).

- --quantization fp8 on a BF16 checkpoint: weight_utils.get_quant_config builds Fp8Config() (no weight block),
  Fp8MoEMethod's weight_block_size None: refused on every release;
- an FP8 checkpoint per tensor or with another block: refused on every release;
- MXFP8 (--quantization mxfp8, an MXFP8 checkpoint): refused on 0.5.19-0.5.20, taken from 0.5.21;
- ModelOpt FP8 (per tensor) / NVFP4: ModelOptFp8MoEMethod / ModelOptNvFp4FusedMoEMethod, refused on every release;
- Quark: QuarkFusedMoEMethod on 0.5.19-0.5.20; from 0.5.21 a block-FP8 layer config gets Fp8MoEMethod (taken at
  128x128), any other QuarkFusedMoEMethod.

The model configs are the test helpers' shapes. On the parent the refused and unknown cases here fail (allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, gate_checkpoint, gate_tp8, model_dir, quantized, reason_status, release_box

V2 = ("--moe-a2a-backend", "deepep_v2", "--ep", "8")
BLOCK = "refusal deepep-v2-fp8-moe-block-size"
MXFP8 = "refusal deepep-v2-mxfp8-moe"
MODELOPT = "refusal deepep-v2-modelopt-moe-method"
QUARK_OLD = "refusal deepep-v2-quark-moe-method"
QUARK_NEW = "refusal deepep-v2-quark-moe-block"
OURS = (BLOCK, MXFP8, MODELOPT, QUARK_OLD, QUARK_NEW)


def fp8(block: list[int] | None, act: str = "dynamic", **more: Any) -> dict[str, Any]:
    qc: dict[str, Any] = {"quant_method": "fp8", "activation_scheme": act, **more}
    if block is not None:
        qc["weight_block_size"] = block
    return quantized(qc, QWEN3_MOE)


def quark(block: list[int], input_dynamic: bool = True, **more: Any) -> dict[str, Any]:
    layer = {
        "weight": {"dtype": "fp8_e4m3", "qscheme": "per_block", "is_dynamic": False, "block_size": block},
        "input_tensors": {"dtype": "fp8_e4m3", "qscheme": "per_group", "is_dynamic": input_dynamic},
        "output_tensors": None,
        "bias": None,
    }
    qc = {"quant_method": "quark", "global_quant_config": layer, "layer_quant_config": {}, "exclude": [], **more}
    return quantized(qc, QWEN3_MOE)


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.21", QWEN3_MOE, ("--quantization", "fp8")),  # online FP8: Fp8Config(), no weight block
        ("0.5.23", QWEN3_MOE, ("--quantization", "fp8")),
        ("0.5.20", QWEN3_MOE, ("--quantization", "fp8")),
        ("0.5.22", fp8(None), ()),  # per-tensor FP8 checkpoint
        ("0.5.19", fp8(None, "static"), ()),
        ("0.5.23", fp8([64, 64]), ()),  # another weight block
        ("0.5.20", fp8([128, 64]), ("--quantization", "fp8")),
    ],
)  # fmt: skip
def test_fp8_experts_not_128x128_refused(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, "9.0", config, *V2, *flags)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(BLOCK) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.19", QWEN3_MOE, ("--quantization", "mxfp8")),
        ("0.5.20", QWEN3_MOE, ("--quantization", "mxfp8")),
        ("0.5.20", quantized({"quant_method": "mxfp8", "activation_scheme": "dynamic"}, QWEN3_MOE), ()),
    ],
)
def test_mxfp8_experts_before_0_5_21_refused(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, "10.0", config, *V2, *flags)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(MXFP8) == ("blocked", "crash")


@pytest.mark.parametrize("release", ["0.5.19", "0.5.21", "0.5.23"])
@pytest.mark.parametrize("algo", ["FP8", "NVFP4"])
def test_modelopt_fp8_and_nvfp4_experts_refused(tmp_path: Path, release: str, algo: str) -> None:
    config = quantized({"quant_method": "modelopt", "quant_algo": algo}, QWEN3_MOE)
    doc = gate_checkpoint(tmp_path, release, "10.0", config, *V2)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(MODELOPT) == ("blocked", "crash")


def test_online_nvfp4_experts_refused(tmp_path: Path) -> None:
    # --quantization modelopt_fp4 on a BF16 checkpoint: ModelOptFp4Config.for_online_weight_quantization, whose MoE
    # method is an NVFP4 one
    doc = gate_checkpoint(tmp_path, "0.5.22", "10.0", QWEN3_MOE, *V2, "--quantization", "modelopt_fp4")
    assert reason_status(doc).get(MODELOPT) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "config", "rule"),
    [
        ("0.5.20", quark([128, 128]), QUARK_OLD),  # QuarkFusedMoEMethod whatever the layer config
        ("0.5.19", quark([128, 128]), QUARK_OLD),
        ("0.5.21", quark([64, 64]), QUARK_NEW),  # Fp8MoEMethod with a 64x64 block
        ("0.5.23", quark([128, 128], input_dynamic=False), QUARK_NEW),  # static input: QuarkFusedMoEMethod
    ],
)
def test_quark_experts_refused(tmp_path: Path, release: str, config: dict[str, Any], rule: str) -> None:
    doc = gate_checkpoint(tmp_path, release, "9.0", config, *V2)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(rule) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "config", "flags", "rule"),
    [
        ("0.5.21", None, ("--quantization", "fp8"), BLOCK),  # no config.json: the checkpoint's block not read
        ("0.5.23", fp8(None, ignored_layers=["model.layers.0.mlp.experts"]), (), BLOCK),  # experts maybe ignored
        ("0.5.20", None, ("--quantization", "mxfp8"), MXFP8),
        ("0.5.22", quark([128, 128], layer_quant_config={"*.experts.*": {}}), (), QUARK_NEW),  # per-layer configs
    ],
)
def test_deciding_value_not_read_is_unknown(
    tmp_path: Path, release: str, config: dict[str, Any] | None, flags: tuple[str, ...], rule: str
) -> None:
    doc = gate_tp8(release_box(tmp_path, release, "9.0"), model_dir(tmp_path, "m", config), *V2, *flags)
    assert doc["decision"] == "refuse"  # fails closed without --allow-unknown
    assert reason_status(doc).get(rule, ("",))[0] == "unknown", reason_status(doc)


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.20", fp8([128, 128]), ()),  # the 128x128 block-FP8 experts the check asks for
        ("0.5.23", fp8([128, 128]), ("--quantization", "fp8")),
        ("0.5.21", QWEN3_MOE, ("--quantization", "mxfp8")),  # 1x32 MXFP8 taken from 0.5.21
        ("0.5.23", quantized({"quant_method": "mxfp8", "activation_scheme": "dynamic"}, QWEN3_MOE), ()),
        ("0.5.21", quark([128, 128]), ()),  # Quark block FP8 128x128: Fp8MoEMethod from 0.5.21
        ("0.5.23", quark([128, 128]), ()),
        ("0.5.20", fp8(None), ("--moe-a2a-backend", "deepep", "--ep", "8")),  # DeepEP v1: not these rules
        ("0.5.20", QWEN3_MOE, ("--quantization", "mxfp8", "--moe-a2a-backend", "deepep", "--ep", "8")),
    ],
)  # fmt: skip
def test_what_the_wheel_takes_is_not_these_rules(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    given = flags if "--moe-a2a-backend" in flags else (*V2, *flags)
    status = reason_status(gate_checkpoint(tmp_path, release, "9.0", config, *given))
    assert not set(OURS) & set(status), status


@pytest.mark.parametrize("flags", [("--quantization", "fp8"), ("--quantization", "mxfp8")])
def test_a_dense_model_is_not_these_rules(tmp_path: Path, flags: tuple[str, ...]) -> None:
    status = reason_status(gate_checkpoint(tmp_path, "0.5.20", "10.0", LLAMA3, *V2, *flags))
    assert not set(OURS) & set(status), status


DSV3 = {**QWEN3_MOE, "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}
FP8_MXFP4_EXPERTS = {"routed_experts_quant_method": "mxfp4"}
FP4 = "refusal deepep-v2-fp4-routed-experts"
DSV4_FP4 = "refusal deepep-v2-dsv4-fp4-experts"
MIMO_FP4 = "refusal deepep-v2-mimo-fp4-experts"


@pytest.mark.parametrize("release", ["0.5.19", "0.5.21", "0.5.23"])
def test_mxfp4_packed_routed_experts_refused(tmp_path: Path, release: str) -> None:
    # ModelConfig.is_fp4_experts from routed_experts_quant_method: 'this layer selected FP4 experts'
    doc = gate_checkpoint(tmp_path, release, "10.0", fp8([128, 128], **FP8_MXFP4_EXPERTS), *V2)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(FP4) == ("blocked", "crash")


def test_dsv4_routed_expert_layout_not_in_config_is_unknown(tmp_path: Path) -> None:
    # SGLANG_DSV4_FP4_EXPERTS (default on) or the weight files' dtype decide: not config.json
    dsv4 = {**fp8([128, 128]), "architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4"}
    doc = gate_checkpoint(tmp_path, "0.5.23", "10.0", dsv4, *V2)
    assert reason_status(doc).get(DSV4_FP4, ("",))[0] == "unknown", reason_status(doc)
    said = {**dsv4, "quantization_config": {**dsv4["quantization_config"], **FP8_MXFP4_EXPERTS}}
    status = reason_status(gate_checkpoint(tmp_path, "0.5.23", "10.0", said, *V2))
    assert DSV4_FP4 not in status and status.get(FP4) == ("blocked", "crash"), status


def test_mimo_v2_mxfp4_store_dtype_refused_from_0_5_20(tmp_path: Path) -> None:
    mimo = {**fp8([128, 128], store_dtype="MXFP4"), "architectures": ["MiMoV2FlashForCausalLM"]}
    assert reason_status(gate_checkpoint(tmp_path, "0.5.23", "10.0", mimo, *V2)).get(MIMO_FP4) == ("blocked", "crash")
    assert MIMO_FP4 not in reason_status(gate_checkpoint(tmp_path, "0.5.19", "10.0", mimo, *V2))


def test_fp8_routed_experts_not_these_rules(tmp_path: Path) -> None:
    # a DeepSeek-V3 block-FP8 checkpoint: no FP4 marker, not DeepSeek-V4
    status = reason_status(gate_checkpoint(tmp_path, "0.5.23", "10.0", {**fp8([128, 128]), **DSV3}, *V2))
    assert not {FP4, DSV4_FP4, MIMO_FP4, *OURS} & set(status), status
