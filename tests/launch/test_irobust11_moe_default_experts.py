"""irobust11: launch.model_moe read a config.json with no expert-count key as a dense model, though an architecture
named as MoE (Qwen3MoeForCausalLM) then gets its transformers config class's default count: the rules on SGLang's
default MoE runner (nvfp4's bmm-cubins-default) were dropped for it. Such a config is unknown now; one stating its
experts (more than one, or one: GLM-4.5's dense shape) is read as before. The configs are this test's own minimal
files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.launch.refusals import _model_moe

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4"}


def _config(arch: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "hidden_size": 2048, "num_attention_heads": 16,
                            "num_key_value_heads": 4, "head_dim": 128, "quantization_config": NVFP4}  # fmt: skip
    base.update(extra)
    return base


@pytest.mark.parametrize(
    ("config", "want"),
    [
        (_config("Qwen3MoeForCausalLM"), "unknown"),
        (_config("OlmoeForCausalLM"), "unknown"),
        (_config("Qwen3MoeForCausalLM", num_experts=16), True),
        (_config("Glm4MoeForCausalLM", n_routed_experts=1), False),
        (_config("LlamaForCausalLM"), False),
    ],
    ids=["moe-no-count", "olmoe-no-count", "moe-counted", "glm-one-expert", "dense"],
)
def test_the_reading(config: dict[str, Any], want: Any) -> None:
    got = _model_moe(config)
    assert (got if got in (True, False) else "unknown") == want


def test_the_gate_keeps_the_default_runner_rule(tmp_path: Path) -> None:
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text(json.dumps(_config("Qwen3MoeForCausalLM")))
    doc = stackcheck_json("gate", "--facts", str(CASES / "b200-cubins-offline" / "facts.json"), "--cwd",
                          str(tmp_path), "--dry-run", "--format", "json", "--", "python", "-m",
                          "sglang.launch_server", "--model-path", "m", "--attention-backend", "triton")  # fmt: skip
    found = [r for f in doc["reasons"] if f["feature"] == "nvfp4" for r in f["reasons"]]
    assert {str(r.get("rule")): r["result"] for r in found}.get("bmm-cubins-default") == "unknown", found
