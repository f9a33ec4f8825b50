"""ischeme: the gate reads a Quark checkpoint's quantization configs and judges the scheme SGLang picks.

QuarkConfig._get_scheme_from_config (sglang 0.5.6-0.5.23) takes QuarkW4A4MXFP4 for an MXFP4 config and QuarkW8A8Fp8
for an FP8 one only where the GPU meets its 8.9 (no fallback: NotImplementedError below). The parent judged the
method only (unknown below 8.9, silent from 8.9). The configs below are my own, in the shape of the AMD Quark exports
named in each helper. Fail on the parent: FP8 below 8.9 blocked (was unknown), MXFP4 and a shape not read unknown
from 8.9 (were admitted), the reader; the FP8 admission on Hopper and the flag on another method's checkpoint guard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import gate_checkpoint, quant_rules, quantized, scheme_table
from registry_wheels import fetch_wheel, read_texts

QUARK = "sglang/srt/layers/quantization/quark/"


def _tensor(dtype: str, qscheme: str, dynamic: bool, **more: Any) -> dict[str, Any]:
    return {"dtype": dtype, "qscheme": qscheme, "is_dynamic": dynamic, "symmetric": True, "ch_axis": None, **more}


def _ckpt(global_cfg: dict[str, Any] | None, **extra: Any) -> dict[str, Any]:
    qc = {
        "quant_method": "quark",
        "global_quant_config": global_cfg,
        "layer_quant_config": {},
        "layer_type_quant_config": {},
        "exclude": ["lm_head"],
        "quant_mode": "eager_mode",
        **extra,
    }
    return quantized(qc)


def fp8_kv() -> dict[str, Any]:
    """The shape of amd/Llama-3.1-8B-Instruct-FP8-KV: FP8 per-tensor static weights and activations, FP8 KV cache."""
    cfg = {
        "weight": _tensor("fp8_e4m3", "per_tensor", False),
        "input_tensors": _tensor("fp8_e4m3", "per_tensor", False),
        "output_tensors": None,
        "bias": None,
    }
    kv = {"*v_proj": {"output_tensors": _tensor("fp8_e4m3", "per_tensor", False)}}
    return _ckpt(cfg, kv_cache_quant_config=kv)


def mxfp4() -> dict[str, Any]:
    """The shape of amd/Llama-3.3-70B-Instruct-MXFP4-Preview: MXFP4 weights and dynamic activations, e8m0 scales."""
    mx = {"qscheme": "per_group", "group_size": 32, "scale_format": "e8m0"}
    cfg = {
        "weight": {**_tensor("fp4", "per_group", False), **mx},
        "input_tensors": {**_tensor("fp4", "per_group", True), **mx},
        "output_tensors": None,
        "bias": None,
    }
    return _ckpt(cfg)


def int8_unread() -> dict[str, Any]:
    """A shape the reader does not know: Quark int8 per-channel weights, per-tensor static int8 activations."""
    cfg = {"weight": _tensor("int8", "per_channel", False), "input_tensors": _tensor("int8", "per_tensor", False)}
    return _ckpt(cfg)


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "8.0"), ("0.5.13", "8.6"), ("0.5.6", "8.0")])
def test_fp8_quark_below_8_9_is_blocked(tmp_path: Path, release: str, cc: str) -> None:
    doc = gate_checkpoint(tmp_path, release, cc, fp8_kv())
    assert doc["decision"] == "refuse"
    assert quant_rules(doc) == {"quant-quark-fp8-w8a8": "fail"}, doc.get("reasons")
    text = json.dumps(doc.get("reasons"))
    assert "quark_w8a8_fp8.py" in text and "No quark compatible scheme was found" in text


def test_fp8_quark_on_hopper_is_admitted(tmp_path: Path) -> None:
    assert quant_rules(gate_checkpoint(tmp_path, "0.5.23", "9.0", fp8_kv())) == {}


@pytest.mark.parametrize(("config", "rule"), [(mxfp4, "quant-quark-mxfp4"), (int8_unread, "quant-quark-scheme-unread")])
def test_mxfp4_and_a_shape_not_read_are_unknown_on_any_gpu(tmp_path: Path, config: Any, rule: str) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", "9.0", config())
    assert doc["decision"] == "refuse"
    assert quant_rules(doc) == {rule: "unknown"}, doc.get("reasons")


def test_the_quark_flag_on_another_methods_checkpoint_keeps_the_method_rule(tmp_path: Path) -> None:
    """--quantization quark with a compressed-tensors checkpoint: its schemes are no Quark configs (guard)."""
    group = {
        "targets": ["Linear"],
        "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True},
        "input_activations": None,
    }
    qc = {"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"g": group}}
    doc = gate_checkpoint(tmp_path, "0.5.23", "8.0", quantized(qc), "--quantization", "quark")
    assert quant_rules(doc).get("quant-loader-quark-scheme") == "unknown", doc.get("reasons")


def _schemes(config: dict[str, Any]) -> list[str]:
    from stackcheck.launch.preflight.schemes import quark_schemes

    return quark_schemes(config["quantization_config"], scheme_table("quark_schemes"))


def test_the_reader() -> None:
    assert _schemes(fp8_kv()) == ["quark-fp8-w8a8"]
    assert _schemes(mxfp4()) == ["quark-mxfp4"]
    assert _schemes(int8_unread()) == ["unknown"]
    assert _schemes(_ckpt(None)) == ["unknown"]  # no config at all
    fp8_layer = fp8_kv()["quantization_config"]["global_quant_config"]
    mixed = _ckpt(mxfp4()["quantization_config"]["global_quant_config"], layer_quant_config={"*.o_proj": fp8_layer})
    assert _schemes(mixed) == ["quark-fp8-w8a8", "quark-mxfp4"]
    biased = _ckpt({**fp8_layer, "bias": _tensor("fp8_e4m3", "per_tensor", False)})
    assert _schemes(biased) == ["unknown"]  # bias quantized: NotImplementedError in SGLang
    dynamic_weight = _ckpt({**fp8_layer, "weight": _tensor("fp8_e4m3", "per_tensor", True)})
    assert _schemes(dynamic_weight) == ["unknown"]


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.6", "0.5.13", "0.5.18", "0.5.23"])
def test_the_wheels_hops(release: str) -> None:
    """In the real wheel: no fallback for FP8 below 8.9, the chosen scheme's minimum checked, QuarkW8A8Fp8's 89,
    QuarkW4A4MXFP4's kernels imported under is_hip."""
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n.startswith(QUARK) and n.endswith(".py"))
    config = texts[QUARK + "quark.py"]
    assert "No quark compatible scheme was found" in config and "is_fp8_w8a8_supported" in config
    assert "self._check_scheme_supported(scheme.get_min_capability())" in config
    assert "return QuarkW8A16" not in config  # no weight-only fallback
    fp8 = texts[QUARK + "schemes/quark_w8a8_fp8.py"]
    assert "return 89" in fp8
    mx = texts[QUARK + "schemes/quark_w4a4_mxfp4.py"]
    assert "if _is_hip:" in mx and "from aiter" in mx
