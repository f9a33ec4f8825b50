"""Findings of the adversarial review irev46 in the memory-saver feature (torch_memory_saver's preloaded hook), as a
user's facts file reaches the engine."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.types import FeatureVerdict


def pkg(version: str, **kw: Any) -> dict[str, Any]:
    return {"installed": True, "version": version, **kw}


def box(torch: dict[str, Any], cudart: Mapping[str, str | None]) -> dict[str, Any]:
    """An H200 with SGLang 0.5.18 and torch_memory_saver 0.0.10 (the release SGLang 0.5.11-0.5.23 pins at least)."""
    return {
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
        "packages": {"sglang": pkg("0.5.18"), "torch": torch, "torch-memory-saver": pkg("0.0.10")},
        "system": {"env": {}},
        "cuda_libs": {"libcudart.so.11": None, "libcudart.so.12": None, "libcudart.so.13": None, **cudart},
    }


def verdict(manifests: Manifests, facts: dict[str, Any]) -> FeatureVerdict:
    spec = next(f for f in manifests.features if f["id"] == "memory-saver")
    return evaluate_feature(spec, Context(facts=copy.deepcopy(facts), manifests=manifests, launch={}))  # type: ignore[arg-type]


def failed(v: FeatureVerdict) -> list[str]:
    return [str(r.get("rule")) for r in v["reasons"] if r.get("result") == "fail"]


@pytest.mark.parametrize(("version", "cuda"), [("2.7.1+cu118", "11.8"), ("2.14.1+cu140", "14.0")])
def test_a_torch_of_a_cuda_major_with_no_hook_build_is_blocked(manifests: Manifests, version: str, cuda: str) -> None:
    """torch_memory_saver 0.0.9.post1-0.0.10 ships its preload hook for CUDA 12 and 13 only and picks it by
    torch.version.cuda's major: another major finds no hook and configure_subprocess() raises. The feature was
    ok here (no rule applied) even with every libcudart on the loader's path: a false pass."""
    every = {f"libcudart.so.{m}": f"/usr/local/cuda/lib64/libcudart.so.{m}" for m in (11, 12, 13)}
    v = verdict(manifests, box(pkg(version, cuda=cuda, variant=version.split("+")[1]), every))
    assert v["status"] == "blocked", v
    assert failed(v) == ["hook-cuda-major-unbuilt"]


@pytest.mark.parametrize(("version", "cuda", "major"), [("2.8.0+cu128", "12.8", 12), ("2.14.1+cu130", "13.0", 13)])
def test_a_cuda_12_or_13_torch_with_its_runtime_found_is_ok(
    manifests: Manifests, version: str, cuda: str, major: int
) -> None:
    found = {f"libcudart.so.{major}": f"/usr/local/cuda/lib64/libcudart.so.{major}"}
    v = verdict(manifests, box(pkg(version, cuda=cuda, variant=version.split("+")[1]), found))
    assert v["status"] == "ok", v


def test_a_cpu_torch_stays_unknown(manifests: Manifests) -> None:
    """A torch without a CUDA version makes torch_memory_saver probe libcudart itself: not judged."""
    v = verdict(manifests, box(pkg("2.14.1+cpu", variant="cpu"), {}))
    assert v["status"] == "unknown", v
