"""irev83: Gemma3n states its MLP size per layer (text_config.intermediate_size a list; SGLang 0.5.9 / 0.5.23
gemma3n_causal.py builds each layer's Gemma3nTextMLP from config.intermediate_size[layer_id], split by the full TP
size), and the model-shape check took the list for a bad value: unknown, so the gate refused a Gemma3n launch that
starts. A per-layer list is now read as such for those architectures (each size by the TP size); on any other
architecture a list stays unknown. The configs are this test's own, in the published checkpoints' shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json

from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.preflight.shapes import SHAPE_CHECK, shape_results

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23, 8 GPUs)

TEXT: dict[str, Any] = {
    "model_type": "gemma3n_text", "hidden_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 2,
    "head_dim": 256, "intermediate_size": [8192] * 30, "hidden_activation": "gelu_pytorch_tanh",
}  # fmt: skip
GEMMA3N: dict[str, Any] = {
    "architectures": ["Gemma3nForConditionalGeneration"], "model_type": "gemma3n", "text_config": TEXT,
}  # fmt: skip


def _shape(config: dict[str, Any], tp: int) -> list[tuple[str, str]]:
    got = shape_results(attention_keys(config), False, tp, [tp], None, "0.5.23", "model m")
    return [(r.status, next(iter(r.observed))) for r in got]


def test_a_per_layer_intermediate_size_is_read_as_such() -> None:
    assert _shape(GEMMA3N, 2) == []  # (before: unknown, 'not a positive whole number')
    odd = {**GEMMA3N, "text_config": {**TEXT, "intermediate_size": [8192] * 29 + [8190]}}
    got = shape_results(attention_keys(odd), False, 4, [4], None, "0.5.23", "model m")
    assert [(r.status, r.observed["intermediate_size"]) for r in got] == [("fail", [8190])]
    assert any("gemma3n_causal.py" in s["title"] for s in got[0].source or [])
    causal = {**TEXT, "architectures": ["Gemma3nForCausalLM"]}
    assert _shape(causal, 8) == []  # (8 heads at 8; 2 KV heads replicated)
    three = [("fail", "num_attention_heads"), ("fail", "num_key_value_heads"), ("fail", "intermediate_size")]
    assert _shape(causal, 3) == three


def test_a_list_elsewhere_stays_unknown() -> None:
    llama = {**TEXT, "architectures": ["LlamaForCausalLM"], "model_type": "llama"}
    assert _shape(llama, 2) == [("unknown", "intermediate_size")]
    bad = {**GEMMA3N, "text_config": {**TEXT, "intermediate_size": [8192, "8192"]}}
    assert _shape(bad, 2) == [("unknown", "intermediate_size")]


def test_gate_allows_a_gemma3n_at_tp_2(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(GEMMA3N), encoding="utf-8")
    doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(tmp_path), "--dry-run", "--format", "json",
                          "--", "python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2")  # fmt: skip
    assert [c["status"] for c in doc["preflight"]["checks"] if c["check"] == SHAPE_CHECK] == []  # (before: unknown)
