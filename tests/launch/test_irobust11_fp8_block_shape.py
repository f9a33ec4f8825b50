"""irobust11: refusal fp8-block-moe-tp-split read an FP8 quantization_config whose weight_block_size is present but
not two positive whole numbers ([0, 0], "128", [128, 128, 1]) as no block at all (a per-tensor checkpoint: the rule
passed), though SGLang's Fp8Config takes such a value as a block (a length other than 2 raises as the config is
built; a zero block divides by zero). A block of a shape this reading does not take is unknown now. The configs are
this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
BASE = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
        "num_attention_heads": 128, "num_key_value_heads": 128, "n_routed_experts": 256,
        "moe_intermediate_size": 2048, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
        "v_head_dim": 128}  # fmt: skip


def _rule(tmp_path: Path, block: Any) -> str | None:
    cfg = dict(BASE)
    qc: dict[str, Any] = {"quant_method": "fp8", "activation_scheme": "dynamic"}
    if block is not None:
        qc["weight_block_size"] = block
    cfg["quantization_config"] = qc
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(cfg))
    doc = stackcheck_json("gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--cwd",
                          str(tmp_path), "--dry-run", "--format", "json", "--", "python", "-m",
                          "sglang.launch_server", "--model-path", "./m", "--tp", "8", "--attention-backend",
                          "triton", "--moe-runner-backend", "triton")  # fmt: skip
    found = [r for r in doc["reasons"] if r["feature"] == "refusal fp8-block-moe-tp-split"]
    return str(found[0]["status"]) if found else None


@pytest.mark.parametrize("block", [[0, 0], "128", [128, 128, 1], [128.0, 128.0], [True, True]])
def test_a_block_of_another_shape_is_unknown(tmp_path: Path, block: Any) -> None:
    assert _rule(tmp_path, block) == "unknown"


@pytest.mark.parametrize("block", [[128, 128], None])
def test_a_dividing_block_or_none_passes(tmp_path: Path, block: Any) -> None:
    assert _rule(tmp_path, block) is None
