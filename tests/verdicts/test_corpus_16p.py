"""Causes found by the second fixed-rule extension of the real-world corpus (i16p, the FlashInfer / Triton / NCCL /
PyTorch trackers): FlashInfer 0.6.16-0.6.17's trtllm-gen FMHA does not compile with a CUDA 13.3 toolkit (jit-toolchain
rule flashinfer-trtllm-fmha-cuda133, signature flashinfer-trtllm-fmha-cuda133), Triton's LLVM warning for a GPU it
does not know (signature triton-llvm-unknown-processor) and SGLang's backend refusal for hybrid GDN models on
Blackwell (signature sglang-hybrid-gdn-blackwell-backend)."""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.launch.triage import triage_stream
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import Reason

RULE = "flashinfer-trtllm-fmha-cuda133"


def facts(cc: str, flashinfer: str, jit_cuda: str) -> dict[str, Any]:
    return {
        "gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}],
        "packages": {
            "flashinfer-python": {"installed": True, "version": flashinfer},
            "flashinfer-jit-cache": {"installed": False},
        },
        "jit": {"nvcc_found": True, "cuda": jit_cuda, "nvcc": "/usr/local/cuda/bin/nvcc"},
    }


def rule_reason(manifests: Manifests, doc: dict[str, Any]) -> Reason | None:
    spec = next(c for c in manifests.checks if c["id"] == "jit-toolchain")
    v = evaluate_check(spec, Context(facts=copy.deepcopy(doc), manifests=manifests, launch={}))  # type: ignore[arg-type]
    return next((r for r in v["reasons"] if r.get("rule") == RULE), None)


@pytest.mark.parametrize("flashinfer", ["0.6.16", "0.6.17"])
def test_cuda_133_fails_the_fmha_build_of_0616_0617(manifests: Manifests, flashinfer: str) -> None:
    r = rule_reason(manifests, facts("10.0", flashinfer, "13.3"))
    assert r is not None and r["result"] == "fail" and r["effect"] == "crash"
    text = str(r["message"])
    assert "13.3" in text and "trtllm-gen" in text and "0.6.18" in text
    assert r["source"]


@pytest.mark.parametrize("jit_cuda", ["13.2", "13.0", "12.9", "13.4"])
def test_other_toolkits_pass(manifests: Manifests, jit_cuda: str) -> None:
    r = rule_reason(manifests, facts("10.0", "0.6.17", jit_cuda))
    assert r is not None and r["result"] == "pass"


@pytest.mark.parametrize(
    ("cc", "flashinfer"), [("9.0", "0.6.17"), ("12.0", "0.6.17"), ("10.0", "0.6.15.post1"), ("10.0", "0.6.18")]
)
def test_not_applied_off_sm100_or_other_releases(manifests: Manifests, cc: str, flashinfer: str) -> None:
    r = rule_reason(manifests, facts(cc, flashinfer, "13.3"))
    assert r is None or r["result"] != "fail"


def root(text: str) -> tuple[str | None, str | None, str | None]:
    rc = triage_stream(io.BytesIO(text.encode()), "server.log").root_cause
    assert rc is not None and rc.signature is not None
    return rc.signature.id, rc.signature.check, rc.signature.feature


def test_cuda_133_fmha_compile_error_is_named_with_jit_toolchain() -> None:
    log = (
        "ninja: Entering directory `/root/.cache/flashinfer/0.6.17/100a/cached_ops/fmha_gen'\n"
        "FAILED: trtllm_fmha_kernel_launcher.cuda.o\n"
        '/x/flashinfer/trtllm/fmha/fmhaKernels.cuh(169): error: identifier "CU_DEVICE_ATTRIBUTE_MAX_OVERSIZED_SHARED_'
        'MEMORY_PER_BLOCK" is undefined\n'
        "ninja: build stopped: subcommand failed.\n"
        "RuntimeError: Ninja build failed.\n"
    )
    assert root(log) == ("flashinfer-trtllm-fmha-cuda133", "jit-toolchain", None)


def test_tritons_llvm_warning_names_triton_ptxas_before_the_cut_traceback() -> None:
    log = "'sm_120' is not a recognized processor for this target (ignoring processor)\n" * 3 + (
        "Traceback (most recent call last):\n"
        '  File "/v/lib/python3.10/site-packages/triton/backends/nvidia/compiler.py", line 356, in make_cubin\n'
        "    subprocess.run(ptxas_cmd, check=True, close_fds=False, stderr=flog)\n"
    )
    assert root(log) == ("triton-llvm-unknown-processor", "triton-ptxas", None)


def test_hybrid_gdn_backend_refusal_is_named_with_attention_flashinfer() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/s/sglang/srt/layers/attention/attention_registry.py", line 470, in attn_backend_wrapper\n'
        "    assert prefill_be in allowed and decode_be in allowed, (\n"
        "AssertionError: Only {'trtllm_mha', 'triton', 'fa4'} backends are supported on Blackwell GPUs for hybrid GDN "
        "models. Got prefill=flashinfer, decode=flashinfer.\n"
    )
    assert root(log) == ("sglang-hybrid-gdn-blackwell-backend", None, "attention-flashinfer")
