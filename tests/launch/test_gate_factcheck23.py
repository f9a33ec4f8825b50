"""The twenty-third fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twenty-third sample"; the rows in
bench/factcheck23_drawn.json), each read in the real sglang wheels (not run on a GPU):

- a6: Llama 3 8B BF16 with --load-format bitsandbytes --tp 1 (0.5.15, 8.0), no --quantization. get_model_loader hands
  the load format to BitsAndBytesModelLoader (loader.py 0.5.15:3256); its _load_weights takes pre_quant from
  config.json's quantization_config alone (:1963), so the unquantized generator quantizes every projection while
  loading under a .qweight name (:1893); with no quantization config the model's linear layers are unquantized (their
  parameters are .weight, with no pack_factor), and the loop over the quant states raises ValueError 'Parameter ...
  not found in the model.' (:2031; 'pack_factor not set' at :2049 otherwise). 0.5.1-0.5.23 alike. Beside it, a
  checkpoint quantized another way raises 'BitsAndBytes loader does not support ... quantization' (:1972).

Model configs are written for the tests in the published checkpoints' shape."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, reason_status, release_box

UNQUANTIZED = "refusal bnb-loader-unquantized-checkpoint"
OTHER = "refusal bnb-loader-other-quantization"
BNB4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": False, "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_compute_dtype": "bfloat16", "bnb_4bit_use_double_quant": True}  # fmt: skip
FP8_BLOCK = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
AWQ = {"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True, "version": "gemm"}
BITSANDBYTES = {"bitsandbytes": {"installed": True, "version": "0.48.2"}}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any] | None, *flags: str) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, cc)
    doc = json.loads(box.read_text())
    doc["facts"]["packages"].update(BITSANDBYTES)
    box.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", config) if config is not None else tmp_path / "not-downloaded"
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.15", "8.0", ["--load-format", "bitsandbytes"]),  # row a6
        ("0.5.1", "9.0", ["--load-format=bitsandbytes"]),
        ("0.5.23", "10.0", ["--load-format", "bitsandbytes", "--quantization", "fp8"]),
        ("0.5.9", "12.0", ["--load-format", "bitsandbytes", "--quantization", "awq"]),
    ],
)
def test_bitsandbytes_loader_on_an_unquantized_checkpoint_refused(
    tmp_path: Path, release: str, cc: str, flags: list[str]
) -> None:
    # fails on the parent: allowed; the loader raises 'Parameter ... not found in the model.'
    doc = _gate(tmp_path, release, cc, LLAMA3, *flags)
    assert doc["decision"] == "refuse" and reason_status(doc).get(UNQUANTIZED) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r["feature"] == UNQUANTIZED)
    text = json.dumps(reason)
    assert "not found in the model" in text and "loader.py" in text and "--load-format bitsandbytes" in text


@pytest.mark.parametrize(("release", "config"), [("0.5.20", FP8_BLOCK), ("0.5.4", AWQ)])
def test_bitsandbytes_loader_on_another_quantization_refused(
    tmp_path: Path, release: str, config: dict[str, Any]
) -> None:
    # fails on the parent: allowed; the loader raises 'BitsAndBytes loader does not support ... quantization'
    doc = _gate(tmp_path, release, "9.0", {**LLAMA3, "quantization_config": config}, "--load-format", "bitsandbytes")
    assert reason_status(doc).get(OTHER) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r["feature"] == OTHER)
    assert f"does not support {config['quant_method']} quantization" in json.dumps(reason)
    assert UNQUANTIZED not in reason_status(doc)


def test_unread_model_is_unknown(tmp_path: Path) -> None:
    # fails on the parent (allowed): whether the checkpoint carries a quantization is not known
    doc = _gate(tmp_path, "0.5.15", "9.0", None, "--load-format", "bitsandbytes")
    assert doc["decision"] != "allow" and reason_status(doc).get(UNQUANTIZED, ("",))[0] == "unknown", doc["reasons"]
    assert OTHER not in reason_status(doc)


@pytest.mark.parametrize(
    ("config", "flags"),
    [
        (LLAMA3, ["--load-format", "bitsandbytes", "--quantization", "bitsandbytes"]),
        ({**LLAMA3, "quantization_config": BNB4}, ["--load-format", "bitsandbytes"]),
        ({**LLAMA3, "quantization_config": BNB4}, []),
        (LLAMA3, []),
        ({**LLAMA3, "quantization_config": FP8_BLOCK}, []),
    ],
)
def test_other_bitsandbytes_launches_not_refused_so(tmp_path: Path, config: dict[str, Any], flags: list[str]) -> None:
    # guards (pass on the parent too): --quantization bitsandbytes with the load format, a bitsandbytes checkpoint,
    # no bitsandbytes load format
    status = reason_status(_gate(tmp_path, "0.5.15", "9.0", config, *flags))
    assert UNQUANTIZED not in status and OTHER not in status, status
