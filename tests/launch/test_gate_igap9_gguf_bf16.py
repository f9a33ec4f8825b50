"""--quantization gguf on a checkpoint with no quantization (a BF16 safetensors directory): SGLang builds GGUFConfig
without a file (sglang/srt/model_loader/weight_utils.py get_quant_config), every linear and embedding layer gets an
uninitialized GGUF 'qweight' (sglang/srt/layers/quantization/gguf.py create_weights), and the default loader (a
directory keeps --load-format auto; only a .gguf path sets gguf) reads '.weight' tensors the model skips: the qweights
stay uninitialized and the launch crashes before serving (preflight.json model.flag_checkpoint_conflicts
gguf-unquantized-checkpoint, read in the 0.5.5, 0.5.12 and 0.5.23 wheels). A .gguf file path is not refused by it.

The model configs are written for the tests in the shape of published Llama 3 8B ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box


def _gate(tmp_path: Path, release: str, model: Path, *flags: str) -> dict[str, Any]:
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    box = release_box(tmp_path, release, "9.0")
    out: dict[str, Any] = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]
    return out


@pytest.mark.parametrize("release", ["0.5.5", "0.5.12", "0.5.23"])
def test_gguf_on_a_bf16_directory_is_refused(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, model_dir(tmp_path, "m", LLAMA3), "--quantization", "gguf")
    text = json.dumps(doc.get("reasons") or [])
    assert doc["decision"] == "refuse"
    assert "--quantization gguf on a checkpoint with no quantization" in text and "uninitialized" in text


def test_without_the_flag_the_same_directory_is_not_refused_for_it(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", model_dir(tmp_path, "m", LLAMA3))
    assert "--quantization gguf" not in json.dumps(doc.get("reasons") or [])


def test_a_gguf_file_is_not_refused_for_it(tmp_path: Path) -> None:
    path = tmp_path / "model-Q4_K_M.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    doc = _gate(tmp_path, "0.5.23", path, "--quantization", "gguf")
    assert "--quantization gguf on a checkpoint with no quantization" not in json.dumps(doc)
