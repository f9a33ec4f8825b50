"""ifc35, the thirty-fifth fact-check sample (tests/realworld/FACTCHECK.md, rows c1-c3): fp8-block-gemm was ok on an
A100 (8.0) / A10 (8.6) with SGLang 0.5.9-0.5.23 wherever the jit probe found nvcc and ninja, though the FP8 Marlin GEMM
that SGLang builds there at the first forward pass also needs
- the C++ compiler: the build's link step runs $CXX (else c++) (apache-tvm-ffi 0.1.9 tvm_ffi/cpp/extension.py:414 and
  :465 for 0.5.9-0.5.17; sglang 0.5.23 sglang/kernels/jit/utils/compile/ninja.py:102 and :116-117), and nvcc hands
  all host code to it;
- an nvcc of CUDA 12.0 or later: the CUDA flags carry -std=c++20 (sglang 0.5.12 sglang/jit_kernel/utils.py:282-287,
  0.5.23 sglang/kernels/jit/utils/arch.py:151), which nvcc accepts from CUDA 12.0.
The feature now reads jit.cxx_found (rule marlin-jit-cxx) and jit.cuda (rule marlin-jit-cxx20): without a compiler or
with CUDA 11.8 it is blocked, where the probe did not read them not ok."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict

FEATURE = "fp8-block-gemm"
RULES = ("marlin-jit-cxx", "marlin-jit-cxx20")
FOUND = {
    "nvcc_found": True,
    "ninja_found": True,
    "cxx_found": True,
    "cuda": "12.9",
    "toolkit": "/usr/local/cuda-12.9",
    "chosen_by": "/usr/local/cuda",
}


def _verdict(sglang: str, cc: str, jit: dict[str, Any]) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {"gpus": assumed_gpus(m, f"{cc}x1"), "system": {"machine": "x86_64"}, "jit": jit}
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 1})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _results(v: FeatureVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"] if r.get("rule") in RULES}


@pytest.mark.parametrize("sglang", ["0.5.9", "0.5.12", "0.5.23"])
@pytest.mark.parametrize("cc", ["8.0", "8.6"])
def test_no_cxx_compiler_is_blocked(sglang: str, cc: str) -> None:
    v = _verdict(sglang, cc, {**FOUND, "cxx_found": False})
    assert v["status"] == "blocked" and v["effect"] == "crash"
    assert _results(v)["marlin-jit-cxx"] == "fail"


@pytest.mark.parametrize("sglang", ["0.5.9", "0.5.12", "0.5.23"])
def test_nvcc_before_cuda_12_is_blocked(sglang: str) -> None:
    v = _verdict(sglang, "8.0", {**FOUND, "cuda": "11.8", "toolkit": "/usr/local/cuda-11.8"})
    assert v["status"] == "blocked" and v["effect"] == "crash"
    assert _results(v)["marlin-jit-cxx20"] == "fail"


@pytest.mark.parametrize("missing", ["cxx_found", "cuda"])
def test_not_read_is_never_ok(missing: str) -> None:
    jit = {k: v for k, v in FOUND.items() if k != missing}
    v = _verdict("0.5.12", "8.6", jit)
    assert v["status"] != "ok"
    assert "unknown" in _results(v).values()


@pytest.mark.parametrize("cc", ["8.0", "8.6"])
def test_the_whole_toolchain_passes(cc: str) -> None:
    v = _verdict("0.5.20", cc, FOUND)
    assert _results(v) == dict.fromkeys(RULES, "pass")


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.8", "8.6"), ("0.5.20", "8.9"), ("0.5.20", "9.0")])
def test_prebuilt_marlin_or_fp8_hardware_is_not_these_rules(sglang: str, cc: str) -> None:
    v = _verdict(sglang, cc, {**FOUND, "cxx_found": False, "cuda": "11.8"})
    assert "fail" not in _results(v).values()
