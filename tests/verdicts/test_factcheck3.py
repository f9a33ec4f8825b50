"""The two false passes of the third fact check (tests/realworld/FACTCHECK.md): a kernel library that carries code
for the GPU, and a host check in front of that code that refuses it.

- attention-flashmla off Hopper: SGLang's FlashMLA backend decodes dense MLA models through FlashMLA's dense decode,
  whose host check admits SM 9.0 only ('Dense decode MLA is only supported on SM90a architecture' in sglang-kernel
  0.4.x's flashmla_ops and sgl-flash-mla 1.0.0). The SM100 code those libraries carry is sparse decode and prefill,
  so their sm_100a / sm_100f / sm_107a targets do not make the backend run on a Blackwell or Rubin GPU.
- attention-cutlass-mla on B300: sgl-kernel's cutlass_mla_decode checks sm_version == 100 before it launches the
  sm_103a code its common_ops carries."""

from __future__ import annotations

from typing import Any

import pytest
from release_box import judge, rules

from stackcheck.knowledge.loader import Manifests

RULE = "flashmla-dense-decode-sm90a"


def _verdict(
    manifests: Manifests, cc: str, sglang: str, launch: dict[str, Any], feature: str = "attention-flashmla"
) -> tuple[str, Any, list[str]]:
    v = judge(manifests, feature, cc, sglang, launch)
    return v["status"], v["effect"], rules(v)


@pytest.mark.parametrize("cc", ["10.0", "10.3", "10.7"])
@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.20", "0.5.23"])
def test_flashmla_decode_is_hopper_only(manifests: Manifests, cc: str, sglang: str) -> None:
    status, effect, failed = _verdict(manifests, cc, sglang, {"attention_backend": "flashmla"})
    assert (status, effect) == ("blocked", "crash")
    assert RULE in failed


@pytest.mark.parametrize("sglang", ["0.5.9", "0.5.11", "0.5.20", "0.5.23"])
def test_hopper_keeps_flashmla(manifests: Manifests, sglang: str) -> None:
    assert _verdict(manifests, "9.0", sglang, {"attention_backend": "flashmla"})[0] == "ok"


def test_prefill_only_flashmla_is_not_refused_for_the_decode(manifests: Manifests) -> None:
    launch = {"prefill_attention_backend": "flashmla", "decode_attention_backend": "trtllm_mla"}
    assert RULE not in _verdict(manifests, "10.0", "0.5.20", launch)[2]
    assert RULE in _verdict(manifests, "10.0", "0.5.20", {**launch, "decode_attention_backend": "flashmla"})[2]


CUTLASS = "cutlass-mla-decode-sm100-only"


@pytest.mark.parametrize("sglang", ["0.5.11", "0.5.14", "0.5.19"])
def test_cutlass_mla_decode_is_sm100_only(manifests: Manifests, sglang: str) -> None:
    launch = {"attention_backend": "cutlass_mla"}
    status, effect, failed = _verdict(manifests, "10.3", sglang, launch, "attention-cutlass-mla")
    assert (status, effect, failed) == ("blocked", "crash", [CUTLASS])
    assert _verdict(manifests, "10.0", sglang, launch, "attention-cutlass-mla")[0] == "ok"
