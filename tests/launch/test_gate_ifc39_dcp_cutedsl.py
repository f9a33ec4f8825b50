"""ifc39 (the thirty-ninth fact-check sample, row d1): cutedsl_mla decoding a DeepSeek-family MLA model under
--dcp-size > 1 on SGLang 0.5.17.

0.5.17's cutedsl_mla backend decodes under DCP through flashinfer.decode.trtllm_batch_decode_with_kv_cache_mla with
enable_dcp / cp_world / cp_rank / causal_seqlens_kv_global (sglang 0.5.17 layers/attention/cutedsl_mla_backend.py
:314-336), keywords that its pinned FlashInfer 0.6.15.post1 does not take (flashinfer/mla/_core.py :2598-2625, no
**kwargs): TypeError at the first decode batch. FlashInfer 0.6.17 (0.5.18's pin) and later take them. No DCP rule
named cutedsl_mla, so the launch was allowed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, gate_tp8, release_box

RULE = "refusal mla-dcp-cutedsl-flashinfer-no-dcp"


def _gate(tmp_path: Path, release: str, config: dict[str, Any], dcp: str, *flags: str) -> dict[str, Any]:
    model = tmp_path / "ckpt"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(config))
    return gate_tp8(release_box(tmp_path, release, "10.0"), model, "--dcp-size", dcp, *flags)


def _statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("feature")): str(r.get("status")) for r in doc.get("reasons") or []}


@pytest.mark.parametrize("config", [DEEPSEEK_V2_LITE, DEEPSEEK_R1], ids=["v2-lite", "r1"])
def test_cutedsl_mla_decode_under_dcp_on_0517_is_refused(tmp_path: Path, config: dict[str, Any]) -> None:
    doc = _gate(tmp_path, "0.5.17", config, "2", "--attention-backend", "cutedsl_mla")
    assert doc["decision"] == "refuse"
    assert _statuses(doc).get(RULE) == "blocked", doc["reasons"]
    message = json.dumps([r for r in doc["reasons"] if r.get("feature") == RULE])
    assert "enable_dcp" in message and "0.6.15.post1" in message, message


@pytest.mark.parametrize(
    ("release", "dcp"),
    [
        ("0.5.17", "1"),  # no DCP: the base cute-dsl decode, no DCP keywords
        ("0.5.18", "2"),  # FlashInfer 0.6.17 takes them (row d2)
        ("0.5.23", "2"),
    ],
)
def test_no_dcp_or_a_later_release_is_not_this_rule(tmp_path: Path, release: str, dcp: str) -> None:
    doc = _gate(tmp_path, release, DEEPSEEK_V2_LITE, dcp, "--attention-backend", "cutedsl_mla")
    assert RULE not in _statuses(doc), doc["reasons"]
