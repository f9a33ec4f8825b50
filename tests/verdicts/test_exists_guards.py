"""Rule conditions that ask whether a fact exists: a fact that is known to be absent (no toolkit on the box,
no kernel package) makes the rule not apply, a fact that is not known (not probed, not read, a release the
manifests do not record) makes it unknown, never ok or skipped.

`exists` is false for every Missing fact, so a `when` guarded by it drops the rule whether the fact is absent or
merely not known; the rules here guard on what says "known absent" instead (`toolkit.found`, the needs of the
check), and leave a fact that is not known to the requirement, which is unknown then."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests, load
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    return load([])


def check(manifests: Manifests, cid: str, facts: dict[str, Any]) -> dict[str, Any]:
    spec = next(c for c in manifests.checks if c["id"] == cid)
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    return dict(evaluate_check(spec, ctx))


def results(v: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v.get("reasons") or []}


# ---- sgl-kernel-cuda, sglang-kernel-cuda: the kernel package's CUDA build -------------------------------------

TORCH_CU128 = {"installed": True, "version": "2.8.0+cu128"}


def kernel_box(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    return {"packages": {name: entry, "torch": dict(TORCH_CU128)}}


@pytest.mark.parametrize(
    ("name", "entry"),
    [
        ("sgl-kernel", {"installed": True}),  # a hand-written report: installed, version not given
        ("sgl-kernel", {"installed": True, "version": "0.3.14"}),  # a release the manifests do not record
        ("sglang-kernel", {"installed": True}),
        ("sglang-kernel", {"installed": True, "version": "0.4.2.post1"}),
    ],
)
def test_kernel_cuda_build_not_known_is_unknown(manifests: Manifests, name: str, entry: dict[str, Any]) -> None:
    # before: the rules' `pkg.NAME.cuda exists` dropped every rule and the check said skipped
    v = check(manifests, f"{name}-cuda", kernel_box(name, entry))
    assert v["status"] == "unknown"
    assert results(v) == {"cuda12-family": "unknown"}


@pytest.mark.parametrize(
    ("name", "entry", "status"),
    [
        ("sgl-kernel", {"installed": True, "version": "0.3.14+cu130"}, "warning"),  # its local tag says CUDA 13
        ("sgl-kernel", {"installed": True, "version": "0.3.21"}, "ok"),  # PyPI build: cu129
        ("sgl-kernel", {"installed": True, "version": "0.3.21", "cuda": "13.0"}, "warning"),
        ("sglang-kernel", {"installed": True, "version": "0.4.4"}, "warning"),  # PyPI build: cu130
        ("sglang-kernel", {"installed": True, "version": "0.4.4+cu129"}, "ok"),
    ],
)
def test_kernel_cuda_build_known_is_judged(manifests: Manifests, name: str, entry: dict[str, Any], status: str) -> None:
    assert check(manifests, f"{name}-cuda", kernel_box(name, entry))["status"] == status


@pytest.mark.parametrize("name", ["sgl-kernel", "sglang-kernel"])
def test_kernel_cuda_not_installed_is_skipped(manifests: Manifests, name: str) -> None:
    v = check(manifests, f"{name}-cuda", kernel_box(name, {"installed": False}))
    assert v["status"] == "skipped"
