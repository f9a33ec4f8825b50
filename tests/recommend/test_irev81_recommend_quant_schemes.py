"""irev81: the gate's preflight reads a checkpoint's compressed-tensors / Quark schemes and its KV-cache format
(launch.model_quant_schemes, launch.model_kv_cache_fp8), which check sglang-gpu-min-cc's scheme rules read (a
block-FP8 compressed-tensors layer asks compute capability 8.9: quant-ct-fp8-block). recommend read neither, so its
line was judged by the rule for an unread scheme (8.0), and on an A100 it proposed a line for such a checkpoint that
the gate refused (sglang-gpu-min-cc blocked, crash). Both now read them with one function
(preflight.model.quant_scheme_facts). The facts are the case h200-newest with its GPUs made A100s; the configs are this
test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"
BASE: dict[str, Any] = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 4,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "vocab_size": 32000,
    "torch_dtype": "bfloat16", "intermediate_size": 14336,
}  # fmt: skip


def _ct(weights: dict[str, Any], acts: dict[str, Any] | None) -> dict[str, Any]:
    group: dict[str, Any] = {"targets": ["Linear"], "weights": weights}
    if acts is not None:
        group["input_activations"] = acts
    return {**BASE, "quantization_config": {"quant_method": "compressed-tensors", "format": "float-quantized",
                                            "config_groups": {"group_0": group}}}  # fmt: skip


FP8 = {"type": "float", "num_bits": 8, "dynamic": False, "symmetric": True}
MODELS = {
    "fp8-block": _ct({**FP8, "strategy": "block", "block_structure": [128, 128]},
                     {**FP8, "strategy": "group", "group_size": 128, "dynamic": True}),
    "fp8-channel": _ct({**FP8, "strategy": "channel"}, {**FP8, "strategy": "token", "dynamic": True}),
}  # fmt: skip


def _a100(tmp_path: Path) -> Path:
    doc = json.loads(FACTS.read_text())
    for gpu in (doc.get("facts") or doc)["gpus"]:
        gpu.update(name="NVIDIA A100-SXM4-80GB", compute_capability="8.0", memory_bytes=85899345920)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def _blocked(doc: dict[str, Any]) -> list[str]:
    return [str(r.get("rule")) for c in doc.get("reasons") or [] if c.get("feature") == "sglang-gpu-min-cc"
            and c.get("status") == "blocked" for r in c.get("reasons") or []]  # fmt: skip


@pytest.mark.parametrize("name", sorted(MODELS))
def test_recommend_and_gate_agree_on_the_checkpoints_scheme(tmp_path: Path, name: str) -> None:
    facts = _a100(tmp_path)
    model = tmp_path / name
    model.mkdir()
    (model / "config.json").write_text(json.dumps(MODELS[name]))
    doc = stackcheck_json("recommend", "--facts", str(facts), "--model-path", str(model), "--no-plan", "--format",
                          "json")  # fmt: skip
    line = [str(w) for w in doc.get("command") or []]
    if not line:
        refused = json.dumps(doc.get("refused"))
        assert name == "fp8-block" and "sglang-gpu-min-cc" in refused, refused
        return
    gate = stackcheck_json("gate", "--facts", str(facts), "--cwd", str(tmp_path), "--dry-run", "--format", "json",
                           "--", *line)  # fmt: skip
    assert _blocked(gate) == [], (line, _blocked(gate))  # (fails before: the block-FP8 line proposed, then refused)
