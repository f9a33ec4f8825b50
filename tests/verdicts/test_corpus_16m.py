"""Causes found by the fixed-rule extension of the real-world corpus (i16m): SGLang's refusal of GPUs below
sm75 (stack check sglang-gpu-min-cc, signature sglang-gpu-below-sm75) and sgl-kernel's norm kernels without
code for the GPU when the log shows no frame inside sgl_kernel (signature sgl-kernel-norm-no-kernel-image)."""

from __future__ import annotations

import copy
import io
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.launch.triage import triage_stream
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict


def facts(*ccs: str, sglang: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "gpus": [{"index": i, "name": "GPU", "compute_capability": cc} for i, cc in enumerate(ccs)],
        "packages": {"sglang": sglang if sglang is not None else {"installed": True}},
    }


def min_cc(manifests: Manifests, doc: dict[str, Any]) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == "sglang-gpu-min-cc")
    return evaluate_check(spec, Context(facts=copy.deepcopy(doc), manifests=manifests, launch={}))  # type: ignore[arg-type]


@pytest.mark.parametrize("cc", ["7.0", "7.2", "6.1", "3.7"])
def test_sglang_refuses_a_gpu_below_sm75(manifests: Manifests, cc: str) -> None:
    v = min_cc(manifests, facts(cc))
    assert v["status"] == "failed"
    fail = next(r for r in v["reasons"] if r.get("result") == "fail")
    assert fail["effect"] == "crash" and fail["observed"] == cc
    assert f"cc {cc} GPU" in str(fail["message"]) and "SGLang only supports sm75 and above" in str(fail["message"])
    assert fail["source"]


@pytest.mark.parametrize("cc", ["7.5", "8.0", "8.6", "9.0", "10.0", "12.0", "12.1"])
def test_sm75_and_newer_pass(manifests: Manifests, cc: str) -> None:
    assert min_cc(manifests, facts(cc))["status"] == "ok"


def test_one_old_gpu_among_new_ones_fails_and_no_sglang_is_not_applicable(manifests: Manifests) -> None:
    assert min_cc(manifests, facts("8.0", "7.0"))["status"] == "failed"
    assert min_cc(manifests, facts("7.0", sglang={"installed": False}))["status"] != "failed"


def root(text: str) -> tuple[str | None, str | None]:
    rc = triage_stream(io.BytesIO(text.encode()), "server.log").root_cause
    assert rc is not None
    return (rc.signature.id, rc.signature.check) if rc.signature else (None, None)


def test_sglang_sm75_refusal_is_named_with_its_check() -> None:
    log = "[2025-09-04 10:00:01] Load weight begin.\nRuntimeError: SGLang only supports sm75 and above.\n"
    assert root(log) == ("sglang-gpu-below-sm75", "sglang-gpu-min-cc")


@pytest.mark.parametrize("op", ["RMSNorm", "GemmaRMSNorm", "FusedAddRMSNorm", "GemmaFusedAddRMSNorm"])
def test_norm_without_kernel_image_names_sgl_kernel_without_its_frames(op: str) -> None:
    log = f"RuntimeError: {op} failed with error code no kernel image is available for execution on the device\n"
    assert root(log) == ("sgl-kernel-norm-no-kernel-image", "kernel-arch")


def test_other_no_kernel_image_errors_keep_their_signatures() -> None:
    # a frame inside sgl_kernel keeps the frame-based signature; an error elsewhere stays the generic one
    framed = (
        "Traceback (most recent call last):\n"
        '  File "/venv/lib/python3.12/site-packages/sgl_kernel/elementwise.py", line 51, in rmsnorm\n'
        "    torch.ops.sgl_kernel.rmsnorm.default(out, input, weight, eps, enable_pdl)\n"
        "RuntimeError: RMSNorm failed with error code no kernel image is available for execution on the device\n"
    )
    assert root(framed)[0] == "sgl-kernel-no-kernel-image"
    assert root("RuntimeError: CUDA error: no kernel image is available for execution on the device\n")[0] == (
        "no-kernel-image"
    )
