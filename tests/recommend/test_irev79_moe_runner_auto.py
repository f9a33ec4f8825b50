"""irev79: recommend proposes no line the gate refuses, and the gate (ireal2) judges fp8-block-gemm's TRTLLM_GEN_BMM
cubins on the MoE runner SGLang 0.5.20-0.5.23 pick themselves on SM100 (launch.moe_runner_auto: the DeepSeek family
with an FP8 checkpoint and no --moe-runner-backend takes flashinfer_trtllm). recommend never set that fact, so on a
B200 whose cubin cache lacks TRTLLM_GEN_BMM under FLASHINFER_NO_DOWNLOAD (case b200-cubins-offline) it proposed
`--model-path ds3 --tp-size 8 --attention-backend flashinfer` without a plan, and the gate refused that very line
(fp8-block-gemm blocked: moe-bmm-cubins-auto). The model's config.json is this test's own minimal file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json
from gate_cli import DEEPSEEK_R1

__all__ = ["scrubbed_environ"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "b200-cubins-offline" / "facts.json"
CONFIG: dict[str, Any] = {  # (tests/gate_cli.py's DeepSeek-R1 shape, routed experts and its FP8 block checkpoint)
    **DEEPSEEK_R1, "n_routed_experts": 16, "torch_dtype": "bfloat16",
    "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic"},
}  # fmt: skip


@pytest.fixture
def cwd(tmp_path: Path) -> Path:
    (tmp_path / "ds3").mkdir()
    (tmp_path / "ds3" / "config.json").write_text(json.dumps(CONFIG), encoding="utf-8")
    return tmp_path


def test_no_line_the_gate_refuses_for_its_own_moe_runner(cwd: Path) -> None:
    doc = stackcheck_json("recommend", "--facts", str(FACTS), "--model-path", str(cwd / "ds3"), "--tp", "8",
                          "--no-plan", "--format", "json")  # fmt: skip
    line = [str(w) for w in doc.get("command") or []]
    if not line:  # refused: it names the gate's reason
        assert any("fp8-block-gemm" in json.dumps(r) or "TRTLLM_GEN_BMM" in json.dumps(r) for r in doc["refused"])
        return
    gate = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(cwd), "--dry-run", "--format", "json", "--",
                           *line)  # fmt: skip
    blocked = [r for r in gate["reasons"] if r.get("feature") == "fp8-block-gemm" and r.get("status") != "ok"]
    assert not blocked, blocked
