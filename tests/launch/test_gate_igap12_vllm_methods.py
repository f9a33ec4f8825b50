"""igap12: the quantization methods SGLang 0.5.1-0.5.4 take from vllm (gguf, marlin, aqlm, qqq, experts_int8,
gptq_marlin_24, deepspeedfp, tpu_int8) fail without vllm, as bitsandbytes there does (igap11; check quant-package).

sglang 0.5.1-0.5.4 layers/quantization/__init__.py imports their config classes from vllm in one try block (from :10)
and get_quantization_config raises ValueError '{method} quantization requires some operators from vllm' for any name
of VLLM_QUANTIZATION_METHODS where that import failed (0.5.1:130-135, 0.5.4:127-132). The parent judged bitsandbytes
only and allowed the rest. Model configs written for the tests (a Llama 3 8B shape with a quantization_config naming
the method). On the parent (b33a6f2) 9 of these fail."""

from __future__ import annotations

import ast
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, ROOT, cli_json, model_dir, release_box
from registry_wheels import fetch_wheel

CHECK = "quant-package"
NO_VLLM = {"vllm": {"installed": False}}
WITH_VLLM = {"vllm": {"installed": True, "version": "0.9.0.1"}}


def _ckpt(method: str) -> dict[str, Any]:
    return {**LLAMA3, "quantization_config": {"quant_method": method, "bits": 4}}


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


@pytest.mark.parametrize(
    ("release", "config", "flags"),
    [
        ("0.5.4", LLAMA3, ["--quantization", "marlin"]),
        ("0.5.1", LLAMA3, ["--quantization", "gguf"]),
        ("0.5.4", _ckpt("aqlm"), []),
        ("0.5.3", _ckpt("qqq"), []),
        ("0.5.2", _ckpt("experts_int8"), []),
        ("0.5.4", _ckpt("gptq_marlin_24"), []),
        ("0.5.1", _ckpt("marlin"), []),
    ],
)
def test_without_vllm_refused(tmp_path: Path, release: str, config: dict[str, Any], flags: list[str]) -> None:
    doc = _gate(tmp_path, release, NO_VLLM, config, *flags)
    checks = _checks(doc)
    assert doc["decision"] == "refuse" and [c["status"] for c in checks] == ["fail"], doc["reasons"]
    assert "requires some operators from vllm" in checks[0]["message"]


def test_with_vllm_unknown_never_ok(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.3", WITH_VLLM, _ckpt("aqlm"))
    assert [c["status"] for c in _checks(doc)] == ["unknown"] and doc["decision"] != "allow", doc["reasons"]


def test_later_releases_have_no_such_entry(tmp_path: Path) -> None:
    # 0.5.5 and later import nothing from vllm (their own GGUFConfig); these entries stop at 0.5.4
    assert _checks(_gate(tmp_path, "0.5.5", NO_VLLM, LLAMA3, "--quantization", "gguf")) == []


def test_every_vllm_method_has_an_entry() -> None:
    data = json.loads((ROOT / "manifests" / "preflight.json").read_text())
    got = {e["method"] for e in data["quant_packages"]["entries"] if e.get("distributions") == ["vllm"]}
    assert got == set(VLLM_METHODS)


VLLM_METHODS = (
    "aqlm", "deepspeedfp", "tpu_int8", "marlin", "gguf", "gptq_marlin_24", "bitsandbytes", "qqq", "experts_int8",
)  # fmt: skip


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.1", "0.5.4", "0.5.5"])
def test_the_wheels_vllm_methods(release: str) -> None:
    with zipfile.ZipFile(fetch_wheel("sglang", release)) as z:
        text = z.read("sglang/srt/layers/quantization/__init__.py").decode()
    found: list[str] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Assign) and any(
            getattr(t, "id", "") == "VLLM_QUANTIZATION_METHODS" for t in node.targets
        ):
            assert isinstance(node.value, ast.Dict)
            found = [str(k.value) for k in node.value.keys if isinstance(k, ast.Constant)]
    if release == "0.5.5":
        assert found == [] and "from vllm" not in text
    else:
        assert sorted(found) == sorted(VLLM_METHODS)
        assert "quantization requires some operators from vllm" in text
