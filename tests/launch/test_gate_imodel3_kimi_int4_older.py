"""imodel3: SGLang 0.5.10-0.5.19 run the same Kimi K2 / K2.5 INT4 pick as 0.5.20-0.5.23 (arg_groups/overrides.py
_deepseek_moe_quant_resolution's is_kimi_k2_k25_thinking_int4 -> flashinfer_trtllm on SM100, then
CompressedTensorsMxInt4MoE's trtllm_mxint4_block_scale_moe: the TRTLLM_GEN_BMM cubins). launch.moe_runner_auto was
read for 0.5.20-0.5.23 only, so on an offline B200 without those cubins a Kimi INT4 checkpoint on 0.5.10-0.5.19 was
allowed (a false pass). Only this pick is read for those releases: every other launch keeps the fact absent. The
configs are this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 1536}


def ct_int4(group_size: int) -> dict[str, Any]:
    weights = {"type": "int", "num_bits": 4, "group_size": group_size, "strategy": "group", "symmetric": True,
               "dynamic": False}  # fmt: skip
    return {
        "quant_method": "compressed-tensors",
        "format": "pack-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": None}},
    }


def config(**extra: Any) -> dict[str, Any]:
    return {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "kimi_k2", "hidden_size": 2048,
            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16, "torch_dtype": "bfloat16",
            "vocab_size": 1024, "topk_method": "noaux_tc", "n_routed_experts": 16, **MLA, **extra}  # fmt: skip


MODELS = {
    "k2-int4": config(quantization_config=ct_int4(32)),
    "k2-int4-g128": config(quantization_config=ct_int4(128)),
    "k2-bf16": config(),
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel3-kimi")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubins-offline" / "facts.json").read_text(encoding="utf-8"))
    for version in ("0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.14", "0.5.16", "0.5.17", "0.5.18", "0.5.19"):
        doc = json.loads(json.dumps(facts))
        doc.get("facts", doc)["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def check_rules(cwd: Path, version: str, model: str, *words: str) -> dict[str, str]:
    # b200-cubins-offline: 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins; SGLang per test
    doc = stackcheck_json("gate", "--facts", str(cwd / f"b200-{version}.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          "--attention-backend", "triton", "--tp", "8", *words)  # fmt: skip
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"]}


@pytest.mark.parametrize("version", ["0.5.10", "0.5.11", "0.5.12", "0.5.14", "0.5.16", "0.5.17", "0.5.18", "0.5.19"])
def test_kimi_int4_on_sm100_needs_the_bmm_cubins(cwd: Path, version: str) -> None:
    assert check_rules(cwd, version, "k2-int4").get("mxint4-auto") == "fail", version


def test_not_the_recipe_another_runner_or_an_older_release(cwd: Path) -> None:
    assert "mxint4-auto" not in check_rules(cwd, "0.5.19", "k2-int4-g128")  # not SGLang's Kimi test
    assert "mxint4-auto" not in check_rules(cwd, "0.5.19", "k2-bf16")  # no pick read for it here: absent
    assert "mxint4-auto" not in check_rules(cwd, "0.5.19", "k2-int4", "--moe-runner-backend", "triton")
    assert "mxint4-auto" not in check_rules(cwd, "0.5.19", "k2-int4", "--moe-a2a-backend", "deepep")
    assert "mxint4-auto" not in check_rules(cwd, "0.5.9", "k2-int4")  # 0.5.9 has no Kimi INT4 test
