"""imend20 (ifc69 noticed the assertion beside FA4 on SGLang 0.5.12): a DeepSeek V2 / V3 MLA model with speculative
decoding whose target verify runs on fa4. SGLang 0.5.8-0.5.16 admit the launch (no fa4 / MLA / speculative check in
server_args), the DeepSeek attention handler sends every fa4 batch to the MHA chunked-KV path, and the FlashAttention
backend's MLA forward_extend sends a target-verify batch to its absorbed branch, which asserts FA3 ('Only FA3 support
here'). The gate allowed these launches; rule mla-fa4-speculative-verify-fa3-only refuses them. A verify side on
another backend (--speculative-attention-mode decode beside a flashinfer decode), no speculative decoding, and 0.5.17+
(the assert gone) stay allowed by it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, gate_tp8, release_box

RULE = "refusal mla-fa4-speculative-verify-fa3-only"
EAGLE = ("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
         "--speculative-num-draft-tokens", "4")  # fmt: skip


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    model = tmp_path / "ckpt"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(config))
    return gate_tp8(release_box(tmp_path, release, cc), model, *flags)


def _statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("feature")): str(r.get("status")) for r in doc.get("reasons") or []}


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.12", "9.0", DEEPSEEK_V2_LITE, ("--attention-backend", "fa4", *EAGLE)),
        ("0.5.14", "10.0", DEEPSEEK_R1, ("--attention-backend", "fa4", "--speculative-algorithm", "NEXTN")),
        (
            "0.5.16",
            "10.0",
            DEEPSEEK_R1,
            ("--prefill-attention-backend", "fa4", "--decode-attention-backend", "trtllm_mla", *EAGLE),
        ),  # verify on the prefill side (mode prefill)
        ("0.5.10", "10.0", DEEPSEEK_V2_LITE, ("--attention-backend", "fa4", *EAGLE)),
    ],
)
def test_fa4_verify_of_an_mla_model_is_refused(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    doc = _gate(tmp_path, release, cc, config, *flags)
    assert doc["decision"] == "refuse"  # fails before: no such rule
    assert _statuses(doc).get(RULE) == "blocked", doc["reasons"]
    message = json.dumps([r for r in doc["reasons"] if r.get("feature") == RULE])
    assert "Only FA3 support here" in message


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.12", DEEPSEEK_V2_LITE, ("--attention-backend", "fa4")),  # no speculative decoding
        (
            "0.5.16",
            DEEPSEEK_R1,
            (
                "--prefill-attention-backend",
                "fa4",
                "--decode-attention-backend",
                "flashinfer",
                "--speculative-attention-mode",
                "decode",
                *EAGLE,
            ),
        ),  # verify on flashinfer
        ("0.5.17", DEEPSEEK_R1, ("--attention-backend", "fa4", *EAGLE)),  # the assert gone
        ("0.5.12", DEEPSEEK_V2_LITE, ("--attention-backend", "fa3", *EAGLE)),
    ],
)
def test_a_neighbouring_launch_is_not_this_rule(
    tmp_path: Path, release: str, config: dict[str, Any], flags: tuple[str, ...]
) -> None:
    assert RULE not in _statuses(_gate(tmp_path, release, "10.0", config, *flags))


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.16", "10.0", ("--prefill-attention-backend", "fa4", "--decode-attention-backend", "flashinfer",
                            "--speculative-attention-mode", "decode", *EAGLE)),
        ("0.5.12", "9.0", ("--attention-backend", "fa3", *EAGLE)),
    ],
)  # fmt: skip
def test_the_neighbouring_launch_stays_allowed(tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]) -> None:
    assert (
        _gate(tmp_path, release, cc, DEEPSEEK_R1 if release == "0.5.16" else DEEPSEEK_V2_LITE, *flags)["decision"]
        == "allow"
    )
