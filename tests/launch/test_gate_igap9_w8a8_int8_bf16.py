"""--quantization w8a8_int8 / auto-round-int8 on a checkpoint with no quantization (a BF16 one): W8A8Int8Config names no
config file, so SGLang builds it empty (sglang/srt/model_loader/weight_utils.py get_quant_config) and every linear layer
gets an int8 'weight' and a float32 'weight_scale' (sglang/srt/layers/quantization/w8a8_int8.py create_weights). The
BF16 weights are cast into int8 by plain copy_ (sglang/srt/layers/parameter.py load_qkv_weight,
load_merged_column_weight, load_row_parallel_weight) and no scale is read: wrong output without a crash on a
Llama-shaped model (ValueError only through load_column_parallel_weight from 0.5.12). Refused, fail closed
(preflight.json model.flag_checkpoint_conflicts w8a8-int8-unquantized-checkpoint and
auto-round-int8-unquantized-checkpoint; read in the 0.5.5, 0.5.12, 0.5.23 wheels). An int8 compressed-tensors
checkpoint under --quantization w8a8_int8 is not refused by them.

The model configs are written for the tests in the shape of published Llama 3 8B ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

NEEDLE = "on a checkpoint with no quantization (a BF16 or FP16 one)"


def _gate(tmp_path: Path, release: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, "m", config)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    box = release_box(tmp_path, release, "9.0")
    out: dict[str, Any] = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    return out


@pytest.mark.parametrize(
    ("release", "method"),
    [
        ("0.5.5", "w8a8_int8"),
        ("0.5.12", "w8a8_int8"),
        ("0.5.23", "w8a8_int8"),
        ("0.5.15", "auto-round-int8"),
        ("0.5.23", "auto-round-int8"),
    ],
)
def test_int8_w8a8_on_a_bf16_checkpoint_is_refused(tmp_path: Path, release: str, method: str) -> None:
    doc = _gate(tmp_path, release, LLAMA3, "--quantization", method)
    text = json.dumps(doc.get("reasons") or [])
    assert doc["decision"] == "refuse"
    assert NEEDLE in text and "wrong output" in text and "W8A8Int8Config" in text


CT_INT8: dict[str, Any] = {
    **LLAMA3,
    "quantization_config": {
        "quant_method": "compressed-tensors",
        "format": "int-quantized",
        "ignore": ["lm_head"],
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": {"num_bits": 8, "type": "int", "symmetric": True, "strategy": "channel", "dynamic": False},
                "input_activations": {
                    "num_bits": 8,
                    "type": "int",
                    "symmetric": True,
                    "strategy": "token",
                    "dynamic": True,
                },
            }
        },
    },
}


def test_an_int8_compressed_tensors_checkpoint_is_not_refused_for_it(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", CT_INT8, "--quantization", "w8a8_int8")
    assert NEEDLE not in json.dumps(doc)
