"""The thirty-second fact-check sample (tests/realworld/FACTCHECK.md), row g5: DeepSeek V3.2 with `--dcp-size 2
--prefill-attention-backend dsa --decode-attention-backend flashmla` on an H100 with SGLang 0.5.15 was allowed.

SGLang 0.5.15-0.5.21 store the MLA KV cache under decode context parallel sharded: set_mla_kv_buffer's kernel keeps
the slots `loc % dcp == rank` at `loc // dcp` (0.5.15 mem_cache/triton_ops/mla_buffer.py:42-46, 0.5.16-0.5.21
kernels/ops/kvcache/mla_buffer.py), the DSA pool included. The DSA backend's extend writes through it and then reads
the cache through page tables of global slots (0.5.15 layers/attention/dsa_backend.py:1857-1862, :1882, :1916-1926)
and has no DCP code at all before 0.5.22 (dsa/dsa_dcp.py's localize_dcp_page_table): every prefill whose KV length
passes the index top-k (the MHA one-shot stands aside, :2776-2797) attends to other tokens' rows or past the rank's
pool. So the DSA backend on the prefill side (extend, and target verify) is refused like the decode side was (ifc29,
igap18). On the parent the prefill-side launches here were allowed (or unknown) and these tests fail."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, LLAMA3, gate_checkpoint, reason_status

RULE = "refusal dsa-dcp-before-dsa-dcp-path"
DCP = ("--dcp-size", "2")
EAGLE = ("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "2")  # fmt: skip


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def status(tmp_path: Path, release: str, cc: str, *flags: str) -> tuple[str, str] | None:
    got = reason_status(gate_checkpoint(tmp_path, release, cc, DEEPSEEK_V32, *DCP, *flags)).get(RULE)
    return None if got is None else (got[0], str(got[1]))


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.15", "9.0", ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "flashmla")),  # row g5
        ("0.5.18", "10.0", ("--prefill-attention-backend", "nsa", "--decode-attention-backend", "flashmla")),
        ("0.5.21", "9.0", ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "fa3")),
        ("0.5.20", "9.0", ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "fa3", *EAGLE,
                           "--speculative-attention-mode", "decode")),  # verify on fa3, the prefill still on dsa
        ("0.5.19", "9.0", ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "fa3", *EAGLE)),
    ],
)  # fmt: skip
def test_dsa_on_the_prefill_side_with_dcp_is_refused(
    tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]
) -> None:
    assert status(tmp_path, release, cc, *flags) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.15", ("--decode-attention-backend", "flashmla")),  # prefill on SGLang's default pick, never dsa
        ("0.5.21", ("--attention-backend", "fa3")),
        ("0.5.22", ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "flashmla")),  # dsa_dcp.py
    ],
)
def test_dsa_on_neither_side_or_a_release_with_the_path_is_not_this_rule(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    assert status(tmp_path, release, "9.0", *flags) is None


# Beside the sample: the DeepSeek MLA forward unpacks an LSE from any decode backend of its absorb list under DCP
# (forward_mla.py 0.5.15:729-744, 0.5.23:753-768), and FlashAttention-3 (fa3: on that list, SGLang's MLA default on
# Hopper) returns the output alone, with no DCP code in flashattention_backend.py 0.5.15-0.5.23.
FA3_RULE = "refusal mla-dcp-fa3-decode-no-lse"


def fa3_status(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> tuple[str, str] | None:
    got = reason_status(gate_checkpoint(tmp_path, release, cc, config, *flags)).get(FA3_RULE)
    return None if got is None else (got[0], str(got[1]))


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.15", DEEPSEEK_R1, ("--dcp-size", "2", "--attention-backend", "fa3")),
        ("0.5.23", DEEPSEEK_R1, ("--dcp-size", "4", "--decode-attention-backend", "fa3")),
        ("0.5.18", DEEPSEEK_V32, ("--dcp-size", "2", "--decode-attention-backend", "fa3")),  # population (g)'s launch
    ],
)
def test_fa3_decoding_a_deepseek_model_with_dcp_is_refused(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    assert fa3_status(tmp_path, release, "9.0", config, *flags) == ("blocked", "crash")


def test_sglangs_own_pick_on_hopper_is_unknown(tmp_path: Path) -> None:
    assert fa3_status(tmp_path, "0.5.20", "9.0", DEEPSEEK_R1, "--dcp-size", "2") == ("unknown", "None")


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.20", "9.0", DEEPSEEK_R1, ("--dcp-size", "2", "--attention-backend", "flashinfer")),
        ("0.5.20", "9.0", DEEPSEEK_R1, ("--attention-backend", "fa3")),  # no DCP
        ("0.5.22", "9.0", DEEPSEEK_V32, ("--dcp-size", "2")),  # the DSA model override: dsa decodes
        ("0.5.20", "10.0", DEEPSEEK_R1, ("--dcp-size", "2")),  # SGLang picks fa3 on Hopper only
        ("0.5.20", "9.0", LLAMA3, ("--dcp-size", "2", "--attention-backend", "fa3")),  # not the DeepSeek forward
    ],
)
def test_other_decode_backends_boxes_and_models_are_not_this_rule(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    assert fa3_status(tmp_path, release, cc, config, *flags) is None
