"""A rule says "where `when` holds, `require` must": where `when` is not known (a version, a GPU or a file the facts
do not give), the rule is met if its requirement holds, whichever way `when` turns out, and unknown otherwise (its
requirement fails or is not known either). Before, every such rule was unknown, so a feature or check whose rules all
held on the facts given was unknown for want of a fact that could not change it; a failing requirement under an
unknown `when` stays unknown, never blocked (the rule may not apply).

And fp8-block-gemm's admission hop, which that change showed missing: SGLang's model loader refuses an FP8
checkpoint below compute capability 8.0 (Fp8Config.get_min_capability, read in the 0.4.6.post5, 0.5.2, 0.5.9 and
0.5.23 wheels), so the feature is blocked on a V100 whatever the release, not ok."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature, feature_ok


def box(cc: str, sglang: str | None) -> dict[str, Any]:
    package: dict[str, Any] = {"installed": True}
    if sglang is not None:
        package["version"] = sglang
    return {
        "gpus": [{"index": 0, "name": "a GPU", "compute_capability": cc}],
        "driver": {"version": "580.65.06", "cuda": "13.0"},
        "packages": {"sglang": package},
    }


def judge(manifests: Manifests, spec: Any, facts: dict[str, Any]) -> dict[str, Any]:
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    return dict(evaluate_feature(spec, ctx))


def made_up(require: Any) -> dict[str, Any]:
    """A feature of one rule whose `when` reads SGLang's version (not in box(cc, None))."""
    return {
        "id": "made-up",
        "title": "a feature written for this test",
        "needs": ["sglang"],
        "rules": [
            {
                "id": "r",
                "when": {"fact": "pkg.sglang.version", "op": "version", "value": "<0.5.10"},
                "require": require,
                "effect": "crash",
                "message": "not met",
                "source": [{"title": "this test"}],
            }
        ],
    }


HOLDS = {"fact": "gpu.sm", "op": "!=", "value": 120}
FAILS = {"fact": "gpu.sm", "op": "==", "value": 120}
NOT_KNOWN = {"fact": "pkg.deep-gemm.version", "op": "version", "value": ">=2"}


@pytest.mark.parametrize(
    ("require", "status", "result"),
    [(HOLDS, "ok", "pass"), (FAILS, "unknown", "unknown"), (NOT_KNOWN, "unknown", "unknown")],
    ids=["requirement holds", "requirement fails", "requirement not known"],
)
def test_when_not_known(manifests: Manifests, require: Any, status: str, result: str) -> None:
    spec = made_up(require)
    v = judge(manifests, spec, box("9.0", None))
    assert v["status"] == status
    assert [r["result"] for r in v["reasons"]] == [result]
    ctx = Context(facts=copy.deepcopy(box("9.0", None)), manifests=manifests, launch={})  # type: ignore[arg-type]
    # the planner's reading, which stops at the first rule not met, agrees
    assert (feature_ok(spec, ctx) is not None) is (status == "ok")  # type: ignore[arg-type]


def test_when_known_is_unchanged(manifests: Manifests) -> None:
    assert judge(manifests, made_up(HOLDS), box("9.0", "0.5.9"))["status"] == "ok"  # 9.0 is not 12.0: pass
    v = judge(manifests, made_up(HOLDS), box("12.0", "0.5.9"))
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    assert judge(manifests, made_up(HOLDS), box("12.0", "0.5.10"))["status"] == "ok"  # the rule does not apply
    assert judge(manifests, made_up(FAILS), box("9.0", "0.5.10"))["status"] == "ok"  # nor here


@pytest.mark.parametrize("sglang", [None, "0.4.6.post5", "0.5.9", "0.5.23"])
def test_fp8_block_gemm_below_sm80_is_blocked(manifests: Manifests, sglang: str | None) -> None:
    spec = next(f for f in manifests.features if f["id"] == "fp8-block-gemm")
    v = judge(manifests, spec, box("7.0", sglang))
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    first = v["reasons"][0]
    assert first["rule"] == "fp8-min-capability" and "sm_70" in first["message"]
    assert any("loader.py" in str(s.get("title")) for s in first["source"])
    a100 = judge(manifests, spec, box("8.0", sglang))
    assert all(r["rule"] != "fp8-min-capability" or r["result"] == "pass" for r in a100["reasons"])


@pytest.mark.parametrize("sglang", [None, "0.5.1", "0.5.9", "0.5.23"])
def test_mxfp4_moe_below_sm80_is_blocked(manifests: Manifests, sglang: str | None) -> None:
    """irev38: the same admission hop for MXFP4 (GPT-OSS): Mxfp4Config.get_min_capability is 80 in every SGLang wheel
    0.5.1-0.5.23, and the loader refuses below it. Before, the hop named no rule and a T4 read unknown."""
    spec = next(f for f in manifests.features if f["id"] == "mxfp4-moe")
    t4 = box("7.5", sglang)
    t4["packages"]["flashinfer-python"] = {"installed": True, "version": "0.6.1"}
    v = judge(manifests, spec, t4)
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    first = v["reasons"][0]
    assert first["rule"] == "mxfp4-min-capability" and "sm_75" in first["message"]
    a100 = judge(manifests, spec, {**t4, "gpus": [{"index": 0, "name": "A100", "compute_capability": "8.0"}]})
    assert all(r["rule"] != "mxfp4-min-capability" or r["result"] == "pass" for r in a100["reasons"])
