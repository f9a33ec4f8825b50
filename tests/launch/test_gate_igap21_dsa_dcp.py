"""igap21, item 1 of the thirty-second sample's leftovers (tests/realworld/FACTCHECK.md): a DSA model with
`--dcp-size` > 1 on SGLang 0.5.22-0.5.23.

SGLang's DSA DCP model override fills each DSA side not given with trtllm (0.5.23
arg_groups/model_overrides/deepseek_v2.py:18-34, collected at model_hook.py:233 before the split resolution at :343-344
keeps a side already set), and under DCP the DeepSeek MLA forward asks the DSA backend for an LSE at every decode,
target verify and extend (forward_mla.py:121-131, :753-768), which only the trtllm side returns
(dsa_backend.py:3938-4003, dsa/dsa_dcp.py dcp_trtllm_sparse_attention: trtllm_batch_decode_with_kv_cache_mla with
backend='trtllm-gen'). FlashInfer 0.7.1/0.7.2's TllmGenFmhaRunner accepts only SM 100/103/107 (fmhaRunner.cuh:37),
so the gate now requires attention-dsa-trtllm for these launches (blocked on an H100). On the parent the launches
without a DSA side flag were allowed on an H100 and the first test fails."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, LLAMA3, feature_rules, gate_checkpoint, reason_status


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


@pytest.mark.parametrize("release", ["0.5.22", "0.5.23"])
@pytest.mark.parametrize("flags", [(), ("--kv-cache-dtype", "bfloat16"), ("--dsa-decode-backend", "trtllm")])
def test_dsa_dcp_on_hopper_needs_the_trtllm_gen_kernel(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    doc = gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_V32, "--dcp-size", "2", *flags)
    assert reason_status(doc).get("attention-dsa-trtllm") == ("blocked", "crash")
    assert feature_rules(doc, "attention-dsa-trtllm").get("trtllm-gen-sparse-mla") == "fail"


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.22", "9.0", ("--dcp-size", "1")),  # no DCP: SGLang's Hopper defaults (flashmla_sparse / fa3)
        ("0.5.23", "9.0", ()),
        ("0.5.21", "9.0", ("--dcp-size", "2", "--attention-backend", "flashmla")),  # the DSA backend is not used
        ("0.5.23", "9.0", ("--dcp-size", "2", "--attention-backend", "flashinfer")),
    ],
)
def test_no_dcp_or_no_dsa_backend_does_not_need_it(
    tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, DEEPSEEK_V32, *flags)
    assert "attention-dsa-trtllm" not in reason_status(doc)


def test_the_sm100_family_runs_it(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "10.0", DEEPSEEK_V32, "--dcp-size", "2")
    # (icubin1: the release box does not say whether FlashInfer's trtllm-gen cubins are there: unknown by that rule
    # alone, which a probed box answers)
    got = [f for f in doc["reasons"] if f["feature"] == "attention-dsa-trtllm"]
    assert all(f["status"] == "unknown" for f in got)
    assert {r.get("rule") for f in got for r in f["reasons"]} <= {"fmha-cubins"}


# ---- item 2: the other MLA decode backends under DCP ----------------------------------------------------------------
# TRTLLMMLABackend.forward_decode returns the output alone before 0.5.19 (its DCP decode ships there) and
# CutlassMLABackend.forward_decode always does (0.5.15-0.5.19; gone in 0.5.20); the DeepSeek MLA forward unpacks
# 'attn_output, lse' from either under DCP (refusal mla-dcp-decode-no-lse). On the parent these were allowed.
NO_LSE = "refusal mla-dcp-decode-no-lse"


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.15", ("--attention-backend", "trtllm_mla")),
        ("0.5.18", ("--decode-attention-backend", "trtllm_mla")),
        ("0.5.17", ("--attention-backend", "cutlass_mla")),
        ("0.5.19", ("--attention-backend", "cutlass_mla")),
    ],
)
def test_a_decode_backend_without_an_lse_under_dcp_is_refused(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, "10.0", DEEPSEEK_R1, "--dcp-size", "2", *flags)
    assert reason_status(doc).get(NO_LSE) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.19", DEEPSEEK_R1, ("--dcp-size", "2", "--attention-backend", "trtllm_mla")),  # its DCP decode
        ("0.5.23", DEEPSEEK_R1, ("--dcp-size", "2", "--attention-backend", "trtllm_mla")),
        ("0.5.17", DEEPSEEK_R1, ("--attention-backend", "trtllm_mla")),  # no DCP
        ("0.5.17", DEEPSEEK_R1, ("--dcp-size", "2", "--attention-backend", "flashinfer")),  # returns the LSE
        ("0.5.17", LLAMA3, ("--dcp-size", "2", "--attention-backend", "trtllm_mla")),  # not the DeepSeek forward
    ],
)
def test_backends_with_an_lse_no_dcp_or_other_models_are_not_this_rule(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, "10.0", config, *flags)
    assert NO_LSE not in reason_status(doc)


# ---- beside item 1: a DSA side given another kernel under DCP on 0.5.22-0.5.23 ---------------------------------------
# Only the trtllm path of the DSA backend returns (out, lse) under DCP (dsa_backend.py 0.5.23:3988-4003); the MLA
# forward unpacks one at every decode, target verify and DSA extend (forward_mla.py:121-131). On the parent these were
# allowed on an H100 (the FlashMLA features pass there).
SIDE = "refusal dsa-dcp-side-no-lse"


@pytest.mark.parametrize("release", ["0.5.22", "0.5.23"])
@pytest.mark.parametrize(
    "flags",
    [
        ("--dsa-prefill-backend", "flashmla_sparse", "--dsa-decode-backend", "flashmla_kv"),
        ("--dsa-decode-backend", "fa3"),  # the prefill side trtllm, the decode side fa3
        ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "flashmla",
         "--dsa-prefill-backend", "flashmla_sparse"),  # the DSA backend prefills only
    ],
)  # fmt: skip
def test_a_dsa_side_other_than_trtllm_under_dcp_is_refused(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_V32, "--dcp-size", "2", *flags)
    assert reason_status(doc).get(SIDE) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", ("--dcp-size", "2")),  # both trtllm (attention-dsa-trtllm judges the GPU)
        ("0.5.23", ("--dcp-size", "2", "--dsa-decode-backend", "trtllm", "--dsa-prefill-backend", "trtllm")),
        ("0.5.23", ("--dsa-decode-backend", "flashmla_kv")),  # no DCP
        ("0.5.23", ("--dcp-size", "2", "--prefill-attention-backend", "dsa", "--decode-attention-backend", "flashmla",
                    "--dsa-decode-backend", "fa3")),  # the decode kernel unused (no speculative decoding)
        ("0.5.21", ("--dcp-size", "2", "--dsa-decode-backend", "flashmla_kv")),  # dsa-dcp-before-dsa-dcp-path's
    ],
)  # fmt: skip
def test_trtllm_sides_no_dcp_or_unused_kernels_are_not_this_rule(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    doc = gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_V32, *flags)
    assert SIDE not in reason_status(doc)
