"""A toolkit step's hypothetical jit section keeps the compiler facts the toolkit does not change (igap23;
plan.hypothetical._compiler_after_toolkit). Before, the step dropped them: a box with no C++ compiler on the PATH,
planned only a CUDA toolkit, read jit-toolchain's sglang-jit-cxx unknown after the step, so the plan named no
failing check although every SGLang 0.5.9+ launch still fails at its first JIT build (reproduced on h200-newest with
a CUDA 11.8 toolkit and jit.cxx_found false)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import make_plan
from stackcheck.plan.hypothetical import apply_choice
from stackcheck.plan.solver import Choice
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

ROOT = Path(__file__).resolve().parent.parent.parent
OLD = "/usr/local/cuda-11.8"


def after_toolkit_step(jit: dict[str, Any]) -> dict[str, Any]:
    facts = {"jit": {"toolkit": OLD, "nvcc_found": True, **jit}, "cuda_toolkits": []}
    choice = Choice("toolkit", "cuda", "13.0", release={"version": "13.0"})
    ctx = SimpleNamespace(manifests=load_manifests([], env={}))  # CUDA 13.0's gcc limit: components.json's
    return dict(apply_choice(cast("Any", facts), choice, cast("Context", ctx))["jit"])


def test_the_cxx_compiler_on_the_path_is_kept() -> None:
    assert after_toolkit_step({"cxx_found": False})["cxx_found"] is False
    jit = after_toolkit_step({"cxx_found": True, "cxx": "/usr/bin/c++"})
    assert jit["cxx_found"] is True and jit["cxx"] == "/usr/bin/c++"
    jit = after_toolkit_step({"cxx_found": None, "cxx_reason": "CXX='ccache g++'", "cxx_quoted_found": False})
    assert jit["cxx_found"] is None and jit["cxx_quoted_found"] is False


def test_nvccs_host_compiler_on_the_path_is_kept_without_the_old_toolkits_limit() -> None:
    jit = after_toolkit_step({"nvcc_host_found": True, "nvcc_host": "/usr/bin/gcc", "nvcc_host_gnu_major": 14,
                              "nvcc_host_gnu_max": 11, "nvcc_host_gnu_supported": False})  # fmt: skip
    assert jit["nvcc_host_found"] is True and jit["nvcc_host_gnu_major"] == 14
    # the old toolkit's limit (11) is not kept: CUDA 13.0's own (15: components.json's host_gnu_max, igap24 / irev57)
    assert jit["nvcc_host_gnu_max"] == 15 and jit["nvcc_host_gnu_supported"] is True
    none = after_toolkit_step({"nvcc_host_found": False, "nvcc_host_reason": "/usr/bin/gcc has no C++ compiler"})
    assert none["nvcc_host_found"] is False and none["nvcc_host_reason"].startswith("/usr/bin/gcc")


@pytest.mark.parametrize(
    "jit",
    [{"nvcc_host_found": True, "nvcc_host": f"{OLD}/bin/gcc"},
     {"nvcc_host_reason": f"{OLD}/bin/nvcc.profile names a host compiler: not read"}],
)  # fmt: skip
def test_what_was_the_old_toolkits_is_not_known_after_the_step(jit: dict[str, Any]) -> None:
    out = after_toolkit_step(jit)
    assert "nvcc_host_found" not in out and "nvcc_host_reason" not in out


def test_headers_and_the_nccl_so_path() -> None:
    jit = after_toolkit_step({"cxx_cuda_runtime_h_found": False, "cxx_nccl_h_found": False,
                              "nccl_so_path": "/opt/nccl/libnccl.so.2", "nccl_so_path_found": False})  # fmt: skip
    assert jit["cxx_cuda_runtime_h_found"] is True  # the new toolkit's include directory
    assert jit["cxx_nccl_h_found"] is False and jit["nccl_so_path_found"] is False
    assert "cxx_nccl_h_found" not in after_toolkit_step({"cxx_nccl_h_found": True})


def test_a_plan_of_only_a_toolkit_step_still_names_the_missing_compiler(tmp_path: Path) -> None:
    doc = json.loads((ROOT / "tests" / "cases" / "h200-newest" / "facts.json").read_text())
    doc["facts"]["jit"].update(cxx_found=False, cuda="11.8")
    for toolkit in doc["facts"]["cuda_toolkits"]:
        toolkit["version"] = "11.8"
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    ctx = Context(facts=load_facts_file(str(path)), manifests=load_manifests([], env={}))
    features, _checks = evaluate_all(ctx)
    plan = make_plan(ctx, features).to_json()
    assert [s["component"] for s in plan["steps"]] == ["cuda-toolkit"], plan["steps"]
    failing = {c["check"]: c for c in plan.get("still_failing_checks") or []}
    assert "jit-toolchain" in failing, failing
    # FlashInfer's own JIT (no flashinfer-jit-cache on this box) links with the same c++ (iccjit's rule)
    assert [r["rule"] for r in failing["jit-toolchain"]["failures"]] == ["flashinfer-jit-cxx", "sglang-jit-cxx"]


def test_flashinfers_host_compiler_is_kept_without_the_old_toolkits_limit() -> None:
    """FlashInfer's JIT host compiler (iccjit: `-ccbin $CC`, else nvcc's default) is the environment's: a toolkit step
    that dropped flashinfer_host made the flashinfer-jit-*-host rules not apply after it (a plan promising a launch
    whose CC names no compiler)."""
    jit = after_toolkit_step({"flashinfer_host": "cc", "flashinfer_allow_unsupported": False, "cc_host_found": False,
                              "cc_host_reason": "CC='/opt/gcc/bin/gcc': no such program"})  # fmt: skip
    assert jit["flashinfer_host"] == "cc" and jit["flashinfer_allow_unsupported"] is False
    assert jit["cc_host_found"] is False and jit["cc_host_reason"].startswith("CC=")
    gcc15 = {"cc_host_gnu_major": 15, "cc_host_gnu_max": 14, "cc_host_gnu_supported": False}
    jit = after_toolkit_step({"flashinfer_host": "cc", "cc_host_found": True, "cc_host": "/usr/bin/gcc-15", **gcc15})
    assert jit["cc_host"] == "/usr/bin/gcc-15" and jit["cc_host_gnu_major"] == 15
    # the old toolkit's limit (14) is not kept: CUDA 13.0's own (15: components.json's host_gnu_max, igap24 / irev57)
    assert jit["cc_host_gnu_max"] == 15 and jit["cc_host_gnu_supported"] is True
    assert after_toolkit_step({"flashinfer_host": "nvcc-default"})["flashinfer_host"] == "nvcc-default"


@pytest.mark.parametrize(
    "jit",
    [{"flashinfer_host": "cc", "cc_host_found": True, "cc_host": f"{OLD}/bin/gcc"},
     {"flashinfer_host": "cc", "cc_host_found": None, "cc_host_reason": f"{OLD}/bin/nvcc is not the compiler itself "
      "(a wrapper script?): its host compiler is not read"}],
)  # fmt: skip
def test_a_cc_of_the_old_toolkit_is_not_known_after_the_step(jit: dict[str, Any]) -> None:
    out = after_toolkit_step(jit)
    assert "cc_host_found" not in out and "cc_host" not in out and out["flashinfer_host"] == "cc"
