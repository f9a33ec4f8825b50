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

import pytest
from gate_cli import DEEPSEEK_V32, gate_checkpoint, reason_status

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
