"""irev77: FlashInfer's trtllm-gen FP8 block GEMM loads the TRTLLM_GEN_GEMM cubins; the gate never reached the rule
that judges them. `--quantization fp8` needed fp8-block-gemm with its admission rule only, so `FLASHINFER_NO_DOWNLOAD=1
... --quantization fp8 --fp8-gemm-backend flashinfer_trtllm` (or `auto` with SGLANG_ENABLE_JIT_DEEPGEMM=0: sglang 0.5.7+
fp8_utils.py _dispatch_auto_backend picks FlashInfer's groupwise GEMM on Blackwell, backend "trtllm" on major 10) on
B200 facts whose cubin cache lacks the family was judged ok, while the first GEMM raises 'Artifact not found
locally'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json

CASES = Path(__file__).resolve().parents[1] / "cases"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--attention-backend", "triton",
          "--quantization", "fp8"]  # fmt: skip


def gemm_rules(case: str, *words: str, prefix: tuple[str, ...] = ()) -> dict[str, str]:
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--format", "json", "--", *prefix,
                          *LAUNCH, *words)  # fmt: skip
    feature: dict[str, Any] = next(f for f in doc["reasons"] if f["feature"] == "fp8-block-gemm") if any(
        f["feature"] == "fp8-block-gemm" for f in doc["reasons"]) else {"reasons": []}  # fmt: skip
    return {str(r.get("rule")): str(r["result"]) for r in feature["reasons"]}


@pytest.mark.parametrize(
    ("words", "prefix", "rule"),
    [
        (("--fp8-gemm-backend", "flashinfer_trtllm"), (), "gemm-cubins"),
        ((), ("env", "SGLANG_ENABLE_JIT_DEEPGEMM=0"), "gemm-cubins-auto"),
        (("--fp8-gemm-backend", "auto"), ("env", "SGLANG_ENABLE_JIT_DEEPGEMM=false"), "gemm-cubins-auto"),
    ],
)
def test_offline_box_fails_the_gemm_cubins(words: tuple[str, ...], prefix: tuple[str, ...], rule: str) -> None:
    assert gemm_rules("b200-cubins-offline", *words, prefix=prefix).get(rule) == "fail"


def test_deepgemm_on_does_not_read_them() -> None:
    # auto with DeepGEMM on (the default) runs DeepGEMM, not FlashInfer's GEMM: the rule does not apply
    assert "gemm-cubins-auto" not in gemm_rules("b200-cubins-offline")
    assert "gemm-cubins-auto" not in gemm_rules("b200-cubins-offline", "--fp8-gemm-backend", "triton",
                                                prefix=("env", "SGLANG_ENABLE_JIT_DEEPGEMM=0"))  # fmt: skip


def moe_rules(feature: str, quantization: str, runner: str) -> dict[str, str]:
    doc = stackcheck_json("gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--format", "json",
                          "--", "python", "-m", "sglang.launch_server", "--model-path", "m", "--attention-backend",
                          "triton", "--quantization", quantization, "--moe-runner-backend", runner)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == feature]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


def test_mxfp4_with_the_flashinfer_runner_reads_the_bmm_cubins() -> None:
    # sglang 0.5.9 layers/quantization/mxfp4.py:303 (use_flashinfer with the flashinfer_mxfp4 runner) and :792
    # (trtllm_fp4_block_scale_moe): the gate needed mxfp4-moe's admission rule only, so bmm-cubins was never read
    assert moe_rules("mxfp4-moe", "mxfp4", "flashinfer_mxfp4").get("bmm-cubins") == "fail"


def test_fp8_moe_with_the_trtllm_runner_reads_the_bmm_cubins() -> None:
    # sglang 0.5.9 layers/moe/moe_runner/flashinfer_trtllm.py:260 / :305 (trtllm_fp8_block_scale_moe /
    # trtllm_fp8_per_tensor_scale_moe): FlashInfer's trtllm-gen fused MoE, the TRTLLM_GEN_BMM cubins
    assert moe_rules("fp8-block-gemm", "fp8", "flashinfer_trtllm").get("moe-bmm-cubins") == "fail"
    assert "moe-bmm-cubins" not in moe_rules("fp8-block-gemm", "fp8", "triton")
