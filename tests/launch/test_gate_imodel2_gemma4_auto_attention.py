"""imodel2: without an attention flag SGLang 0.5.18-0.5.23's Gemma 4 override picks trtllm_mha on SM100 and triton
everywhere else (model_overrides/gemma4.py), not the generic default (fa3 on Hopper). The gate read fa3 for a
Gemma 4 checkpoint on an H200 box, a backend Gemma 4's own assertion refuses. The config is this test's own minimal
file in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path

from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
TEXT = {"model_type": "gemma4_text", "hidden_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 4,
        "head_dim": 256, "num_hidden_layers": 4, "vocab_size": 1024, "sliding_window": 512}  # fmt: skip


def test_gemma4_on_hopper_runs_triton_attention(tmp_path: Path) -> None:
    (tmp_path / "g4").mkdir()
    cfg = {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": TEXT}
    (tmp_path / "g4" / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    doc = stackcheck_json("gate", "--facts", str(CASES / "h200-newest" / "facts.json"), "--cwd", str(tmp_path),
                          "--dry-run", "--format", "json", "--", "python", "-m", "sglang.launch_server",
                          "--model-path", "g4")  # fmt: skip
    needed = {f["feature"] for f in doc["features"] if f.get("kind") == "default"}
    assert "attention-triton" in needed and "attention-fa3" not in needed
