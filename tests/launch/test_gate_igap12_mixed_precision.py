"""igap12: a compressed-tensors checkpoint whose top-level format is mixed-precision (each config group carries its
own format) is judged per GPU and release instead of unknown everywhere.

SGLang 0.5.17+ read each group's own format (compressed_tensors.py 0.5.17:324-327, :627; 0.5.23:377-380, :730), so
the linear layers take the schemes of the groups' formats and the quant-ct-* rules judge them; 0.5.1-0.5.16 read
the top-level format only, for which no scheme exists (NotImplementedError / ImportError as the first quantized
linear layer is built); the MoE layers' WNA16 scheme still tests the top-level format on 0.5.17+ (ValueError), so a
pack-quantized group on a model with routed experts stays unknown. The config.json files are my own, in the shape
llm-compressor writes for a non-uniform recipe (attention in one format, the MLP in another, regex targets).
On the parent (b33a6f2) 9 of these fail (every mixed-precision launch was unknown, the reader gave `unknown`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, ROOT, gate_checkpoint, quant_rules
from registry_wheels import fetch_wheel, read_texts

CT = "sglang/srt/layers/quantization/compressed_tensors/"


def _args(num_bits: int, kind: str, strategy: str, dynamic: Any = False, **more: Any) -> dict[str, Any]:
    return {"num_bits": num_bits, "type": kind, "strategy": strategy, "symmetric": True, "dynamic": dynamic, **more}


FP8_ATTN = {
    "targets": ["re:.*self_attn.(q|k|v|o)_proj$"],
    "format": "float-quantized",
    "weights": _args(8, "float", "channel"),
    "input_activations": _args(8, "float", "token", True),
}
BLOCK_ATTN = {
    **FP8_ATTN,
    "weights": _args(8, "float", "block", block_structure=[128, 128]),
    "input_activations": _args(8, "float", "group", True, group_size=128),
}
W4A16_MLP = {
    "targets": ["re:.*mlp.*"],
    "format": "pack-quantized",
    "weights": _args(4, "int", "group", group_size=128),
    "input_activations": None,
}
NVFP4_MLP = {
    "targets": ["re:.*mlp.*"],
    "format": "nvfp4-pack-quantized",
    "weights": _args(4, "float", "tensor_group", group_size=16),
    "input_activations": _args(4, "float", "tensor_group", "local", group_size=16),
}


def mixed(*groups: dict[str, Any], model: dict[str, Any] | None = None) -> dict[str, Any]:
    qc = {
        "quant_method": "compressed-tensors",
        "format": "mixed-precision",
        "config_groups": {f"group_{i}": g for i, g in enumerate(groups)},
        "ignore": ["lm_head"],
        "kv_cache_scheme": None,
    }
    return {**(model or LLAMA3), "quantization_config": qc}


def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"][
        "compressed_tensors_schemes"
    ]
    return table


def _schemes(config: dict[str, Any]) -> list[str]:
    from stackcheck.launch.preflight.schemes import compressed_tensors_schemes

    return compressed_tensors_schemes(config["quantization_config"], _table())


def _refusals(doc: dict[str, Any]) -> dict[str, str]:
    return {
        str(r.get("feature")): str(r.get("status"))
        for r in doc.get("reasons") or []
        if str(r.get("feature", "")).startswith("refusal ct-")
    }


# --- the reader ---------------------------------------------------------------------------------------------------


def test_the_reader_reads_each_group_by_its_own_format() -> None:
    assert _schemes(mixed(FP8_ATTN, W4A16_MLP)) == ["fp8-w8a8", "mixed-precision", "wna16"]
    assert _schemes(mixed(BLOCK_ATTN, NVFP4_MLP)) == ["fp8-block", "mixed-precision", "nvfp4-w4a4"]


def test_the_reader_still_fails_closed_on_a_mixed_precision_config() -> None:
    no_format = {k: v for k, v in W4A16_MLP.items() if k != "format"}  # falls back to "mixed-precision": no scheme
    assert "unknown" in _schemes(mixed(FP8_ATTN, no_format))
    assert "unknown" in _schemes(mixed(FP8_ATTN, {**W4A16_MLP, "targets": []}))
    assert "unknown" in _schemes(mixed(FP8_ATTN, {**W4A16_MLP, "format": "mxfp4-pack-quantized"}))
    # not mixed-precision: a group's own format other than the top-level one is still unknown (releases differ)
    one = mixed(FP8_ATTN)
    one["quantization_config"]["format"] = "pack-quantized"
    assert _schemes(one) == ["unknown"]


# --- 0.5.17+: per GPU ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "9.0"), ("0.5.17", "8.0"), ("0.5.20", "12.0")])
def test_a_dense_mixed_precision_checkpoint_is_allowed_where_its_schemes_run(
    tmp_path: Path, release: str, cc: str
) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, mixed(FP8_ATTN, W4A16_MLP))
    assert quant_rules(doc) == {}, doc.get("reasons")
    assert doc["decision"] == "allow", doc.get("reasons")


def test_a_group_scheme_the_gpu_cannot_take_is_refused(tmp_path: Path) -> None:
    """A100: the block-FP8 group falls back to W8A16 FP8, which has no block strategy (quant-ct-fp8-block)."""
    doc = gate_checkpoint(tmp_path, "0.5.23", "8.0", mixed(BLOCK_ATTN, W4A16_MLP))
    assert doc["decision"] == "refuse"
    assert quant_rules(doc) == {"quant-ct-fp8-block": "fail"}, doc.get("reasons")


def test_nvfp4_group_below_blackwell_before_0_5_22_is_refused(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.19", "9.0", mixed(FP8_ATTN, NVFP4_MLP))
    assert quant_rules(doc) == {"quant-ct-nvfp4-w4a4-100": "fail"}, doc.get("reasons")


# --- up to 0.5.16: the top-level format only ----------------------------------------------------------------------


@pytest.mark.parametrize("release", ["0.5.16", "0.5.9"])
def test_up_to_0_5_16_a_mixed_precision_checkpoint_is_refused(tmp_path: Path, release: str) -> None:
    doc = gate_checkpoint(tmp_path, release, "9.0", mixed(FP8_ATTN, W4A16_MLP))
    assert doc["decision"] == "refuse"
    assert quant_rules(doc).get("quant-ct-mixed-precision-top-format") == "fail", doc.get("reasons")
    text = json.dumps(doc["reasons"])
    assert "0.5.17" in text and "compressed_tensors.py" in text


# --- the experts --------------------------------------------------------------------------------------------------


def test_a_pack_quantized_group_on_an_moe_model_is_unknown(tmp_path: Path) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "9.0", mixed(FP8_ATTN, W4A16_MLP, model=QWEN3_MOE))
    assert doc["decision"] == "refuse"
    assert _refusals(doc) == {"refusal ct-mixed-precision-packed-moe": "unknown"}, doc.get("reasons")


def test_moe_guards(tmp_path: Path) -> None:
    """NVFP4 experts on Blackwell with FP8 attention, and a dense model, meet no expert refusal."""
    assert _refusals(gate_checkpoint(tmp_path, "0.5.23", "10.0", mixed(FP8_ATTN, NVFP4_MLP, model=QWEN3_MOE))) == {}
    assert _refusals(gate_checkpoint(tmp_path, "0.5.23", "9.0", mixed(FP8_ATTN, W4A16_MLP))) == {}


# --- the wheels ---------------------------------------------------------------------------------------------------


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.16", "0.5.17", "0.5.23"])
def test_the_wheels_read_the_group_format_from_0_5_17(release: str) -> None:
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n.startswith(CT) and n.endswith(".py"))
    config = texts[CT + "compressed_tensors.py"]
    moe = texts[CT + "schemes/compressed_tensors_wNa16_moe.py"]
    reads_group = 'quant_config.get("format")' in config and "format if format is not None" in config
    assert reads_group is (release != "0.5.16")
    assert "No compressed-tensors compatible scheme was found." in config
    assert "self.quant_config.quant_format == CompressionFormat.pack_quantized.value" in moe
