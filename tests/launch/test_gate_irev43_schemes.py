"""Adversarial review of the compressed-tensors scheme reader (stackcheck/launch/preflight/schemes.py).

SGLang compares a checkpoint's `format` as written (compressed_tensors/utils.py is_activation_quantization_format,
`format in [...]`; _get_scheme_from_parts `self.quant_format == CompressionFormat.pack_quantized.value`), and up to
0.5.16 reads only the top-level format (compressed_tensors.py 0.5.1:193,214,390; 0.5.16:596); a group's own format
is read from 0.5.17 (0.5.17:324-327). The reader compared formats without case and took a group's format where
the top-level one is absent: `"Float-Quantized"`, or a group format with none at the top, read as fp8-w8a8 /
wna16, while SGLang 0.5.1-0.5.16 finds no activation format there and raises NotImplementedError("No
compressed-tensors compatible scheme was found.") at load (0.5.1:436): a false pass on a GPU the scheme suits.
Both now read as unknown (the rules on it fail closed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from stackcheck.launch.preflight.schemes import compressed_tensors_schemes

ROOT = Path(__file__).resolve().parent.parent.parent


def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"][
        "compressed_tensors_schemes"
    ]
    return table


def _args(num_bits: int, kind: str, strategy: str, dynamic: Any = False, **more: Any) -> dict[str, Any]:
    return {"num_bits": num_bits, "type": kind, "strategy": strategy, "symmetric": True, "dynamic": dynamic, **more}


FP8_GROUP = {
    "targets": ["Linear"],
    "weights": _args(8, "float", "channel"),
    "input_activations": _args(8, "float", "token", True),
}
W4A16_GROUP = {"targets": ["Linear"], "weights": _args(4, "int", "group", group_size=128), "input_activations": None}


def _qc(top: str | None, group: dict[str, Any]) -> dict[str, Any]:
    qc: dict[str, Any] = {"quant_method": "compressed-tensors", "config_groups": {"group_0": group}, "ignore": []}
    if top is not None:
        qc["format"] = top
    return qc


def test_the_format_is_compared_as_written() -> None:
    assert compressed_tensors_schemes(_qc("float-quantized", FP8_GROUP), _table()) == ["fp8-w8a8"]
    assert compressed_tensors_schemes(_qc("Float-Quantized", FP8_GROUP), _table()) == ["unknown"]
    assert compressed_tensors_schemes(_qc("PACK-QUANTIZED", W4A16_GROUP), _table()) == ["unknown"]
    # the QuantizationArgs fields are lower-cased by compressed-tensors' validators (quant_args.py validate_type,
    # validate_strategy, 0.11.0:190-235): read without case as before
    upper = {**FP8_GROUP, "weights": _args(8, "FLOAT", "CHANNEL")}
    assert compressed_tensors_schemes(_qc("float-quantized", upper), _table()) == ["fp8-w8a8"]


def test_a_group_format_without_a_top_level_one_is_not_read() -> None:
    assert compressed_tensors_schemes(_qc(None, {**FP8_GROUP, "format": "float-quantized"}), _table()) == ["unknown"]
    assert compressed_tensors_schemes(_qc(None, {**W4A16_GROUP, "format": "pack-quantized"}), _table()) == ["unknown"]
    # the same format in both places: every release reads it
    both = _qc("float-quantized", {**FP8_GROUP, "format": "float-quantized"})
    assert compressed_tensors_schemes(both, _table()) == ["fp8-w8a8"]


def _quark_table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"]["quark_schemes"]
    return table


def test_quark_strings_are_compared_as_written() -> None:
    """quark.py _is_fp8_w8a8 (0.5.6:180, 0.5.23:799) and _is_mx_fp4 compare dtype and qscheme with ==: an
    upper-case "FP8_E4M3" selects no scheme (NotImplementedError at load), so it is not read as quark-fp8-w8a8."""
    from stackcheck.launch.preflight.schemes import quark_schemes

    def cfg(dtype: str, qscheme: str) -> dict[str, Any]:
        weight = {"dtype": dtype, "qscheme": qscheme, "is_dynamic": False}
        inputs = {"dtype": dtype, "qscheme": "per_tensor", "is_dynamic": False}
        return {"quant_method": "quark", "global_quant_config": {"weight": weight, "input_tensors": inputs}}

    assert quark_schemes(cfg("fp8_e4m3", "per_tensor"), _quark_table()) == ["quark-fp8-w8a8"]
    assert quark_schemes(cfg("FP8_E4M3", "per_tensor"), _quark_table()) == ["unknown"]
    assert quark_schemes(cfg("fp8_e4m3", "Per_Tensor"), _quark_table()) == ["unknown"]
