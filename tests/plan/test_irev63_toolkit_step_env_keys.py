"""irev63: a toolkit step's hypothetical jit section dropped the PYTORCH_NVCC keys and the host compilers' clang keys.

Both are the environment's (PYTORCH_NVCC, CC / NVCC_CCBIN naming a clang), which installing a CUDA toolkit elsewhere
and pointing CUDA_HOME at it does not change; dropped, the rules that read them (flashinfer-jit-pytorch-nvcc*,
the clang host-compiler rules) were skipped after the step, so a planned stack read them as passing while the
variable still named the program it named. Now the variable's keys and the clang major are kept; whether PYTORCH_NVCC
is the new toolkit's nvcc, and the new toolkit's clang limit (in no manifest), are null: unknown."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan.hypothetical import apply_choice
from stackcheck.plan.solver import Choice
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

OLD = "/usr/local/cuda-12.8"
MANIFESTS = load_manifests([], env={})


def _after(jit: dict[str, Any], packages: dict[str, Any] | None = None) -> dict[str, Any]:
    facts = {"jit": {"toolkit": OLD, "nvcc_found": True, **jit}, "cuda_toolkits": [], "packages": packages or {}}
    choice = Choice("toolkit", "cuda", "13.0", release={"version": "13.0"})
    ctx = SimpleNamespace(manifests=MANIFESTS)
    return dict(apply_choice(cast("Any", facts), choice, cast("Context", ctx)))


def _rules(facts: dict[str, Any], check_id: str) -> dict[str, str]:
    check = next(c for c in MANIFESTS.checks if c["id"] == check_id)
    verdict = evaluate_check(check, Context(facts=cast("Any", facts), manifests=MANIFESTS))
    return {str(r.get("rule")): str(r.get("result")) for r in verdict["reasons"]}


FLASHINFER_03 = {
    "flashinfer-python": {"installed": True, "version": "0.3.1"},
    "flashinfer-jit-cache": {"installed": False},
}


def test_pytorch_nvcc_naming_no_program_still_fails_after_the_step() -> None:
    jit = {"pytorch_nvcc": "/opt/old/nvcc", "pytorch_nvcc_found": False}
    after = _after(jit, FLASHINFER_03)
    assert after["jit"]["pytorch_nvcc_found"] is False and after["jit"]["pytorch_nvcc"] == "/opt/old/nvcc"
    assert _rules(after, "jit-toolchain").get("flashinfer-jit-pytorch-nvcc") == "fail"


def test_whether_pytorch_nvcc_is_the_new_toolkits_is_not_known() -> None:
    jit = {"pytorch_nvcc": f"{OLD}/bin/nvcc", "pytorch_nvcc_found": True, "pytorch_nvcc_same": True}
    after = _after(jit, FLASHINFER_03)
    assert after["jit"]["pytorch_nvcc_same"] is None
    assert _rules(after, "jit-toolchain").get("flashinfer-jit-pytorch-nvcc-toolkit") == "unknown"


def test_a_cc_clang_keeps_its_major_and_its_support_is_not_known() -> None:
    jit = {"cc_host_found": True, "cc_host": "/usr/bin/clang-20", "cc_host_clang_major": 20, "cc_host_clang_max": 19,
           "cc_host_clang_supported": False, "flashinfer_host": "cc"}  # fmt: skip
    out = _after(jit)["jit"]
    assert out["cc_host_clang_major"] == 20 and out["cc_host_clang_supported"] is None, out
    assert "cc_host_clang_max" not in out and "not read" in out["cc_host_clang_supported_reason"]


def test_an_nvcc_host_clang_major_is_kept() -> None:
    jit = {"nvcc_host_found": True, "nvcc_host": "/usr/bin/clang-9", "nvcc_host_clang_major": 9}
    out = _after(jit)["jit"]
    assert out["nvcc_host_clang_major"] == 9 and "nvcc_host_clang_supported" not in out, out


def test_nothing_is_made_up_where_the_old_jit_had_none() -> None:
    out = _after({})["jit"]
    assert not [k for k in out if k.startswith("pytorch_nvcc") or "_clang_" in k], out
