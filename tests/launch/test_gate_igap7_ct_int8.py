"""igap7: SGLang 0.5.3-0.5.6's compressed-tensors W8A8 int8 scheme asks compute capability 8.9.

CompressedTensorsW8A8Int8.get_min_capability is 89 in those releases (80 from 0.5.7) and the config's get_scheme
refuses a GPU below the scheme's minimum as the linear layers are built (_check_scheme_supported), with no fallback
for int8 (W8A8 FP8 falls back to W8A16 FP8, 8.0). Rule quant-loader-compressed-tensors says nothing from 8.0, so the
parent's check passed a compressed-tensors launch on an A100 or A10 under 0.5.3-0.5.6: a false pass for an int8
checkpoint. The scheme is not read, so those GPUs are unknown now (refused, fail-closed) under those releases only;
the 8.9+ GPUs and the releases around stay admitted (guards). 4 tests fail on the parent (the 3 unknown cases and
the rule's shape); the registry test reads the minimum and the check from the real wheels."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, ROOT, gate_tp8, model_dir, release_box
from registry_wheels import fetch_wheel, read_texts

RULE = "quant-loader-compressed-tensors-int8"
SCHEMES = "sglang/srt/layers/quantization/compressed_tensors/"


def _int8_checkpoint() -> dict[str, Any]:
    """A compressed-tensors checkpoint of my own whose one group is W8A8 int8 (dynamic per-token activations)."""
    group = {
        "targets": ["Linear"],
        "weights": {"num_bits": 8, "type": "int", "strategy": "channel", "symmetric": True, "dynamic": False},
        "input_activations": {"num_bits": 8, "type": "int", "strategy": "token", "symmetric": True, "dynamic": True},
    }
    qc = {"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups": {"group_0": group}}
    return {**LLAMA3, "quantization_config": qc}


def _rule_results(doc: dict[str, Any], rule: str = RULE) -> list[dict[str, Any]]:
    return [
        x
        for r in doc.get("reasons") or []
        if r.get("feature") == "sglang-gpu-min-cc"
        for x in r.get("reasons") or []
        if x.get("rule") == rule
    ]


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.5", "8.0", []),  # A100, the checkpoint's own quant_method
        ("0.5.3", "8.6", []),  # A10
        ("0.5.6", "8.0", ["--quantization", "compressed-tensors"]),
    ],
)
def test_ampere_under_the_releases_whose_int8_scheme_asks_89_is_refused(
    tmp_path: Path, release: str, cc: str, flags: list[str]
) -> None:
    """ischeme: the checkpoint's groups are read now (launch.model_quant_schemes), so its int8 W8A8 scheme is
    blocked by rule quant-ct-int8-w8a8-89 where it was unknown here; this rule judges only a launch whose schemes
    were not read (test below)."""
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", _int8_checkpoint()), *flags)
    assert doc["decision"] == "refuse"
    assert _rule_results(doc) == []
    got = _rule_results(doc, "quant-ct-int8-w8a8-89")
    assert [x.get("result") for x in got] == ["fail"], doc.get("reasons")
    assert "8.9" in json.dumps(got) and "compressed_tensors_w8a8_int8.py" in json.dumps(got)


def test_the_rule_judges_a_launch_whose_schemes_were_not_read() -> None:
    checks = json.loads((ROOT / "manifests" / "checks.json").read_text())
    rules = next(c for c in checks["checks"] if c["id"] == "sglang-gpu-min-cc")["rules"]
    rule = next(r for r in rules if r["id"] == RULE)
    read = [
        {"fact": "launch.model_quant_method", "op": "exists"},
        {"fact": "launch.model_quant_method", "op": "in", "value": ["compressed-tensors"]},
        {"fact": "launch.model_quant_schemes", "op": "exists"},
        # igap20: a checkpoint SGLang loads by another method (launch.model_quant_loaded) is not this rule's
        {"not": {"fact": "launch.model_quant_loaded", "op": "exists"}},
    ]
    assert {"not": {"all": read}} in rule["when"]["all"]


@pytest.mark.parametrize(
    ("release", "cc"),
    [
        ("0.5.5", "8.9"),  # L4/L40S meet the scheme's 8.9
        ("0.5.5", "9.0"),
        ("0.5.7", "8.0"),  # 80 from 0.5.7
        ("0.5.23", "8.0"),
    ],
)
def test_admitted_where_the_int8_scheme_is_met(tmp_path: Path, release: str, cc: str) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", _int8_checkpoint()))
    assert _rule_results(doc) == [], doc.get("reasons")


def test_rule_sourced_and_shaped_like_its_siblings() -> None:
    checks = json.loads((ROOT / "manifests" / "checks.json").read_text())
    rules = next(c for c in checks["checks"] if c["id"] == "sglang-gpu-min-cc")["rules"]
    rule = next(r for r in rules if r["id"] == RULE)
    assert rule["source"] and all(s.get("title") and s.get("url") for s in rule["source"])
    assert rule["effect"] == "crash"
    assert {"fact": "pkg.sglang.version", "op": "version", "value": ">=0.5.3,<0.5.7"} in rule["when"]["all"]


def _min_capability(text: str, cls: str) -> int | None:
    """The integer get_min_capability of class `cls` returns, read from the module's syntax tree."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and fn.name == "get_min_capability":
                    for ret in ast.walk(fn):
                        if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Constant):
                            value = ret.value.value
                            return value if isinstance(value, int) else None
    return None


@pytest.mark.registry
@pytest.mark.parametrize(("release", "minimum"), [("0.5.3", 89), ("0.5.6", 89), ("0.5.7", 80), ("0.5.23", 80)])
def test_the_wheels_int8_scheme_minimum_and_the_check(release: str, minimum: int) -> None:
    """In the real wheel: the int8 scheme's minimum, and get_scheme checking the chosen scheme's minimum."""
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n.startswith(SCHEMES) and n.endswith(".py"))
    scheme = texts[SCHEMES + "schemes/compressed_tensors_w8a8_int8.py"]
    assert _min_capability(scheme, "CompressedTensorsW8A8Int8") == minimum
    config = texts[SCHEMES + "compressed_tensors.py"]
    assert "self._check_scheme_supported(scheme.get_min_capability())" in config
    assert "return CompressedTensorsW8A8Int8(" in config


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.7", "0.5.9", "0.5.23"])
def test_the_wheels_schemes_ask_80_or_more(release: str) -> None:
    """Rule quant-loader-compressed-tensors keeps a GPU below 8.0 unknown, never ok, because every scheme class of the
    release asks 8.0 or more (the least is the bound); an MoE-only checkpoint's schemes are not checked by get_scheme,
    which is why it stays unknown rather than blocked there."""
    texts = read_texts(fetch_wheel("sglang", release), lambda n: n.startswith(SCHEMES + "schemes/"))
    minima: dict[str, int] = {}
    for text in texts.values():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ClassDef) and node.name.startswith("CompressedTensors"):
                value = _min_capability(text, node.name)
                if value is not None:
                    minima[node.name] = value
    assert len(minima) >= 5, minima
    assert min(minima.values()) >= 80, minima
