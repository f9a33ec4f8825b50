"""irev83: SGLang 0.5.23 spans the expert parallel size over the TP group where the all-to-all backend is deepep or
megamoe, and it picks such a backend itself in three launches the model-shape check read as EP 1: --enable-waterfill
(arg_groups/overrides.py _a2a_backend_overrides: deepep unless deepep / megamoe is given), --moe-runner-backend
megamoe (mega_moe_hook.py: an alias of --moe-a2a-backend megamoe) and a MiniMax-M3 checkpoint declaring mxfp8 with
NVFP4-packed experts (model_overrides/minimax_m3.py: megamoe on Blackwell). A routed-expert count the TP size does not
divide was allowed there; the TP size is now offered beside the given EP size. The configs are this test's own (the
Qwen1.5-MoE-A2.7B shape: 60 routed experts; the MiniMax-M3 expert count is made up)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json

from stackcheck.launch.preflight.shapes import SHAPE_CHECK

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23, 8 GPUs)

QWEN_MOE: dict[str, Any] = {
    "architectures": ["Qwen2MoeForCausalLM"], "model_type": "qwen2_moe", "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 16, "num_experts": 60, "moe_intermediate_size": 1408,
}  # fmt: skip
MINIMAX_M3: dict[str, Any] = {
    "architectures": ["MiniMaxM3SparseForCausalLM"], "model_type": "minimax_m3", "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 8, "num_local_experts": 60,
    "quantization_config": {"quant_method": "mxfp8", "moe_quant_algo": "NVFP4",
                            "moe_quant_format": "nvfp4-pack-quantized"},
}  # fmt: skip


def _experts(root: Path, config: dict[str, Any], *flags: str) -> list[tuple[str, Any]]:
    (root / "m").mkdir(exist_ok=True)
    (root / "m" / "config.json").write_text(json.dumps(config), encoding="utf-8")
    doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(root), "--dry-run", "--format", "json", "--",
                          "python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "8", *flags)  # fmt: skip
    return [
        (c["status"], c["observed"].get("sizes"))
        for c in doc["preflight"]["checks"]
        if c["check"] == SHAPE_CHECK and "experts" in c["observed"]
    ]


def test_waterfill_and_the_megamoe_runner_span_the_ep_over_tp(tmp_path: Path) -> None:
    assert _experts(tmp_path, QWEN_MOE) == []  # (EP 1: 60 experts on every rank)
    assert _experts(tmp_path, QWEN_MOE, "--enable-waterfill") == [("unknown", [8])]  # (before: [])
    assert _experts(tmp_path, QWEN_MOE, "--moe-runner-backend", "megamoe") == [("unknown", [8])]  # (before: [])


def test_a_minimax_m3_nvfp4_checkpoint_may_take_megamoe(tmp_path: Path) -> None:
    assert _experts(tmp_path, MINIMAX_M3) == [("unknown", [8])]  # (before: [])
    plain = {**MINIMAX_M3, "quantization_config": {"quant_method": "fp8"}}
    assert _experts(tmp_path, plain) == []
