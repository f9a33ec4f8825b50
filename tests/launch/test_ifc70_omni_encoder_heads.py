"""ifc70 (factcheck70 row d3): a Qwen3-Omni checkpoint at --tp 8 was allowed, its text heads (32 query, 4 KV) and
128 experts judged (irobust15) but not the encoders SGLang builds beside them. The thinker always builds its audio
tower, each layer's VisionAttention splitting config.encoder_attention_heads by the attention TP size with
dist_utils.divide (an assert); the published checkpoint's audio encoder has 20 heads, and a thinker_config without an
audio_config gets 20 from the config class (SGLang's configs/qwen3_omni.py, transformers 5.19.0), so --tp 8 fails
while the model is built (sglang 0.5.9 / 0.5.23 wheels: srt/models/qwen3_omni_moe.py, srt/layers/attention/vision.py;
the heads are padded on CPU only). The configs are this test's own, in the shape of Qwen/Qwen3-Omni-30B-A3B-Instruct's
config.json (audio 20 heads, vision 16)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import stackcheck_json

from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.preflight.shapes import SHAPE_CHECK, shape_results

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"  # (SGLang 0.5.23, 8 GPUs)

TEXT = {"model_type": "qwen3_omni_moe_text", "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 4,
        "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768}  # fmt: skip


def _omni(**thinker: Any) -> dict[str, Any]:
    return {"architectures": ["Qwen3OmniMoeForConditionalGeneration"], "model_type": "qwen3_omni_moe",
            "thinker_config": {"model_type": "qwen3_omni_moe_thinker", "text_config": TEXT, **thinker}}  # fmt: skip


AUDIO = {"d_model": 1280, "encoder_attention_heads": 20, "encoder_ffn_dim": 5120, "encoder_layers": 32}
VISION = {"depth": 27, "hidden_size": 1152, "num_heads": 16, "out_hidden_size": 2048}


def _shape(config: dict[str, Any], tp: int, attn_tps: list[int] | None = None) -> list[tuple[str, str]]:
    got = shape_results(attention_keys(config), False, tp, attn_tps or [tp], None, "0.5.23", "model m")
    return [(r.status, next(iter(r.observed))) for r in got]


AUDIO_KEY = "thinker_config.audio_config.encoder_attention_heads"
VISION_KEY = "thinker_config.vision_config.num_heads"


def test_the_audio_encoders_20_heads_fail_at_tp_8() -> None:
    assert _shape(_omni(audio_config=AUDIO, vision_config=VISION), 8) == [("fail", AUDIO_KEY)]  # (before: [])
    assert _shape(_omni(), 8) == [("fail", AUDIO_KEY)]  # (no audio_config: the class default 20; before: [])
    for tp in (1, 2, 4):
        assert _shape(_omni(audio_config=AUDIO, vision_config=VISION), tp) == []


def test_the_message_says_where_the_count_came_from_and_the_sources() -> None:
    got = shape_results(attention_keys(_omni()), False, 8, [8], None, "0.5.23", "model m")
    assert "the config class's default" in got[0].message and "20 heads" in got[0].message
    titles = " ".join(s["title"] for s in got[0].source or [])
    assert "qwen3_omni_moe.py" in titles and "vision.py" in titles
    stated = shape_results(attention_keys(_omni(audio_config=AUDIO)), False, 8, [8], None, "0.5.23", "model m")
    assert "(thinker_config.audio_config.encoder_attention_heads, stated)" in stated[0].message


def test_stated_encoder_heads_are_judged_as_stated() -> None:
    assert _shape(_omni(audio_config={**AUDIO, "encoder_attention_heads": 16}), 8) == []
    audio16 = {**AUDIO, "encoder_attention_heads": 16}
    assert _shape(_omni(audio_config=audio16, vision_config={**VISION, "num_heads": 12}), 8) == [("fail", VISION_KEY)]
    # DP attention: the encoders split by the attention TP size (8 / 2 = 4 divides 20)
    assert _shape(_omni(), 8, [4]) == [("unknown", AUDIO_KEY)]  # (at 8 or 4: fails at one)
    # another architecture's audio_config is not judged
    other = {**_omni(), "architectures": ["Qwen2_5OmniModel"]}
    assert _shape(other, 8) == []


def test_gate_refuses_qwen3_omni_at_tp_8(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(_omni(audio_config=AUDIO)), encoding="utf-8")

    def gate(tp: str) -> tuple[str, list[tuple[str, str]]]:
        args = ["--dry-run", "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", "m"]
        doc = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(tmp_path), *args, "--tp", tp)
        checks = [(c["check"], c["status"]) for c in doc["preflight"]["checks"] if c["check"] == SHAPE_CHECK]
        return str(doc["decision"]), checks

    assert gate("8") == ("refuse", [(SHAPE_CHECK, "fail")])  # (before: allow)
    assert gate("4") == ("allow", [])
