"""The nineteenth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Nineteenth sample"; the rows in
bench/factcheck19_drawn.json), each read in the real sglang wheels:

- a0, a2, a5, a7, a9, a13: a block-quantized FP8 Qwen3-MoE checkpoint (moe_intermediate_size 1536, weight blocks of
  128 x 128) at --tp 8: each rank's share of the experts (192) is not a multiple of the block, and SGLang's
  Fp8MoEMethod.create_weights raises ValueError while it builds the model, on every GPU (refusal
  fp8-block-moe-tp-split), unless the experts are split instead (ep = tp) or the flashinfer_trtllm runner rounds the
  share up to 128 (0.5.8 on; SGLang picks it itself for the Qwen3-MoE family on SM100).
- a0, a2, a5, a7, a13 (too): any FP8 (Fp8Config) MoE model on a GPU of compute capability 8.0-8.8: the experts run
  through Triton's fused MoE kernel on float8_e4m3 operands, which Triton cannot compile below sm_89 (refusal
  fp8-moe-triton-below-sm89); the dense FP8 layers' Marlin fallback has no MoE counterpart.

The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, gate_tp8, model_dir, reason_status, release_box

SPLIT = "refusal fp8-block-moe-tp-split"
SM89 = "refusal fp8-moe-triton-below-sm89"
BLOCK_FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
QWEN3_MOE_FP8: dict[str, Any] = {**QWEN3_MOE, "quantization_config": BLOCK_FP8}
# an MoE model outside SGLang's SM100 runner pick, with its experts' size in intermediate_size (Mixtral's shape)
MIXTRAL_FP8: dict[str, Any] = {
    "architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "num_local_experts": 8,
    "num_experts_per_tok": 2, "intermediate_size": 1536, "quantization_config": BLOCK_FP8,
}  # fmt: skip
LLAMA3_BLOCK_FP8: dict[str, Any] = {**LLAMA3, "intermediate_size": 14336, "quantization_config": BLOCK_FP8}
LLAMA3_FP8: dict[str, Any] = {**LLAMA3, "quantization_config": {"quant_method": "fp8", "activation_scheme": "static"}}


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    return gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "model", config), *flags)


@pytest.mark.parametrize("release", ["0.5.3", "0.5.9", "0.5.15", "0.5.20", "0.5.23"])
@pytest.mark.parametrize("cc", ["9.0", "12.0"])
def test_block_fp8_moe_split_at_tp8_refused(tmp_path: Path, release: str, cc: str) -> None:
    doc = _gate(tmp_path, release, cc, QWEN3_MOE_FP8)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(SPLIT) == ("blocked", "crash"), doc.get("reasons")


def test_block_fp8_moe_split_refused_before_0_5_8_even_with_flashinfer_trtllm(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.7", "10.0", QWEN3_MOE_FP8, "--moe-runner-backend", "flashinfer_trtllm")
    assert reason_status(doc).get(SPLIT) == ("blocked", "crash"), doc.get("reasons")


def test_block_fp8_moe_split_unknown_on_sm100_for_an_architecture_sglang_may_pick_for(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.20", "10.0", MIXTRAL_FP8)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(SPLIT) == ("unknown", None), doc.get("reasons")


def test_block_fp8_moe_split_read_in_a_text_sub_config(tmp_path: Path) -> None:
    """A multimodal MoE checkpoint keeps its experts' size in text_config (the Qwen3-VL-MoE shape)."""
    text = {k: v for k, v in QWEN3_MOE.items() if k not in ("architectures", "model_type")}
    vl: dict[str, Any] = {
        "architectures": ["Qwen3VLMoeForConditionalGeneration"], "model_type": "qwen3_vl_moe",
        "text_config": text, "quantization_config": BLOCK_FP8,
    }  # fmt: skip
    doc = _gate(tmp_path, "0.5.20", "9.0", vl)
    assert reason_status(doc).get(SPLIT) == ("blocked", "crash"), doc.get("reasons")


def test_block_fp8_moe_split_unknown_for_fp8_flag_on_an_unread_model(tmp_path: Path) -> None:
    doc = gate_tp8(release_box(tmp_path, "0.5.20", "9.0"), model_dir(tmp_path, "m", None), "--quantization", "fp8")
    assert reason_status(doc).get(SPLIT) == ("unknown", None), doc.get("reasons")


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.20", "9.0", QWEN3_MOE_FP8, ["--ep-size", "8"]),  # experts split: 1536 whole on each rank
        ("0.5.20", "9.0", QWEN3_MOE_FP8, ["--moe-a2a-backend", "deepep"]),  # deepep sets ep to tp
        ("0.5.20", "10.0", QWEN3_MOE_FP8, ["--moe-runner-backend", "flashinfer_trtllm"]),  # rounded up to 256
        ("0.5.15", "10.0", QWEN3_MOE_FP8, []),  # SGLang picks flashinfer_trtllm for Qwen3-MoE on SM100
        ("0.5.20", "9.0", QWEN3_MOE_FP8, ["--tp", "4"]),  # 384 per rank
        ("0.5.20", "9.0", QWEN3_MOE, ["--quantization", "fp8"]),  # a BF16 checkpoint quantized per tensor
        ("0.5.20", "9.0", LLAMA3_BLOCK_FP8, []),  # dense
    ],
)
def test_block_fp8_moe_split_not_refused_where_it_fits(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]
) -> None:
    """Guards (pass on the parent too): the launches whose split the block divides, or which never check it."""
    doc = _gate(tmp_path, release, cc, config, *flags)
    assert SPLIT not in reason_status(doc), doc.get("reasons")


@pytest.mark.parametrize("release", ["0.5.1", "0.5.9", "0.5.17", "0.5.23"])
@pytest.mark.parametrize("cc", ["8.0", "8.6"])
def test_fp8_moe_below_sm89_refused(tmp_path: Path, release: str, cc: str) -> None:
    # --tp 4: each rank's 384 is a multiple of the block, so only the GPU's FP8 type is judged
    ckpt = _gate(tmp_path, release, cc, QWEN3_MOE_FP8, "--tp", "4")
    assert ckpt["decision"] == "refuse"
    assert reason_status(ckpt).get(SM89) == ("blocked", "crash"), ckpt.get("reasons")
    assert SPLIT not in reason_status(ckpt)
    flag = _gate(tmp_path, release, cc, QWEN3_MOE, "--quantization", "fp8")
    assert reason_status(flag).get(SM89) == ("blocked", "crash"), flag.get("reasons")


@pytest.mark.parametrize(
    ("cc", "config", "flags"),
    [
        ("8.9", QWEN3_MOE_FP8, ["--tp", "4"]),  # fp8e4nv from sm_89
        ("9.0", QWEN3_MOE, ["--quantization", "fp8"]),
        ("8.0", LLAMA3_FP8, []),  # a dense FP8 checkpoint: weight-only Marlin below sm_89
        ("8.0", QWEN3_MOE, []),  # BF16
    ],
)
def test_fp8_moe_rule_spares_other_launches(tmp_path: Path, cc: str, config: dict[str, Any], flags: list[str]) -> None:
    """Guards (pass on the parent too)."""
    doc = _gate(tmp_path, "0.5.20", cc, config, *flags)
    assert SM89 not in reason_status(doc), doc.get("reasons")


def test_fp8_moe_rule_blocked_on_a_box_of_mixed_gpus(tmp_path: Path) -> None:
    # gpu_sm is the box's lowest GPU (irev40's value, which this branch's set of GPUs was merged into): an A100 among
    # L40S-class GPUs runs ranks of the launch (tp 4 takes ordinals 0-3, GPU 0 the 8.0 one), and those fail in Triton
    import json

    box = release_box(tmp_path, "0.5.20", "8.9")
    doc = json.loads(box.read_text())
    doc["facts"]["gpus"][0]["compute_capability"] = "8.0"
    box.write_text(json.dumps(doc))
    got = gate_tp8(box, model_dir(tmp_path, "m", QWEN3_MOE_FP8), "--tp", "4")
    assert reason_status(got).get(SM89, ("",))[0] == "blocked", got.get("reasons")
