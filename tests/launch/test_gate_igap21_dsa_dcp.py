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

import pytest
from gate_cli import DEEPSEEK_V32, feature_rules, gate_checkpoint, reason_status


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
    assert "attention-dsa-trtllm" not in reason_status(doc)
