"""The twenty-third fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twenty-third sample"; the rows in
bench/factcheck23_drawn.json), each read in the real sglang wheels (not run on a GPU):

- a6: Llama 3 8B BF16 with --load-format bitsandbytes --tp 1 (0.5.15, 8.0), no --quantization. get_model_loader hands
  the load format to BitsAndBytesModelLoader (loader.py 0.5.15:3256); its _load_weights takes pre_quant from
  config.json's quantization_config alone (:1963), so the unquantized generator quantizes every projection while
  loading under a .qweight name (:1893); with no quantization config the model's linear layers are unquantized (their
  parameters are .weight, with no pack_factor), and the loop over the quant states raises ValueError 'Parameter ...
  not found in the model.' (:2031; 'pack_factor not set' at :2049 otherwise). 0.5.1-0.5.23 alike. Beside it, a
  checkpoint quantized another way raises 'BitsAndBytes loader does not support ... quantization' (:1972).

Beside the rows (the population's allows): a compressed-tensors block FP8 checkpoint with an explicit --fp8-gemm-backend
the GPU does not take (its scheme's constructor calls the same dispatch as Fp8Config), and --fp8-gemm-backend aiter with
any FP8 model on an NVIDIA GPU (AMD only).

Model configs are written for the tests in the published checkpoints' shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, gate_tp8, model_dir, reason_status, release_box

UNQUANTIZED = "refusal bnb-loader-unquantized-checkpoint"
OTHER = "refusal bnb-loader-other-quantization"
BNB4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": False, "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_use_double_quant": True}  # fmt: skip
FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
BITSANDBYTES = {"bitsandbytes": {"installed": True, "version": "0.48.2"}}


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any] | None, *flags: str) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, cc)
    doc = json.loads(box.read_text())
    doc["facts"]["packages"].update(BITSANDBYTES)
    box.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", config) if config is not None else tmp_path / "not-downloaded"
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.15", "8.0", ["--load-format", "bitsandbytes"]),  # row a6
        ("0.5.1", "9.0", ["--load-format=bitsandbytes"]),
        ("0.5.23", "10.0", ["--load-format", "bitsandbytes", "--quantization", "fp8"]),
        ("0.5.9", "12.0", ["--load-format", "bitsandbytes", "--quantization", "awq"]),
    ],
)
def test_bitsandbytes_loader_on_an_unquantized_checkpoint_refused(
    tmp_path: Path, release: str, cc: str, flags: list[str]
) -> None:
    # fails on the parent: allowed; the loader raises 'Parameter ... not found in the model.'
    doc = _gate(tmp_path, release, cc, LLAMA3, *flags)
    assert doc["decision"] == "refuse" and reason_status(doc).get(UNQUANTIZED) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r["feature"] == UNQUANTIZED)
    text = json.dumps(reason)
    assert "not found in the model" in text and "loader.py" in text and "--load-format bitsandbytes" in text


@pytest.mark.parametrize(("release", "config"), [("0.5.20", FP8_BLOCK), ("0.5.4", AWQ)])
def test_bitsandbytes_loader_on_another_quantization_refused(
    tmp_path: Path, release: str, config: dict[str, Any]
) -> None:
    # fails on the parent: allowed; the loader raises 'BitsAndBytes loader does not support ... quantization'
    doc = _gate(tmp_path, release, "9.0", {**LLAMA3, "quantization_config": config}, "--load-format", "bitsandbytes")
    assert reason_status(doc).get(OTHER) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r["feature"] == OTHER)
    assert f"does not support {config['quant_method']} quantization" in json.dumps(reason)
    assert UNQUANTIZED not in reason_status(doc)


def test_unread_model_is_unknown(tmp_path: Path) -> None:
    # fails on the parent (allowed): whether the checkpoint carries a quantization is not known
    doc = _gate(tmp_path, "0.5.15", "9.0", None, "--load-format", "bitsandbytes")
    assert doc["decision"] != "allow" and reason_status(doc).get(UNQUANTIZED, ("",))[0] == "unknown", doc["reasons"]
    assert OTHER not in reason_status(doc)


@pytest.mark.parametrize(
    ("config", "flags"),
    [
        (LLAMA3, ["--load-format", "bitsandbytes", "--quantization", "bitsandbytes"]),
        ({**LLAMA3, "quantization_config": BNB4}, ["--load-format", "bitsandbytes"]),
        ({**LLAMA3, "quantization_config": BNB4}, []),
        (LLAMA3, []),
        ({**LLAMA3, "quantization_config": FP8_BLOCK}, []),
    ],
)
def test_other_bitsandbytes_launches_not_refused_so(tmp_path: Path, config: dict[str, Any], flags: list[str]) -> None:
    # guards (pass on the parent too): --quantization bitsandbytes with the load format, a bitsandbytes checkpoint,
    # no bitsandbytes load format
    status = reason_status(_gate(tmp_path, "0.5.15", "9.0", config, *flags))
    assert UNQUANTIZED not in status and OTHER not in status, status


# Beside the rows: the population's allows of FP8 checkpoints with an explicit --fp8-gemm-backend the GPU does not take.
# compressed-tensors' block FP8 scheme builds its GEMM through the same dispatch as Fp8Config
# (compressed_tensors_w8a8_fp8.py 0.5.20:53-55: dispatch_w8a8_block_fp8_linear() for a block_structure), which
# raises for flashinfer_trtllm off SM100, cutlass off SM120 (0.5.16 on), ... (fp8_utils.py 0.5.20 _dispatch_explicit_
# backend); and aiter raises on every CUDA build ('AITER backend requested via --fp8-gemm-backend=aiter, but AITER is
# not available': _use_aiter needs _is_hip, fp8_utils.py 0.5.16:543-549, :68).
def _w(weights: dict[str, Any], acts: dict[str, Any] | None) -> dict[str, Any]:
    group = {"targets": ["Linear"], "weights": weights, "input_activations": acts, "output_activations": None}
    return {**LLAMA3, "quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized",
                                              "config_groups": {"group_0": group}, "ignore": ["lm_head"]}}  # fmt: skip


_FP8_W = {"type": "float", "num_bits": 8, "strategy": "channel", "symmetric": True, "dynamic": False}
_FP8_A = {"type": "float", "num_bits": 8, "strategy": "token", "symmetric": True, "dynamic": True}
CT_FP8_BLOCK = _w({**_FP8_W, "strategy": "block", "block_structure": [128, 128]},
                  {**_FP8_A, "strategy": "group", "group_size": 128})  # fmt: skip
CT_FP8_CHANNEL = _w(_FP8_W, _FP8_A)
LLAMA3_FP8_TENSOR = {**LLAMA3, "quantization_config": {"quant_method": "fp8", "activation_scheme": "dynamic"}}


def _fp8_gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], backend: str) -> dict[str, Any]:
    return gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", config), "--fp8-gemm-backend", backend)


@pytest.mark.parametrize(
    ("release", "cc", "config", "backend", "rule"),
    [
        ("0.5.23", "9.0", CT_FP8_BLOCK, "flashinfer_trtllm", "fp8-gemm-backend-flashinfer-trtllm-sm100"),
        ("0.5.20", "10.0", CT_FP8_BLOCK, "cutlass", "fp8-gemm-backend-cutlass-sm120"),
        ("0.5.12", "8.9", CT_FP8_BLOCK, "cutlass", "fp8-gemm-backend-cutlass-sm90-plus"),
        ("0.5.18", "10.0", CT_FP8_BLOCK, "flashinfer_deepgemm", "fp8-gemm-backend-flashinfer-deepgemm-sm90"),
        ("0.5.9", "9.0", CT_FP8_BLOCK, "flashinfer_cutlass", "fp8-gemm-backend-flashinfer-blackwell"),
        ("0.5.21", "12.0", CT_FP8_BLOCK, "flashinfer_cutedsl", "fp8-gemm-backend-cutedsl-block-fp8"),
        ("0.5.23", "9.0", CT_FP8_BLOCK, "aiter", "fp8-gemm-backend-aiter-cuda"),
        ("0.5.7", "12.0", LLAMA3_FP8_TENSOR, "aiter", "fp8-gemm-backend-aiter-cuda"),
        ("0.5.16", "10.0", LLAMA3_FP8_TENSOR, "aiter", "fp8-gemm-backend-aiter-cuda"),
    ],
)
def test_explicit_fp8_gemm_backend_the_gpu_does_not_take_refused(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], backend: str, rule: str
) -> None:
    # fails on the parent: allowed; the FP8 linear method raises as the model loads
    doc = _fp8_gate(tmp_path, release, cc, config, backend)
    assert reason_status(doc).get(f"refusal {rule}") == ("blocked", "crash"), doc["reasons"]


@pytest.mark.parametrize(
    ("release", "cc", "config", "backend"),
    [
        ("0.5.23", "12.0", CT_FP8_BLOCK, "cutlass"),
        ("0.5.23", "9.0", CT_FP8_BLOCK, "triton"),
        ("0.5.20", "9.0", CT_FP8_BLOCK, "deep_gemm"),
        ("0.5.21", "8.9", CT_FP8_CHANNEL, "flashinfer_trtllm"),  # row a8: a channel scheme calls no block dispatch
        ("0.5.23", "9.0", CT_FP8_CHANNEL, "aiter"),
        ("0.5.23", "9.0", LLAMA3, "aiter"),
    ],
)
def test_backends_the_fp8_path_takes_or_never_asks_not_refused(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], backend: str
) -> None:
    # guards (pass on the parent too)
    status = reason_status(_fp8_gate(tmp_path, release, cc, config, backend))
    assert not [s for s in status if s.startswith("refusal fp8-gemm-backend-")], status
