"""The twenty-second fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twenty-second sample"; the rows
in bench/factcheck22_drawn.json), each read in the real sglang wheels (not run on a GPU):

- a9, a10: an explicit --fp8-gemm-backend the GPU does not take, with an FP8 model. Fp8LinearMethod's constructor
  picks the block FP8 GEMM as the model loads (fp8.py 0.5.17:459-470), and fp8_utils.py _dispatch_explicit_backend
  raises RuntimeError: cutlass off SM120 from 0.5.16 (0.5.17:582-588; below major 9 before), flashinfer_trtllm off
  major 10 from 0.5.10 (0.5.16:508-515; off Blackwell in 0.5.7-0.5.9), flashinfer_cutlass off Blackwell,
  flashinfer_deepgemm off Hopper. launch.json gave these values no requirement: allowed.
- a2: --nsa-prefill-backend / --nsa-decode-backend flashmla_sparse on a DSA model at 12.0 (0.5.15): the DSA backend
  calls FlashMLA's sparse kernel (dsa_backend.py 0.5.15:1970-1987, :2127-2130, :2232-2267), SM90a/SM100f only; the
  flag value mapped to no feature, so attention-dsa-flashmla-sparse (blocked at 12.0) was never asked.
- a1: --moe-a2a-backend deepep with a BF16 Qwen3-MoE (0.5.15, 10.0): get_moe_impl_class gives DeepEPMoE
  (ep_moe/layer.py 0.5.15:271-279), which hands an unquantized layer on the default runner to no runner
  (deprecate_flag False, :86-118) and raises in run_moe_core (:207-221: NotImplementedError for normal dispatch,
  AssertionError for low-latency); 0.5.5-0.5.23 alike (inferred, not run).
- a8: a w8a8_int8 checkpoint (with --quantization w8a8_int8) at 10.0 (0.5.17): W8A8Int8LinearMethod calls sgl-kernel's
  int8_scaled_mm, whose dispatch covers SM75-SM90 only (no SM100+ kernel in sgl-kernel 0.3.x / sglang-kernel 0.4.10).
- b16: audit on a major-11 box (Jetson Thor): deepgemm ok, though SGLang turns DeepGEMM on there (configurer: off only
  below sm_90 and on sm_120/121) and DeepGEMM's dispatch names majors 9 and 10: now unknown (inferred).

Model configs are written for the tests in the published checkpoints' shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, LLAMA3, cli_json, gate_tp8, model_dir, release_box

FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
LLAMA3_FP8: dict[str, Any] = {**LLAMA3, "quantization_config": FP8_BLOCK}
DSV32_FP8: dict[str, Any] = {**DEEPSEEK_V32, "quantization_config": FP8_BLOCK}
QWEN3_MOE_BF16: dict[str, Any] = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128,
    "num_experts_per_tok": 8, "moe_intermediate_size": 1536, "torch_dtype": "bfloat16",
}  # fmt: skip
DEEPEP = "refusal moe-a2a-deepep-unquantized-moe"


def _refusals(doc: dict[str, Any]) -> dict[str, str]:
    return {
        str(r["feature"]): str(r.get("status"))
        for r in doc.get("reasons") or []
        if str(r.get("feature")).startswith("refusal fp8-gemm-backend-")
    }


def _fp8_gate(
    tmp_path: Path, release: str, cc: str, *flags: str, config: dict[str, Any] = LLAMA3_FP8
) -> dict[str, Any]:
    return gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", config), *flags)


@pytest.mark.parametrize(
    ("release", "cc", "backend", "rule"),
    [
        ("0.5.17", "10.0", "cutlass", "fp8-gemm-backend-cutlass-sm120"),  # row a9
        ("0.5.16", "9.0", "flashinfer_trtllm", "fp8-gemm-backend-flashinfer-trtllm-sm100"),  # row a10
        ("0.5.23", "12.0", "flashinfer_trtllm", "fp8-gemm-backend-flashinfer-trtllm-sm100"),
        ("0.5.12", "8.0", "cutlass", "fp8-gemm-backend-cutlass-sm90-plus"),
        ("0.5.20", "9.0", "flashinfer_cutlass", "fp8-gemm-backend-flashinfer-blackwell"),
        ("0.5.18", "10.0", "flashinfer_deepgemm", "fp8-gemm-backend-flashinfer-deepgemm-sm90"),
        ("0.5.18", "10.0", "flashinfer_cutedsl", "fp8-gemm-backend-cutedsl-block-fp8"),
        ("0.5.23", "12.0", "flashinfer_cutedsl", "fp8-gemm-backend-cutedsl-block-fp8"),
    ],
)
def test_backend_the_gpu_does_not_take_is_refused(
    tmp_path: Path, release: str, cc: str, backend: str, rule: str
) -> None:
    # fails on the parent: the value carried no requirement
    doc = _fp8_gate(tmp_path, release, cc, "--fp8-gemm-backend", backend)
    assert doc["decision"] == "refuse"
    assert _refusals(doc).get(f"refusal {rule}") == "blocked", doc.get("reasons")


def test_online_fp8_is_refused_too(tmp_path: Path) -> None:
    # fails on the parent: --quantization fp8 on a BF16 checkpoint builds the same Fp8LinearMethod
    doc = _fp8_gate(tmp_path, "0.5.16", "10.0", "--quantization", "fp8", "--fp8-gemm-backend", "flashinfer_deepgemm",
                    config=LLAMA3)  # fmt: skip
    assert _refusals(doc).get("refusal fp8-gemm-backend-flashinfer-deepgemm-sm90") == "blocked"


@pytest.mark.parametrize(
    ("release", "cc", "backend", "config"),
    [
        ("0.5.17", "12.0", "cutlass", LLAMA3_FP8),
        ("0.5.12", "9.0", "cutlass", LLAMA3_FP8),
        ("0.5.16", "10.0", "flashinfer_trtllm", LLAMA3_FP8),
        ("0.5.9", "12.0", "flashinfer_trtllm", LLAMA3_FP8),
        ("0.5.18", "9.0", "flashinfer_deepgemm", LLAMA3_FP8),
        ("0.5.16", "9.0", "flashinfer_trtllm", LLAMA3),  # a BF16 model builds no FP8 linear method
    ],
)
def test_backend_the_gpu_takes_is_not_refused(
    tmp_path: Path, release: str, cc: str, backend: str, config: dict[str, Any]
) -> None:
    # guard (passes on the parent too)
    doc = _fp8_gate(tmp_path, release, cc, "--fp8-gemm-backend", backend, config=config)
    assert _refusals(doc) == {}


@pytest.mark.parametrize("flag", ["--nsa-prefill-backend", "--nsa-decode-backend"])
def test_dsa_flashmla_sparse_needs_its_kernel(tmp_path: Path, flag: str) -> None:
    # row a2; fails on the parent: the value mapped to no feature
    doc = _fp8_gate(tmp_path, "0.5.15", "12.0", flag, "flashmla_sparse", config=DSV32_FP8)
    assert doc["decision"] == "refuse"
    feats = {f["feature"]: f["status"] for f in doc["features"]}
    assert feats.get("attention-dsa-flashmla-sparse") == "blocked"


def test_dsa_flashmla_sparse_on_hopper_is_judged_ok(tmp_path: Path) -> None:
    # guard: the kernel runs on SM90 (fails on the parent only in that the feature was not asked)
    doc = _fp8_gate(tmp_path, "0.5.15", "9.0", "--nsa-prefill-backend", "flashmla_sparse", config=DSV32_FP8)
    feats = {f["feature"]: f["status"] for f in doc["features"]}
    assert feats.get("attention-dsa-flashmla-sparse") == "ok"


def _audit_deepgemm(tmp_path: Path, release: str, cc: str) -> dict[str, Any]:
    box = release_box(tmp_path, release, cc)
    doc = json.loads(box.read_text())
    for gpu in doc["facts"]["gpus"]:
        gpu["name"] = "NVIDIA Thor" if cc.startswith("11") else gpu["name"]
    doc["facts"]["system"]["machine"] = "aarch64"
    box.write_text(json.dumps(doc))
    out = cli_json(["audit", "--facts", str(box), "--format", "json"])[1]
    found: dict[str, Any] = next(f for f in out["features"] if f["id"] == "deepgemm")
    return found


@pytest.mark.parametrize("release", ["0.5.13", "0.5.23"])
def test_deepgemm_on_major_11_is_unknown(tmp_path: Path, release: str) -> None:
    # row b16; fails on the parent (ok)
    feature = _audit_deepgemm(tmp_path, release, "11.0")
    assert feature["status"] == "unknown"
    assert any(r["rule"] == "sm110-no-arch" and r["result"] == "unknown" for r in feature["reasons"])


def test_deepgemm_on_sm103_stays_ok(tmp_path: Path) -> None:
    # guard: a B300 (10.3) keeps DeepGEMM's SM100 path
    assert _audit_deepgemm(tmp_path, "0.5.13", "10.3")["status"] == "ok"


def _deepep(tmp_path: Path, release: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    doc = _fp8_gate(tmp_path, release, "10.0", "--moe-a2a-backend", "deepep", "--ep", "8", *flags, config=config)
    return {str(r["feature"]): str(r.get("status")) for r in doc.get("reasons") or []}


@pytest.mark.parametrize(
    ("release", "flags"), [("0.5.15", ()), ("0.5.9", ()), ("0.5.23", ("--moe-runner-backend", "triton"))]
)
def test_deepep_with_a_bf16_moe_is_refused(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    # row a1; fails on the parent: allowed
    assert _deepep(tmp_path, release, QWEN3_MOE_BF16, *flags).get(DEEPEP) == "blocked"


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.15", {**DEEPSEEK_R1, "n_routed_experts": 256, "quantization_config": FP8_BLOCK}, ()),
        ("0.5.15", QWEN3_MOE_BF16, ("--moe-runner-backend", "deep_gemm")),
        ("0.5.15", LLAMA3, ()),
        ("0.5.3", QWEN3_MOE_BF16, ()),
    ],
)
def test_deepep_left_alone(tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]) -> None:
    # guards: an FP8 MoE, the BF16 DeepGEMM runner, a dense model, a release not read
    assert DEEPEP not in _deepep(tmp_path, release, config, *flags)


W8A8_INT8: dict[str, Any] = {**LLAMA3, "quantization_config": {"quant_method": "w8a8_int8"}}
INT8 = "refusal w8a8-int8-gemm-sm100-plus"


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [("0.5.17", "10.0", ("--quantization", "w8a8_int8")), ("0.5.20", "12.0", ()), ("0.5.9", "10.3", ())],
)
def test_w8a8_int8_off_its_kernels_is_refused(tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]) -> None:
    # row a8; fails on the parent: allowed
    doc = _fp8_gate(tmp_path, release, cc, *flags, config=W8A8_INT8)
    assert {str(r["feature"]): r.get("status") for r in doc.get("reasons") or []}.get(INT8) == "blocked"


@pytest.mark.parametrize("cc", ["8.0", "8.9", "9.0"])
def test_w8a8_int8_on_its_kernels_is_not_refused(tmp_path: Path, cc: str) -> None:
    # guard: rows a3, a4 (8.0)
    doc = _fp8_gate(tmp_path, "0.5.17", cc, config=W8A8_INT8)
    assert INT8 not in {str(r["feature"]) for r in doc.get("reasons") or []}
