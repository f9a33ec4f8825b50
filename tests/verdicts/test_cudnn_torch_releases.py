"""cudnn-torch judged by SGLang's release: the start-up check (check_torch_2_9_1_cudnn_compatibility) exists in
sglang 0.5.6-0.5.9, and SGLANG_DISABLE_CUDNN_CHECK skips it from 0.5.6.post2 (read in the 0.5.6, 0.5.6.post1 and
0.5.6.post2 wheels: the first two have no such variable, 0.5.6.post2's check returns early on it). When a report
narrows an SGLang of unknown version to a few releases (`packages.sglang.candidates`), the check is judged with
each of them: failed when every one fails, unknown otherwise, never ok."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check


def box(sglang: dict[str, Any], cudnn: str = "9.13", env: dict[str, str] | None = None) -> dict[str, Any]:
    """A CUDA 13 box with torch 2.9.1 and the nvidia-cudnn-cu13 given: a hand-written report."""
    facts: dict[str, Any] = {
        "packages": {
            "torch": {"installed": True, "version": "2.9.1+cu130", "variant": "cu130", "cuda": "13.0"},
            "sglang": sglang,
            "nvidia-cudnn-cu13": {"installed": True, "version": cudnn},
        },
        "packages_complete": False,
    }
    if env is not None:
        facts["system"] = {"env": env}
    return facts


def cudnn_torch(manifests: Manifests, facts: dict[str, Any]) -> dict[str, Any]:
    spec = next(c for c in manifests.checks if c["id"] == "cudnn-torch")
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    return dict(evaluate_check(spec, ctx))


def failing(v: dict[str, Any]) -> list[str]:
    return [str(r.get("rule")) for r in v.get("reasons") or [] if r.get("result") == "fail"]


def test_every_candidate_release_with_the_check_fails_it(manifests: Manifests) -> None:
    v = cudnn_torch(manifests, box({"installed": True, "candidates": ["0.5.6.post2", "0.5.7"]}))
    assert v["status"] == "failed"
    assert failing(v) == ["torch291-cu13"]
    message = str(v["reasons"][0]["message"])
    assert "candidates" in message and "9.15" in message


def test_a_candidate_without_the_check_leaves_it_unknown(manifests: Manifests) -> None:
    # 0.5.5.post3 has no cuDNN check: one candidate that starts keeps the verdict unknown
    v = cudnn_torch(manifests, box({"installed": True, "candidates": ["0.5.5.post3", "0.5.7"]}))
    assert v["status"] == "unknown"


def test_without_candidates_an_unknown_release_stays_unknown(manifests: Manifests) -> None:
    assert cudnn_torch(manifests, box({"installed": True}))["status"] == "unknown"


def test_candidates_never_make_it_ok(manifests: Manifests) -> None:
    v = cudnn_torch(manifests, box({"installed": True, "candidates": ["0.5.6.post2", "0.5.7"]}, cudnn="9.16"))
    assert v["status"] != "failed"
    assert "torch291-cu13" not in failing(v)


@pytest.mark.parametrize(("release", "honoured"), [("0.5.6", False), ("0.5.6.post1", False), ("0.5.6.post2", True)])
def test_the_disable_variable_counts_from_0_5_6_post2(manifests: Manifests, release: str, honoured: bool) -> None:
    facts = box({"installed": True, "version": release}, env={"SGLANG_DISABLE_CUDNN_CHECK": "1"})
    assert ("torch291-cu13" in failing(cudnn_torch(manifests, facts))) is not honoured
