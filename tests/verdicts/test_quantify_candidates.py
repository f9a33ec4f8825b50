"""A report that narrows a package of unknown version to a few releases (`packages.NAME.candidates`, e.g. a
traceback's line numbers read against every release): a `quantify` sweep judges exactly those releases.

The candidates only narrow what is swept: a verdict is failed when every candidate fails it, stays unknown
when one does not, and is never made ok."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check, package_candidates


def sm120_box(flashinfer: dict[str, Any], jit_cuda: str = "12.8") -> dict[str, Any]:
    """One RTX 5090, a hand-written report: FlashInfer installed, the JIT toolkit's CUDA as given."""
    return {
        "gpus": [{"index": 0, "name": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0"}],
        "packages": {"flashinfer-python": flashinfer},
        "packages_complete": False,
        "jit": {"toolkit": "/usr/local/cuda", "nvcc": "/usr/local/cuda/bin/nvcc", "nvcc_found": True, "cuda": jit_cuda},
    }


def jit_toolchain(manifests: Manifests, facts: dict[str, Any]) -> dict[str, Any]:
    spec = next(c for c in manifests.checks if c["id"] == "jit-toolchain")
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    return dict(evaluate_check(spec, ctx))


def failing(v: dict[str, Any]) -> list[str]:
    return [str(r.get("rule")) for r in v.get("reasons") or [] if r.get("result") == "fail"]


def test_every_candidate_failing_fails_the_check(manifests: Manifests) -> None:
    facts = sm120_box({"installed": True, "candidates": ["0.6.11.post1", "0.6.11.post2", "0.6.12"]})
    v = jit_toolchain(manifests, facts)
    assert v["status"] == "failed"
    assert failing(v) == ["flashinfer-sm12x-cuda129"]
    reason = v["reasons"][0]
    assert "candidates" in str(reason["message"]) and "0.6.11.post1-0.6.12" in str(reason["required"])
    assert "12.9" in str(reason["message"])


def test_one_candidate_that_passes_leaves_it_unknown(manifests: Manifests) -> None:
    # 0.6.6 predates the SM 12.x CUDA 12.9 requirement: the sweep does not conclude
    facts = sm120_box({"installed": True, "candidates": ["0.6.6", "0.6.12"]})
    assert jit_toolchain(manifests, facts)["status"] == "unknown"


def test_without_candidates_or_a_day_every_release_counts(manifests: Manifests) -> None:
    assert jit_toolchain(manifests, sm120_box({"installed": True}))["status"] == "unknown"


def test_candidates_never_make_it_ok(manifests: Manifests) -> None:
    # a CUDA 12.9 toolkit passes the rule with every candidate; what the version decides stays unknown
    facts = sm120_box({"installed": True, "candidates": ["0.6.11.post1", "0.6.12"]}, jit_cuda="12.9")
    assert jit_toolchain(manifests, facts)["status"] != "failed"
    assert (
        jit_toolchain(manifests, facts)["status"]
        == jit_toolchain(manifests, sm120_box({"installed": True}, "12.9"))["status"]
    )


def test_a_stated_version_wins_over_candidates(manifests: Manifests) -> None:
    facts = sm120_box({"installed": True, "version": "0.6.6", "candidates": ["0.6.12"]})
    assert "flashinfer-sm12x-cuda129" not in failing(jit_toolchain(manifests, facts))


@pytest.mark.parametrize("candidates", [[], ["not a version"], ["0.6.12", 7], "0.6.12", None])
def test_unreadable_candidates_are_ignored(manifests: Manifests, candidates: Any) -> None:
    entry = {"installed": True, "candidates": candidates}
    ctx = Context(facts=sm120_box(entry), manifests=manifests, launch={})  # type: ignore[arg-type]
    assert package_candidates(ctx, "flashinfer-python") is None
    assert jit_toolchain(manifests, sm120_box(entry))["status"] == "unknown"


def test_candidates_are_deduplicated_in_order(manifests: Manifests) -> None:
    entry = {"installed": True, "candidates": ["0.6.12", "0.6.11.post1", "0.6.12"]}
    ctx = Context(facts=sm120_box(entry), manifests=manifests, launch={})  # type: ignore[arg-type]
    assert package_candidates(ctx, "flashinfer-python") == ["0.6.12", "0.6.11.post1"]


def no_toolkit_box(kernel: dict[str, Any], torch_cuda: str | None = "12.8") -> dict[str, Any]:
    """A hand-written report of a box with a CUDA build of torch and no CUDA toolkit (sglang-11333's shape)."""
    torch: dict[str, Any] = {"installed": True, "version": "2.8.0"}
    if torch_cuda is not None:
        torch.update({"cuda": torch_cuda, "variant": "cu" + torch_cuda.replace(".", "")})
    return {"cuda_toolkits": [], "packages": {"sgl-kernel": kernel, "torch": torch}, "collected_at": "2025-10-08"}


def runtime_libs(manifests: Manifests, facts: dict[str, Any]) -> dict[str, Any]:
    spec = next(c for c in manifests.checks if c["id"] == "kernel-runtime-libs")
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    return dict(evaluate_check(spec, ctx))


def test_kernel_runtime_libs_sweeps_sgl_kernel_candidates(manifests: Manifests) -> None:
    # every release with the raise at __init__.py line 217 uploaded by the day raises without a toolkit
    facts = no_toolkit_box({"installed": True, "candidates": ["0.3.13", "0.3.14", "0.3.14.post1", "0.3.15"]})
    v = runtime_libs(manifests, facts)
    assert v["status"] == "failed" and failing(v) == ["cuda-lib-dir"]
    assert "0.3.13-0.3.15" in str(v["reasons"][0]["required"]) and "toolkit" in str(v["reasons"][0]["message"])


def test_kernel_runtime_libs_unknown_version_is_not_skipped(manifests: Manifests) -> None:
    # an installed sgl-kernel of unknown version is judged unknown by cuda-lib-dir, never skipped as absent;
    # the day alone leaves releases without the raise (0.3.10 and older), so the sweep does not conclude
    v = runtime_libs(manifests, no_toolkit_box({"installed": True}))
    assert v["status"] == "unknown"
    assert any(r.get("rule") == "cuda-lib-dir" and r.get("result") == "unknown" for r in v["reasons"])


def test_kernel_runtime_libs_candidate_without_the_raise_leaves_it_unknown(manifests: Manifests) -> None:
    v = runtime_libs(manifests, no_toolkit_box({"installed": True, "candidates": ["0.3.10", "0.3.14.post1"]}))
    assert v["status"] == "unknown"


def test_kernel_runtime_libs_candidates_need_torch_cuda_build(manifests: Manifests) -> None:
    # the raise sits under `if torch.version.cuda is not None`: a torch of unknown CUDA build stays unknown
    facts = no_toolkit_box({"installed": True, "candidates": ["0.3.13", "0.3.15"]}, torch_cuda=None)
    assert runtime_libs(manifests, facts)["status"] == "unknown"


def test_kernel_runtime_libs_not_installed_sgl_kernel_is_not_judged(manifests: Manifests) -> None:
    facts = no_toolkit_box({"installed": False})
    facts["packages"]["sglang-kernel"] = {"installed": True, "version": "0.4.4"}
    assert "cuda-lib-dir" not in [str(r.get("rule")) for r in runtime_libs(manifests, facts).get("reasons") or []]
