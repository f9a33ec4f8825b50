"""bitsandbytes quantization without --load-format bitsandbytes (launch.json refusal
bnb-quantization-without-bnb-loader): the reverse of the loader rules of test_gate_factcheck23.

SGLang fills --quantization from config.json's quant_method (model_config.py _verify_quantization) but never sets
--load-format bitsandbytes itself; the bitsandbytes linear method's apply reads weight.bnb_quant_state, which only
BitsAndBytesModelLoader sets (sglang 0.5.15 layers/quantization/bitsandbytes.py:301, model_loader/loader.py:2045).
The configs are written for the tests in the shape of a published Llama 3 8B one and a 4-bit bitsandbytes one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, reason_status, release_box

RULE = "refusal bnb-quantization-without-bnb-loader"
BNB4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
        "bnb_4bit_compute_dtype": "bfloat16"}  # fmt: skip
BNB_CKPT: dict[str, Any] = {**LLAMA3, "quantization_config": BNB4}
PACKAGES = {"bitsandbytes": {"installed": True, "version": "0.48.2"}, "vllm": {"installed": True, "version": "0.9.2"}}


def _gate(tmp_path: Path, release: str, config: dict[str, Any] | None, *flags: str) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"].update(PACKAGES)
    box.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "m", config) if config is not None else tmp_path / "not-downloaded"
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.15", BNB_CKPT, []),  # a pre-quantized 4-bit checkpoint, no flag
        ("0.5.23", BNB_CKPT, ["--load-format", "safetensors"]),
        ("0.5.8", LLAMA3, ["--quantization", "bitsandbytes"]),  # online bitsandbytes, default loader
        ("0.5.20", None, ["--quantization=bitsandbytes", "--load-format", "auto"]),  # model not read: the flag decides
        ("0.5.3", BNB_CKPT, []),
    ],
)
def test_bitsandbytes_without_its_loader_refused(
    tmp_path: Path, release: str, config: dict[str, Any] | None, flags: list[str]
) -> None:
    # fails on the parent: allowed (or refused for other reasons only)
    doc = _gate(tmp_path, release, config, *flags)
    assert doc["decision"] == "refuse" and reason_status(doc).get(RULE) == ("blocked", "crash"), doc["reasons"]
    text = json.dumps(next(r for r in doc["reasons"] if r["feature"] == RULE))
    assert "bnb_quant_state" in text and "--load-format bitsandbytes" in text and "loader.py" in text


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.15", BNB_CKPT, ["--load-format", "bitsandbytes"]),
        ("0.5.23", LLAMA3, ["--quantization", "bitsandbytes", "--load-format=bitsandbytes"]),
        ("0.5.15", LLAMA3, []),
        ("0.5.15", None, []),  # a model not read, no flag: not this rule's
        ("0.5.6", BNB_CKPT, []),  # no bitsandbytes method at all: the quant-package check's
        ("0.5.15", BNB_CKPT, ["--load-format", "gguf"]),
    ],
)
def test_other_launches_not_this_rule(
    tmp_path: Path, release: str, config: dict[str, Any] | None, flags: list[str]
) -> None:
    # guards (pass on the parent too)
    assert RULE not in reason_status(_gate(tmp_path, release, config, *flags))


def test_rule_sources_every_release() -> None:
    from stackcheck.knowledge.loader import load

    rule = next(r for r in load().launch["refusals"]["rules"] if r["id"] == "bnb-quantization-without-bnb-loader")
    assert [r["versions"] for r in rule["releases"]] == [">=0.5.1,<0.5.5", ">=0.5.5,<0.5.8", ">=0.5.8,<=0.5.23"]
    assert all(r["source"] for r in rule["releases"]) and rule["releases"][0]["inferred"] is True


# ---- registry: the wheels say what the rule says ----------------------------------------------------------------


def _read(release: str, path: str) -> str:
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", release)) as zf:
        return zf.read(path).decode()


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.8", "0.5.15", "0.5.23"])
def test_registry_only_the_bnb_loader_sets_quant_states(release: str) -> None:
    method = _read(release, "sglang/srt/layers/quantization/bitsandbytes.py")
    loader = _read(release, "sglang/srt/model_loader/loader.py")
    assert "qweight.bnb_quant_state" in method
    assert loader.count('"bnb_quant_state"') == 1
    setter = loader.index('"bnb_quant_state"')
    assert loader.rindex("\nclass ", 0, setter) + 1 == loader.rindex("class BitsAndBytesModelLoader", 0, setter)
    assert "LoadFormat.BITSANDBYTES" in loader
