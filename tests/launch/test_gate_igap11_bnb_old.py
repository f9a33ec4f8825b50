"""--quantization bitsandbytes (or a bitsandbytes checkpoint) on SGLang 0.5.1-0.5.7, which the quant-package check
judged from 0.5.8 only (preflight.json quant_packages).

sglang 0.5.1-0.5.4 layers/quantization/__init__.py takes BitsAndBytesConfig from vllm in a try block (from :10) and
get_quantization_config raises ValueError 'bitsandbytes quantization requires some operators from vllm' where that
import failed (0.5.1:130-135, 0.5.4:127-132), called by every loader through _initialize_model ->
_get_quantization_config -> get_quant_config (weight_utils.py 0.5.1:139). sglang 0.5.5-0.5.7 register no
bitsandbytes method (QUANTIZATION_METHODS = BASE_QUANTIZATION_METHODS, 0.5.7:90), so model_config.py
_verify_quantization raises ValueError 'Unknown quantization method' (0.5.5:704, 0.5.7:808). The model configs are
written for the tests in the shape of a published Llama 3 8B one (and a bitsandbytes 4-bit one)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

CHECK = "quant-package"
BNB_CKPT: dict[str, Any] = {**LLAMA3, "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True}}
HAS_BNB = {"bitsandbytes": {"installed": True, "version": "0.48.0"}}
NO_VLLM = {"vllm": {"installed": False}}


def _gate(
    tmp_path: Path, release: str, packages: dict[str, Any], config: dict[str, Any], *flags: str
) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"].update(packages)
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", config)), *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


def _checks(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]


@pytest.mark.parametrize("release", ["0.5.5", "0.5.6", "0.5.7"])
@pytest.mark.parametrize(("config", "flags"), [(LLAMA3, ["--quantization", "bitsandbytes"]), (BNB_CKPT, [])])
def test_unregistered_bitsandbytes_refused(tmp_path: Path, release: str, config: dict[str, Any],
                                           flags: list[str]) -> None:  # fmt: skip
    # fails on the parent: no quant-package check below 0.5.8 (allowed), bitsandbytes installed or not
    doc = _gate(tmp_path, release, {**HAS_BNB, **NO_VLLM}, config, *flags)
    checks = _checks(doc)
    assert doc["decision"] == "refuse" and [c["status"] for c in checks] == ["fail"], doc["reasons"]
    assert "Unknown quantization method: bitsandbytes" in checks[0]["message"]
    assert "0.5.8" in checks[0]["required"]


@pytest.mark.parametrize("release", ["0.5.1", "0.5.4"])
@pytest.mark.parametrize(("config", "flags"), [(LLAMA3, ["--quantization", "bitsandbytes"]), (BNB_CKPT, [])])
def test_without_vllm_refused(tmp_path: Path, release: str, config: dict[str, Any], flags: list[str]) -> None:
    # fails on the parent: allowed
    doc = _gate(tmp_path, release, {**HAS_BNB, **NO_VLLM}, config, *flags)
    checks = _checks(doc)
    assert doc["decision"] == "refuse" and [c["status"] for c in checks] == ["fail"], doc["reasons"]
    assert "requires some operators from vllm" in checks[0]["message"]


def test_with_vllm_unknown_and_later_releases_unchanged(tmp_path: Path) -> None:
    # vllm installed on 0.5.3: unknown, never ok (fails on the parent: no check); 0.5.8 keeps its own entry
    doc = _gate(tmp_path / "a", "0.5.3", {**HAS_BNB, "vllm": {"installed": True, "version": "0.9.0.1"}}, LLAMA3,
                "--quantization", "bitsandbytes")  # fmt: skip
    assert [c["status"] for c in _checks(doc)] == ["unknown"] and doc["decision"] != "allow", doc["reasons"]
    later = _gate(tmp_path / "b", "0.5.8", {**HAS_BNB, **NO_VLLM}, LLAMA3, "--quantization", "bitsandbytes")
    assert [c["status"] for c in _checks(later)] == ["ok"]
    # a BF16 checkpoint with --load-format bitsandbytes alone is the loader's entry's, not this one's
    fmt = _gate(tmp_path / "c", "0.5.6", {**HAS_BNB, **NO_VLLM}, LLAMA3, "--load-format", "bitsandbytes")
    assert [c["status"] for c in _checks(fmt)] == ["ok"]


def test_release_unknown_with_entries_that_disagree_is_unknown() -> None:
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.package_checks import check_quant_package

    data = load().preflight
    facts = {"packages": {**HAS_BNB, "vllm": {"installed": False}}}
    result = check_quant_package("bitsandbytes", facts, data, None)
    assert result is not None and result.status == "unknown"
    assert check_quant_package("bitsandbytes", facts, data, "0.5.6").status == "fail"  # type: ignore[union-attr]


# ---- registry: the wheels say what the entries say -------------------------------------------------------------


def _read(release: str, path: str) -> str:
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", release)) as zf:
        return zf.read(path).decode()


INIT = "sglang/srt/layers/quantization/__init__.py"


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.1", "0.5.2", "0.5.3", "0.5.4"])
def test_registry_bitsandbytes_through_vllm(release: str) -> None:
    text = _read(release, INIT)
    head = text[: text.index("VLLM_AVAILABLE = True")]
    assert "from vllm.model_executor.layers.quantization.bitsandbytes import BitsAndBytesConfig" in head
    assert '"bitsandbytes": BitsAndBytesConfig' in text and "requires some operators from vllm" in text
    assert "sglang/srt/layers/quantization/bitsandbytes.py" not in _names(release)


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.5", "0.5.6", "0.5.7"])
def test_registry_bitsandbytes_unregistered(release: str) -> None:
    text = _read(release, INIT)
    assert '"bitsandbytes"' not in text and "QUANTIZATION_METHODS = {**BASE_QUANTIZATION_METHODS}" in text
    assert "Unknown quantization method" in _read(release, "sglang/srt/configs/model_config.py")
    assert '"bitsandbytes",' in _read(release, "sglang/srt/server_args.py")  # still a --quantization choice
    assert "sglang/srt/layers/quantization/bitsandbytes.py" not in _names(release)


def _names(release: str) -> list[str]:
    import zipfile

    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("sglang", release)) as zf:
        return zf.namelist()
