"""imend19: a CPU torch beside a CUDA build of sgl-kernel. sgl-kernel-cuda and kernel-runtime-libs answered unknown
with "cannot read version 'none'" (torch.cuda is `none` for a CPU build); the reason now says what it is (torch is a
CPU build, so the kernel's CUDA libraries come from nowhere torch preloads). torch-cuda-arch still blocks the box."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests, load
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_check, evaluate_feature

TORCH_CPU = {"installed": True, "version": "2.8.0+cpu", "cuda": None, "variant": "cpu"}


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    return load()


def _facts(m: Manifests, torch: dict[str, Any]) -> dict[str, Any]:
    return {
        "gpus": assumed_gpus(m, "9.0x1"),
        "system": {"machine": "x86_64"},
        "packages": {"torch": dict(torch), "sgl-kernel": {"installed": True, "version": "0.3.21"}},
    }


def _check(m: Manifests, cid: str, facts: dict[str, Any]) -> dict[str, Any]:
    spec = next(c for c in m.checks if c["id"] == cid)
    return dict(evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=m, launch={})))  # type: ignore[arg-type]


@pytest.mark.parametrize("cid", ["sgl-kernel-cuda", "kernel-runtime-libs"])
def test_a_cpu_torch_is_named_not_a_version_none(manifests: Manifests, cid: str) -> None:
    v = _check(manifests, cid, _facts(manifests, TORCH_CPU))
    assert v["status"] == "unknown", v
    text = " ".join(str(r.get("missing") or r.get("reason") or r.get("message") or "") for r in v["reasons"])
    text += " " + str(v)
    assert "cannot read version 'none'" not in text, v  # fails before
    assert "torch is a CPU build" in text, v


def test_torch_cuda_arch_still_blocks_it(manifests: Manifests) -> None:
    spec = next(f for f in manifests.features if f["id"] == "torch-cuda-arch")
    facts = _facts(manifests, TORCH_CPU)
    v = evaluate_feature(spec, Context(facts=facts, manifests=manifests, launch={}))  # type: ignore[arg-type]
    assert v["status"] == "blocked", v


def test_a_cuda_torch_is_judged_as_before(manifests: Manifests) -> None:
    torch = {"installed": True, "version": "2.8.0+cu128", "cuda": "12.8", "variant": "cu128"}
    v = _check(manifests, "sgl-kernel-cuda", _facts(manifests, torch))
    assert "torch is a CPU build" not in str(v), v
    assert v["status"] in ("ok", "degraded"), v
