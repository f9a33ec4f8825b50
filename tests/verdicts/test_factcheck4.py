"""The fourth fact check's false block (tests/realworld/FACTCHECK.md): NVFP4 on SM80-SM90.

Up to SGLang 0.5.12 the NVFP4 MoE method raises 'Current platform does not support NVFP4' off Blackwell. From 0.5.13
the default (auto) backends fall back to SGLang's Marlin JIT kernels on 8.0 <= cc < 10.0, so a Hopper or Ampere box
is no longer refused at that check. The Marlin MoE path with FP4 weights was not followed, so the verdict there is
unknown rather than ok; it must not stay 'blocked' with a message that the release no longer has."""

from __future__ import annotations

from typing import Any

import pytest
from release_box import judge, rules

from stackcheck.knowledge.loader import Manifests

RULE = "marlin-fallback-sm80-sm90"


def _verdict(manifests: Manifests, cc: str, sglang: str) -> tuple[str, Any, list[str], list[str]]:
    v = judge(manifests, "nvfp4", cc, sglang)
    return v["status"], v["effect"], rules(v), rules(v, "unknown")


@pytest.mark.parametrize("cc", ["8.0", "8.9", "9.0"])
@pytest.mark.parametrize("sglang", ["0.5.13", "0.5.20", "0.5.23"])
def test_marlin_fallback_is_not_a_block(manifests: Manifests, cc: str, sglang: str) -> None:
    status, _effect, failed, unknown = _verdict(manifests, cc, sglang)
    assert status == "unknown"
    assert "blackwell-majors" not in failed
    assert RULE in unknown


@pytest.mark.parametrize("sglang", ["0.5.9", "0.5.12"])
def test_before_the_fallback_hopper_stays_blocked(manifests: Manifests, sglang: str) -> None:
    status, effect, failed, _unknown = _verdict(manifests, "9.0", sglang)
    assert (status, effect) == ("blocked", "crash")
    assert "blackwell-majors" in failed


@pytest.mark.parametrize("sglang", ["0.5.13", "0.5.20"])
def test_blackwell_keeps_its_verdict(manifests: Manifests, sglang: str) -> None:
    status, _effect, failed, unknown = _verdict(manifests, "10.0", sglang)
    # (icubin1: the trtllm-gen MoE cubins of the default runner are not read on this box: unknown by that rule alone)
    assert status == "unknown" and unknown == ["bmm-cubins-default"] and not failed
    assert RULE not in failed + unknown
