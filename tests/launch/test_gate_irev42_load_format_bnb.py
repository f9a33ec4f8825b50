"""--load-format bitsandbytes imports bitsandbytes whatever --quantization says (irev42's review of the quant-package
check, which judged --quantization and the checkpoint's quant_method only).

sglang 0.5.1-0.5.23 model_loader/loader.py: get_model_loader returns BitsAndBytesModelLoader for that load format
(0.5.23:4233); its _load_weights calls _get_quantized_weights_iterator for a checkpoint with no quantization_config
too (0.5.23:2918), which imports bitsandbytes and raises ImportError 'Please install bitsandbytes>=0.44.0' when the
import fails or the version is below 0.44.0 (0.5.23:2685-2697). preflight.json quant_packages: an entry with
load_format. The model config is written for the tests in the shape of a published Llama 3 8B one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

CHECK = "quant-package"
ABSENT = {"bitsandbytes": {"installed": False}}


def _gate(tmp_path: Path, release: str, packages: dict[str, Any], *flags: str) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"].update(packages)
    box.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


def _checks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", ["--load-format", "bitsandbytes"]),
        ("0.5.1", ["--load-format=bitsandbytes"]),
        ("0.5.14", ["--load-format", "auto", "--load-format", "bitsandbytes"]),
        ("0.5.14", ["--load-format", "bitsandbytes", "--quantization", "fp8"]),
    ],
)
def test_bitsandbytes_load_format_without_bitsandbytes_refused(tmp_path: Path, release: str, flags: list[str]) -> None:
    # fails on the parent: allowed (no check judged the load format's package)
    doc = _gate(tmp_path, release, ABSENT, *flags)
    checks = _checks(doc)
    assert doc["decision"] == "refuse" and [c["status"] for c in checks] == ["fail"], doc["reasons"]
    assert "--load-format bitsandbytes" in json.dumps(checks[0]) and "ImportError" in json.dumps(checks[0])


def test_bitsandbytes_older_than_the_loader_floor_refused(tmp_path: Path) -> None:
    # fails on the parent: allowed
    doc = _gate(tmp_path, "0.5.23", {"bitsandbytes": {"installed": True, "version": "0.43.3"}}, "--load-format",
                "bitsandbytes")  # fmt: skip
    assert doc["decision"] == "refuse" and [c["status"] for c in _checks(doc)] == ["fail"], doc["reasons"]


def test_installed_or_other_formats_not_refused_so(tmp_path: Path) -> None:
    # bitsandbytes installed at the floor is ok (fails on the parent: no check ran), another load format is not
    # judged, and the --quantization bitsandbytes entry judges alone where both name the package
    ok = _gate(tmp_path / "a", "0.5.23", {"bitsandbytes": {"installed": True, "version": "0.44.0"}}, "--load-format",
               "bitsandbytes")  # fmt: skip
    assert [c["status"] for c in _checks(ok)] == ["ok"]
    assert _checks(_gate(tmp_path / "b", "0.5.23", ABSENT, "--load-format", "safetensors")) == []
    both = _gate(tmp_path / "c", "0.5.23", {"bitsandbytes": {"installed": True, "version": "0.45.0"}},
                 "--load-format", "bitsandbytes", "--quantization", "bitsandbytes")  # fmt: skip
    assert [c["status"] for c in _checks(both)] == ["fail"] and "0.46.1" in json.dumps(_checks(both))


BNB_QCFG = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}
BNB_CKPT: dict[str, Any] = {**LLAMA3, "quantization_config": BNB_QCFG}
TP_RULE = "refusal bnb-prequant-tp"
INSTALLED = {"bitsandbytes": {"installed": True, "version": "0.48.0"}}


def _gate_ckpt(tmp_path: Path, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"].update(INSTALLED)
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", config)), *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize(
    "flags",
    [["--load-format", "bitsandbytes", "--tp", "2"], ["--load-format=bitsandbytes", "--tp-size=4"]],
)
def test_prequantized_bitsandbytes_under_tp_refused(tmp_path: Path, flags: list[str]) -> None:
    # fails on the parent: allowed; the loader raises 'Prequant BitsAndBytes models with TP is not supported.'
    from gate_cli import reason_status

    doc = _gate_ckpt(tmp_path, BNB_CKPT, *flags)
    assert doc["decision"] == "refuse" and reason_status(doc).get(TP_RULE) == ("blocked", "crash"), doc["reasons"]


def test_tp1_or_an_unquantized_checkpoint_not_refused_so(tmp_path: Path) -> None:
    # guards (pass on the parent too): TP 1, a BF16 checkpoint quantized on load, no bitsandbytes load format
    from gate_cli import reason_status

    for i, (config, flags) in enumerate(
        [
            (BNB_CKPT, ["--load-format", "bitsandbytes", "--tp", "1"]),
            (LLAMA3, ["--load-format", "bitsandbytes", "--tp", "2"]),
            (BNB_CKPT, ["--tp", "2"]),
        ]
    ):
        assert TP_RULE not in reason_status(_gate_ckpt(tmp_path / str(i), config, *flags)), flags
