"""irev83: a DeepSeek-V2 / V3 MoE builds its first first_k_dense_replace layers as a dense DeepseekV2MLP of
intermediate_size, split by the full TP size unless --moe-dense-tp-size 1 (sglang 0.5.9 / 0.5.23 wheels:
srt/models/deepseek_v2.py; Fp8LinearMethod's block check then raises 'is not divisible by weight quantization
block_n'). The model-shape check judged a dense MLP only where the model states no experts, so a DeepSeek-V3 block-FP8
checkpoint at --tp 32 (18432 / 32 = 576 per rank, 4.5 blocks of 128) was allowed. The config is this test's own, in
the published checkpoint's shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json

from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.preflight.shapes import SHAPE_CHECK, shape_results

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23, 8 GPUs)

V3: dict[str, Any] = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "intermediate_size": 18432, "moe_intermediate_size": 2048, "n_routed_experts": 256, "n_shared_experts": 1,
    "num_attention_heads": 128, "num_key_value_heads": 128, "first_k_dense_replace": 3, "kv_lora_rank": 512,
    "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                            "weight_block_size": [128, 128]},
}  # fmt: skip


def _shape(config: dict[str, Any], tp: int, dense_tp: int | None = None) -> list[tuple[str, Any]]:
    got = shape_results(attention_keys(config), True, tp, [tp], [tp], "0.5.23", "model m", dense_tp=dense_tp)
    return [(r.status, r.observed.get("intermediate_size")) for r in got]


def test_deepseek_dense_layers_share_by_the_fp8_block() -> None:
    assert _shape(V3, 32) == [("fail", 18432)]  # (576 = 4.5 x 128; before: [])
    assert _shape(V3, 32, dense_tp=1) == []  # (--moe-dense-tp-size 1: the dense layers whole on each rank)
    assert _shape(V3, 16) == [] and _shape(V3, 8) == []  # (1152 = 9 x 128, 2304 = 18 x 128)
    got = shape_results(attention_keys(V3), True, 32, [32], [32], "0.5.23", "model m")
    assert any("deepseek_v2.py" in s["title"] for s in got[0].source or []), got[0].source
    no_dense = {k: v for k, v in V3.items() if k != "first_k_dense_replace"}
    assert _shape(no_dense, 32) == []  # (the count of dense layers not stated: not judged)


def _gate(root: Path, *flags: str) -> list[str]:
    (root / "m").mkdir(exist_ok=True)
    (root / "m" / "config.json").write_text(json.dumps(V3), encoding="utf-8")
    doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(root), "--dry-run", "--format", "json", "--",
                          "python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "32", "--nnodes",
                          "4", "--node-rank", "0", "--dist-init-addr", "10.0.0.1:5000", *flags)  # fmt: skip
    return [c["status"] for c in doc["preflight"]["checks"] if c["check"] == SHAPE_CHECK]


def test_gate_reads_moe_dense_tp_size(tmp_path: Path) -> None:
    assert _gate(tmp_path) == ["fail"]  # (before: [])
    assert _gate(tmp_path, "--moe-dense-tp-size", "1") == []
    assert _gate(tmp_path, "--moe-dense-tp-size=32") == ["fail"]  # (0.5.23 takes tp_size: the full TP again)
