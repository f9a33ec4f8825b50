"""Refusal dsa-dcp-before-dsa-dcp-path with split attention flags (issue 16, igap18): SGLang 0.5.15-0.5.21 crash a
DSA model with --dcp-size > 1 where their DSA backend runs a DCP decode phase (decode, or speculative target verify).
Read in the wheels: the DSA model override sets the dsa backend only where no attention flag is given
(is_attention_backend_not_set); two equal split flags are the backend; else SGLang's default pick, never dsa. Decode
runs the decode side, target verify the prefill side (--speculative-attention-mode decode: the decode side).

On the parent every launch without --attention-backend was refused, split flags that keep DSA off decode too."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, gate_checkpoint, reason_status

RULE = "refusal dsa-dcp-before-dsa-dcp-path"
DCP = ("--dcp-size", "2")
EAGLE = ("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "2")  # fmt: skip


def status(tmp_path: Path, release: str, *flags: str) -> tuple[str, str] | None:
    got = reason_status(gate_checkpoint(tmp_path, release, "9.0", DEEPSEEK_V32, *DCP, *flags)).get(RULE)
    return None if got is None else (got[0], str(got[1]))


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.18", ()),  # no flag: the DSA model override picks dsa
        ("0.5.20", ("--decode-attention-backend", "dsa", "--prefill-attention-backend", "flashmla")),
        ("0.5.21", ("--prefill-attention-backend", "nsa", "--decode-attention-backend", "nsa")),  # equal: the backend
        ("0.5.16", ("--attention-backend", "dsa", "--prefill-attention-backend", "fa3")),  # decode side: dsa
        ("0.5.19", ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "fa3", *EAGLE,
                    "--speculative-attention-mode", "prefill")),  # target verify on the DSA prefill side
    ],
)  # fmt: skip
def test_dsa_on_a_dcp_decode_phase_is_refused(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    assert status(tmp_path, release, *flags) == ("blocked", "crash")


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.18", ("--decode-attention-backend", "fa3")),  # decode on fa3, prefill on the default pick (not dsa)
        ("0.5.17", ("--prefill-attention-backend", "fa3")),  # decode: SGLang's default pick, not dsa
        ("0.5.22", ()),  # 0.5.22 ships the DSA DCP path
    ],
)  # fmt: skip
def test_dsa_off_every_dcp_decode_phase_is_not_this_rule(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    assert status(tmp_path, release, *flags) is None


def test_dsa_on_the_prefill_side_is_refused_whatever_side_verifies(tmp_path: Path) -> None:
    # ifc32: the DSA prefill reads the DCP-sharded KV cache by global slot (tests/launch/test_gate_factcheck32.py),
    # so which side runs target verify no longer decides (it was unknown here)
    flags = ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "fa3", *EAGLE)
    assert status(tmp_path, "0.5.21", *flags) == ("blocked", "crash")
