"""igap21, item 4 of the thirty-second sample's leftovers (tests/realworld/FACTCHECK.md, row b6): fp8-block-gemm was
ok on an A10 (8.6) with SGLang 0.5.20 from the compute capability alone. On a GPU of sm 80-88 SGLang runs block-FP8
weights through its FP8 Marlin GEMM (can_auto_enable_marlin_fp8), which 0.5.9-0.5.23 compile at the first forward pass
with their own load_jit (nvcc, ninja through tvm-ffi); 0.5.1-0.5.8 import sgl_kernel's prebuilt one. The feature now
reads the jit probe's facts there (rules marlin-jit-nvcc, marlin-jit-ninja): without nvcc or ninja it is blocked,
where the probe did not read them unknown. On the parent the blocked cases were ok."""

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
RULES = ("marlin-jit-nvcc", "marlin-jit-ninja")


def _verdict(sglang: str, cc: str, jit: dict[str, Any] | None) -> FeatureVerdict:
    m = load()
    base: dict[str, Any] = {"gpus": assumed_gpus(m, f"{cc}x1"), "system": {"machine": "x86_64"}}
    if jit is not None:
        base["jit"] = jit
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    ctx = Context(facts=facts, manifests=m, launch={"tp": 1})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in m.features if f["id"] == FEATURE), ctx)


def _results(v: FeatureVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"] if r.get("rule") in RULES}


BOTH = {"nvcc_found": True, "ninja_found": True, "cuda": "12.9", "toolkit": "/usr/local/cuda"}


@pytest.mark.parametrize("sglang", ["0.5.9", "0.5.20", "0.5.23"])
@pytest.mark.parametrize("missing", ["nvcc_found", "ninja_found"])
def test_marlin_without_the_jit_toolchain_is_blocked_on_ampere(sglang: str, missing: str) -> None:
    v = _verdict(sglang, "8.6", {**BOTH, missing: False})
    assert v["status"] == "blocked" and v["effect"] == "crash"
    assert "fail" in _results(v).values()


@pytest.mark.parametrize("cc", ["8.0", "8.6"])
def test_marlin_with_the_toolchain_passes(cc: str) -> None:
    assert _results(_verdict("0.5.20", cc, BOTH)) == dict.fromkeys(RULES, "pass")


def test_not_read_is_unknown_never_ok() -> None:
    v = _verdict("0.5.20", "8.6", None)
    assert v["status"] != "ok"
    assert set(_results(v).values()) == {"unknown"}


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.8", "8.6"), ("0.5.20", "8.9"), ("0.5.20", "9.0")])
def test_prebuilt_marlin_or_fp8_hardware_is_not_these_rules(sglang: str, cc: str) -> None:
    v = _verdict(sglang, cc, {**BOTH, "nvcc_found": False, "ninja_found": False})
    assert "fail" not in _results(v).values()
