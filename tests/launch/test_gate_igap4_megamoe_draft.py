"""The speculative draft model's MoE runner where the command gives none (igap4, item 1): SGLang 0.5.22-0.5.23
give the draft flashinfer_trtllm, not the target's flashinfer_megamoe (arg_groups/overrides.py
_speculative_moe_runner_default, layers/moe/utils.py initialize_moe_config), and --moe-a2a-backend
flashinfer_megamoe raises off the SM100 family (arg_groups/moe_hook.py handle_a2a_moe, 0.5.20-0.5.23). The gate
judged only the target's flag and allowed both on an H200. The model configs are written for the tests in the
shape of the published ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_R1, LLAMA3, gate_tp8, model_dir, reason_status, release_box

DRAFT = "refusal spec-moe-runner-megamoe-draft-trtllm"
A2A = "refusal moe-a2a-flashinfer-megamoe-sm100"
DEEPSEEK_MOE: dict[str, Any] = {**DEEPSEEK_R1, "n_routed_experts": 256}
MTP = ["--speculative-algorithm", "EAGLE", "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
       "--speculative-num-draft-tokens", "2"]  # fmt: skip


@pytest.mark.parametrize("release", ["0.5.22", "0.5.23"])
def test_megamoe_target_draft_defaults_to_trtllm_off_sm100_refused(tmp_path: Path, release: str) -> None:
    # fails on the parent: allowed (only the target's flag was judged)
    moe = model_dir(tmp_path, "dsr1", DEEPSEEK_MOE)  # MTP: the draft is the target's checkpoint
    doc = gate_tp8(release_box(tmp_path, release, "9.0"), moe, "--moe-runner-backend", "flashinfer_megamoe", *MTP)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(DRAFT) == ("blocked", "crash")


@pytest.mark.parametrize("release", ["0.5.20", "0.5.23"])
def test_megamoe_a2a_off_sm100_refused(tmp_path: Path, release: str) -> None:
    # fails on the parent: allowed; SGLang raises 'FlashInfer MegaMOE currently requires an SM100-family CUDA device'
    moe = model_dir(tmp_path, "dsr1", DEEPSEEK_MOE)
    doc = gate_tp8(release_box(tmp_path, release, "9.0"), moe, "--moe-a2a-backend", "flashinfer_megamoe")
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(A2A) == ("blocked", "crash")


def test_megamoe_draft_guards(tmp_path: Path) -> None:
    # guards (pass on the parent too): SM100, a draft runner given, no speculative decoding, a dense draft, 0.5.21
    moe = model_dir(tmp_path, "dsr1", DEEPSEEK_MOE)
    mega = ["--moe-runner-backend", "flashinfer_megamoe"]
    sm100 = gate_tp8(release_box(tmp_path, "0.5.23", "10.0"), moe, *mega, *MTP)
    assert DRAFT not in reason_status(sm100) and A2A not in reason_status(sm100)
    h200 = release_box(tmp_path, "0.5.23", "9.0")
    given = gate_tp8(h200, moe, *mega, *MTP, "--speculative-moe-runner-backend", "triton")
    assert DRAFT not in reason_status(given)
    assert DRAFT not in reason_status(gate_tp8(h200, moe, *mega))
    dense = model_dir(tmp_path, "llama3", LLAMA3)
    assert DRAFT not in reason_status(gate_tp8(h200, dense, *mega, *MTP))
    # 0.5.21 hands the draft flashinfer_megamoe itself (the target's runner)
    assert DRAFT not in reason_status(gate_tp8(release_box(tmp_path, "0.5.21", "9.0"), moe, *mega, *MTP))
