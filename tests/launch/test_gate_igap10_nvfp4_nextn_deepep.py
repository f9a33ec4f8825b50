"""SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE with an expert parallel size below --tp-size (igap10 item 3, a false pass closed).

Read in the 0.5.7-0.5.9 wheels: on SM100 a DeepseekV3ForCausalLM modelopt_fp4 EAGLE launch with the variable on gets
the draft deep_gemm and deepep (server_args.py 0.5.9:1314-1330); DeepEP splits the experts over the TP group while
the draft's MoE layers hold the experts of --ep-size. From 0.5.10 that block runs on ROCm only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import gate_tp8, model_dir, reason_status, release_box

RULE = "refusal spec-nvfp4-nextn-deepep-ep-below-tp"
DSV3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256, "moe_intermediate_size": 2048,
    "kv_lora_rank": 512, "qk_rope_head_dim": 64, "num_nextn_predict_layers": 1,
}  # fmt: skip
LAUNCH = ("--quantization", "modelopt_fp4", "--speculative-algorithm", "EAGLE")


def _rule(tmp_path: Path, release: str, cc: str, *flags: str) -> Any:
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "ds", DSV3), *LAUNCH, *flags)
    return reason_status(doc).get(RULE)


@pytest.mark.parametrize("release", ["0.5.7", "0.5.8", "0.5.9"])
@pytest.mark.parametrize("ep", [[], ["--ep-size", "1"], ["--ep-size", "4"]])
def test_draft_deepep_with_ep_below_tp_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, release: str, ep: list[str]
) -> None:
    monkeypatch.setenv("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", "1")
    assert _rule(tmp_path, release, "10.0", *ep) == ("blocked", "crash")
    # one speculative backend given is not enough: SGLang overwrites both when either is missing
    assert _rule(tmp_path, release, "10.0", *ep, "--speculative-moe-runner-backend", "triton") == ("blocked", "crash")


def test_not_refused_where_the_split_agrees_or_the_path_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _rule(tmp_path, "0.5.9", "10.0") is None  # the variable unset: Triton, no all-to-all backend
    monkeypatch.setenv("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", "true")
    assert _rule(tmp_path, "0.5.9", "10.0", "--ep-size", "8") is None
    both = ("--speculative-moe-runner-backend", "triton", "--speculative-moe-a2a-backend", "none")
    assert _rule(tmp_path, "0.5.9", "10.0", *both) is None
    assert _rule(tmp_path, "0.5.9", "9.0") is None  # read inside is_sm100_supported()
    assert _rule(tmp_path, "0.5.10", "10.0") is None  # ROCm only from 0.5.10
