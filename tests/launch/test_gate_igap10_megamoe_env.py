"""SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE on SGLang 0.5.15-0.5.17 (igap10 item 1, an over-refusal lifted).

Read in the 0.5.15/0.5.16/0.5.17 wheels: arg_groups/overrides.py _a2a_backend_overrides sets megamoe and _a2a_ep_size
sets ep_size to tp_size; server_args.py _handle_a2a_moe runs both inside __post_init__ and materialize_declarations
writes them to the fields at its end, before check_server_args (two-batch overlap) and before the model is built (the
block-FP8 split). 0.5.15's FlashInfer asserts read the resolved value; 0.5.16-0.5.17's read the raw field (a given
--moe-a2a-backend is judged as given there).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, reason_status, release_box

SPLIT = "refusal fp8-block-moe-tp-split"
TBO = "refusal two-batch-overlap-a2a-none-dp-attention"
BLOCK_FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
QWEN3_MOE_FP8: dict[str, Any] = {**QWEN3_MOE, "quantization_config": BLOCK_FP8}


@pytest.mark.parametrize("release", ["0.5.15", "0.5.16", "0.5.17"])
def test_block_fp8_split_lifted_by_the_megamoe_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    box = release_box(tmp_path, release, "9.0")
    model = model_dir(tmp_path, "fp8", QWEN3_MOE_FP8)
    assert reason_status(gate_tp8(box, model)).get(SPLIT) == ("blocked", "crash")
    monkeypatch.setenv("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "1")
    doc = gate_tp8(box, model)
    assert SPLIT not in reason_status(doc), doc.get("reasons")  # megamoe spans the TP group: ep = tp


@pytest.mark.parametrize("release", ["0.5.15", "0.5.16", "0.5.17"])
def test_two_batch_overlap_sees_megamoe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str) -> None:
    box = release_box(tmp_path, release, "10.0")
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    monkeypatch.setenv("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "true")
    assert TBO not in reason_status(gate_tp8(box, moe, "--enable-two-batch-overlap"))


def test_0_5_15_replaces_a_given_flashinfer_backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    box = release_box(tmp_path, "0.5.15", "10.0")
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    flags = ("--moe-a2a-backend", "flashinfer", "--enable-dp-attention", "--dp", "8")
    assert reason_status(gate_tp8(box, moe, *flags)).get("refusal moe-a2a-flashinfer-moe-runner") == (
        "blocked",
        "crash",
    )
    monkeypatch.setenv("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "1")
    got = reason_status(gate_tp8(box, moe, *flags))
    assert not [k for k in got if k.startswith("refusal moe-a2a-flashinfer")], got


@pytest.mark.parametrize("release", ["0.5.16", "0.5.17"])
def test_a_given_backend_judged_as_given_on_0_5_16_0_5_17(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str
) -> None:
    box = release_box(tmp_path, release, "10.0")
    moe = model_dir(tmp_path, "qwen3moe", QWEN3_MOE)
    monkeypatch.setenv("SGLANG_OPT_USE_DEEPGEMM_MEGA_MOE", "1")
    doc = gate_tp8(box, moe, "--moe-a2a-backend", "flashinfer", "--enable-dp-attention", "--dp", "8")
    assert reason_status(doc).get("refusal moe-a2a-flashinfer-moe-runner") == ("blocked", "crash")
