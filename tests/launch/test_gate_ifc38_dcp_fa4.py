"""ifc38 (thirty-eighth fact-check sample, rows d2 and d4): fa4 decoding a DeepSeek-family MLA model under
--dcp-size > 1.

SGLang's fa4 is its FlashAttention backend (attention_registry.py: FlashAttentionBackend(runner, fa_impl_ver=4)),
whose forward_decode returns the output alone and has no decode context parallel code. On SM100 / SM110 from 0.5.17
the DeepSeek MLA forward takes fa4 for an absorbed-core backend (models/deepseek_common/utils.py) and unpacks an
(output, LSE) pair from it under DCP (forward_mla.py 0.5.22 :744); elsewhere, and on every GPU in 0.5.15-0.5.16, its
decode takes the MHA chunked-KV path (attention_backend_handler.py handle_attention_fa4), which merges nothing across
the DCP ranks' KV shards. The DCP rules named fa3, trtllm_mla, cutlass_mla, flashmla and triton only, so these
launches were allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, gate_tp8, release_box

RULE = "refusal mla-dcp-fa4-decode-no-lse"


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], dcp: str, *flags: str) -> dict[str, Any]:
    model = tmp_path / "ckpt"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(config))
    return gate_tp8(release_box(tmp_path, release, cc), model, "--dcp-size", dcp, *flags)


def _statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("feature")): str(r.get("status")) for r in doc.get("reasons") or []}


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.22", "12.0", DEEPSEEK_V2_LITE, ("--decode-attention-backend", "fa4")),  # row d2
        ("0.5.18", "12.0", DEEPSEEK_V2_LITE, ("--attention-backend", "fa4")),  # row d4
        ("0.5.20", "10.0", DEEPSEEK_R1, ("--attention-backend", "fa4")),  # absorbed: the unpack
        ("0.5.15", "10.0", DEEPSEEK_R1, ("--prefill-attention-backend", "triton", "--decode-attention-backend", "fa4")),
        ("0.5.23", "9.0", DEEPSEEK_R1, ("--decode-attention-backend", "fa4")),
    ],
)
def test_fa4_decode_under_dcp_is_refused(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    doc = _gate(tmp_path, release, cc, config, "2", *flags)
    assert doc["decision"] == "refuse"
    assert _statuses(doc).get(RULE) == "blocked", doc["reasons"]
    message = json.dumps([r for r in doc["reasons"] if r.get("feature") == RULE])
    assert "FlashAttentionBackend(fa_impl_ver=4)" in message and "--attention-backend flashinfer" in message


@pytest.mark.parametrize(
    ("release", "cc", "dcp", "flags"),
    [
        ("0.5.22", "12.0", "1", ("--decode-attention-backend", "fa4")),  # no DCP
        ("0.5.22", "10.0", "2", ("--prefill-attention-backend", "fa4", "--decode-attention-backend", "flashinfer")),
        ("0.5.19", "9.0", "2", ("--decode-attention-backend", "flashinfer")),  # row d1's launch
    ],
)
def test_fa4_prefill_only_or_no_dcp_is_not_this_rule(
    tmp_path: Path, release: str, cc: str, dcp: str, flags: tuple[str, ...]
) -> None:
    assert RULE not in _statuses(_gate(tmp_path, release, cc, DEEPSEEK_R1, dcp, *flags))


# Beside the rows: cutedsl_mla under --dcp-size on 0.5.15-0.5.16, where it is TRTLLMMLABackend(runner,
# backend="cute-dsl") (attention_registry.py 0.5.15 :79-85), absorbed, whose forward_decode has no DCP code (the
# trtllm_mla case of mla-dcp-decode-no-lse); from 0.5.17 CuteDslMLABackend returns (output, LSE) under DCP.
OTHERS = "refusal mla-dcp-decode-no-lse"


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.15", ("--attention-backend", "cutedsl_mla")),
        ("0.5.16", ("--decode-attention-backend", "cutedsl_mla")),
    ],
)
def test_cutedsl_mla_before_its_own_class_under_dcp_is_refused(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    doc = _gate(tmp_path, release, "10.0", DEEPSEEK_R1, "2", *flags)
    assert doc["decision"] == "refuse" and _statuses(doc).get(OTHERS) == "blocked", doc["reasons"]
    assert "cutedsl_mla forward_decode returns the output alone" in json.dumps(doc["reasons"])


@pytest.mark.parametrize("release", ["0.5.17", "0.5.18", "0.5.23"])
def test_cutedsl_mla_with_its_own_dcp_decode_is_not_refused_for_it(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, "10.0", DEEPSEEK_R1, "2", "--attention-backend", "cutedsl_mla")
    assert _statuses(doc).get(OTHERS) in (None, "ok"), doc["reasons"]
