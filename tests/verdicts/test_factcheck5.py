"""The fifth fact check (tests/realworld/FACTCHECK.md): block-FP8 GEMM on SM12x follows the kernel SGLang runs.

From SGLang 0.5.16 `--fp8-gemm-backend auto` on a major-12 GPU is cutlass, and the cutlass GEMM there is SGLang's
own CUTLASS SM120 kernel, built with nvcc at first use (sglang/jit_kernel/fp8_blockwise_gemm.py in 0.5.16,
sglang/kernels/ops/gemm/fp8_blockwise_gemm.py from 0.5.17), not Triton and not sgl-kernel's compiled image. The
verdict stays ok; its kernel hop must name that kernel, and the nvcc it needs must fail the launch when absent."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from release_box import judge

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.kernel_path import applicable_hops

FEATURE = "fp8-block-gemm"


def _kernel_checks(manifests: Manifests, cc: str, sglang: str) -> list[str]:
    facts = release_facts(
        {"gpus": assumed_gpus(manifests, f"{cc}x1"), "topology": {"interconnect": "single-gpu", "gpu_count": 1}},
        manifests,
        sglang,
        None,
        None,
    )
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 1})  # type: ignore[arg-type]
    feature = next(f for f in manifests.features if f["id"] == FEATURE)
    return [str(h["check"]) for h in applicable_hops(feature, ctx) if h["hop"] == "kernel" and h["package"] == "sglang"]


@pytest.mark.parametrize("cc", ["12.0", "12.1"])
@pytest.mark.parametrize("sglang", ["0.5.16", "0.5.18", "0.5.23"])
def test_sm12x_cutlass_auto_names_sglangs_jit_kernel(manifests: Manifests, cc: str, sglang: str) -> None:
    checks = _kernel_checks(manifests, cc, sglang)
    assert len(checks) == 1, checks
    assert "fp8_blockwise_scaled_mm" in checks[0] and "nvcc" in checks[0]
    assert "Triton w8a8_block_fp8_matmul" not in checks[0]
    assert judge(manifests, FEATURE, cc, sglang)["status"] == "ok"


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.15"])
def test_sm12x_triton_releases_keep_the_triton_hop(manifests: Manifests, sglang: str) -> None:
    checks = _kernel_checks(manifests, "12.0", sglang)
    assert len(checks) == 1 and "Triton w8a8_block_fp8_matmul" in checks[0], checks


def test_hopper_has_no_sm12x_kernel_hop(manifests: Manifests) -> None:
    assert _kernel_checks(manifests, "9.0", "0.5.18") == []


def _jit_box(sglang: str, nvcc: bool, cuda: str = "12.9") -> dict[str, Any]:
    return {
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "gpus": [{"index": 0, "name": "NVIDIA GB10", "compute_capability": "12.1"}],
        "topology": {"interconnect": "single-gpu", "gpu_count": 1},
        "packages": {"sglang": {"installed": True, "version": sglang}},
        "system": {"env": {}},
        "jit": {
            "toolkit": "/tk",
            "chosen_by": "CUDA_HOME",
            "nvcc": "/tk/bin/nvcc" if nvcc else None,
            "nvcc_found": nvcc,
            "cuda": cuda,
            "fp8_header": True,
            "fp4_header": True,
            "triton_ptxas": {},
        },
    }


def test_the_jit_kernel_needs_an_nvcc_that_knows_the_gpu(manifests: Manifests) -> None:
    """What the JIT build needs is the jit-toolchain check's: no nvcc, or one older than the GPU, fails the launch."""
    spec = next(c for c in manifests.checks if c["id"] == "jit-toolchain")

    def failed(facts: dict[str, Any]) -> set[str]:
        v = evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=manifests, launch={}))  # type: ignore[arg-type]
        return {str(r.get("rule")) for r in v["reasons"] if r.get("result") == "fail"}

    assert "sglang-jit-nvcc" in failed(_jit_box("0.5.18", nvcc=False))
    assert "sglang-jit-arch" in failed(_jit_box("0.5.18", nvcc=True, cuda="12.8"))  # sm_121a needs CUDA 12.9
    assert not {"sglang-jit-nvcc", "sglang-jit-arch"} & failed(_jit_box("0.5.18", nvcc=True, cuda="12.9"))


# ---- aarch64 boxes are judged by the aarch64 wheel's libraries ----------------------------------------------
# Found on the way (FACTCHECK.md, fifth sample): the manylinux2014_aarch64 wheels of sglang-kernel 0.4.4 and later
# on PyPI ship no flash_ops at all (sgl_kernel/flash_attn.py then raises ImportError 'Can not import FA3 in
# sgl_kernel'), while the x86_64 wheels carry it with sm_90a. Without --deep the verdict read the x86_64 list.


def _judge_on(manifests: Manifests, feature: str, cc: str, sglang: str, machine: str) -> Any:
    from stackcheck.verdicts.engine import evaluate_feature

    base = {
        "gpus": assumed_gpus(manifests, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True},
        "system": {"machine": machine},
    }
    facts = release_facts(base, manifests, sglang, None, None)
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 8})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in manifests.features if f["id"] == feature), ctx)


def _failed(verdict: Any) -> list[str]:
    return sorted(str(r.get("rule")) for r in verdict.get("reasons") or [] if r.get("result") == "fail")


@pytest.mark.parametrize("sglang", ["0.5.14", "0.5.20", "0.5.23"])  # sglang-kernel 0.4.4, 0.4.7, 0.4.10
def test_fa3_on_an_aarch64_hopper_has_no_flash_ops(manifests: Manifests, sglang: str) -> None:
    v = _judge_on(manifests, "attention-fa3", "9.0", sglang, "aarch64")
    assert (v["status"], v["effect"]) == ("blocked", "crash"), v["reasons"]
    assert any("flash_ops" in str(r.get("message")) for r in v["reasons"] if r.get("result") == "fail")
    assert _judge_on(manifests, "attention-fa3", "9.0", sglang, "x86_64")["status"] == "ok"


@pytest.mark.parametrize("sglang", ["0.5.9", "0.5.11"])  # sgl-kernel 0.3.21, sglang-kernel 0.4.2: flash_ops sm_90a
def test_fa3_on_an_aarch64_hopper_before_the_slim_wheels(manifests: Manifests, sglang: str) -> None:
    assert _judge_on(manifests, "attention-fa3", "9.0", sglang, "aarch64")["status"] == "ok"


def test_flashmla_on_an_aarch64_hopper_reads_the_aarch64_wheel(manifests: Manifests) -> None:
    v = _judge_on(manifests, "attention-flashmla", "9.0", "0.5.20", "aarch64")
    assert v["status"] == "ok", v["reasons"]


def test_an_aarch64_box_without_the_aarch64_list_is_unknown(manifests: Manifests) -> None:
    """Where only the x86_64 wheel's libraries are recorded, an aarch64 box gets unknown, not their verdict."""
    rel = next(r for r in manifests.releases("sglang-kernel") if r.get("version") == "0.4.7")
    variant = next(v for v in rel["variants"] if v.get("variant") == rel.get("pypi_variant"))
    saved = variant.pop("libs_aarch64")
    try:
        v = _judge_on(manifests, "attention-fa3", "9.0", "0.5.20", "aarch64")
        assert v["status"] == "unknown", v["reasons"]
        assert "x86_64 wheel" in json.dumps(v["reasons"])
    finally:
        variant["libs_aarch64"] = saved
