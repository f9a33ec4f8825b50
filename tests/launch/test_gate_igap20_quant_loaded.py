"""igap20 (1): the quantization rules follow the method SGLang loads, not --quantization as given.

From 0.5.10 SGLang's _verify_quantization asks every quantization class in turn to override the flag, and
ModelOptMixedPrecisionConfig answers modelopt_mixed for a ModelOpt MIXED_PRECISION checkpoint the release parses to
modelopt_mixed whatever the flag says (0.5.18 and later skip that loop only for quark_mxfp4). So a
`--quantization w4afp8` (or fp8, modelopt, ...) on such a checkpoint loads ModelOptMixedPrecisionConfig, whose
minimum is 80 from 0.5.13 (100 in 0.5.10-0.5.12), not the flag's own. On the parent (24c3e54) the flag's minimum
was applied: an sm_89 box was refused with w4afp8 (90) on 0.5.13+ (over-refusal), and an H100 was allowed with
--quantization fp8 on 0.5.10-0.5.12 although the loader asks 100 (false pass)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_MOE, gate_tp8, quant_rules, release_box

ROOT = Path(__file__).resolve().parents[2]
W4A8 = {"quant_algo": "W4A8_AWQ", "group_size": 128}
NVFP4 = {"quant_algo": "NVFP4", "group_size": 16}
W4A8_ONLY = {"model.layers.0.mlp.experts.0.w1": W4A8, "model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"}}
WITH_NVFP4 = {**W4A8_ONLY, "model.layers.1.mlp.experts.0.w1": NVFP4}
NEMOTRON = {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}
MIXED_CC = "modelopt-mixed-min-cc"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _gate(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], layers: dict[str, Any], *flags: str
) -> dict[str, Any]:
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": layers}
    (model / "hf_quant_config.json").write_text(json.dumps({"producer": {"name": "modelopt"}, "quantization": quant}))
    return gate_tp8(release_box(tmp_path, release, cc), model, *flags)


def _mixed_cc(doc: dict[str, Any]) -> Any:
    checks = (doc.get("preflight") or {}).get("checks") or []
    return next((c for c in checks if c.get("check") == MIXED_CC), None)


@pytest.mark.parametrize(
    ("release", "config", "layers", "flag"),
    [
        ("0.5.23", QWEN3_MOE, WITH_NVFP4, "w4afp8"),
        ("0.5.15", QWEN3_MOE, WITH_NVFP4, "w4afp8"),
        ("0.5.13", NEMOTRON, W4A8_ONLY, "w4afp8"),
        ("0.5.23", QWEN3_MOE, WITH_NVFP4, "modelopt_fp8"),  # 89 as a flag; modelopt_mixed's 80 decides
    ],
)
def test_a_flag_replaced_by_modelopt_mixed_is_held_to_its_minimum_80(
    tmp_path: Path, release: str, config: dict[str, Any], layers: dict[str, Any], flag: str
) -> None:
    """sm_86: below the flag's own minimum, above ModelOptMixedPrecisionConfig's 80 (refused on 24c3e54)."""
    doc = _gate(tmp_path, release, "8.6", config, layers, "--quantization", flag)
    assert quant_rules(doc) == {}, quant_rules(doc)
    assert _mixed_cc(doc) is None
    assert doc["derived"]["launch"].get("model_quant_loaded") == "modelopt_mixed"


@pytest.mark.parametrize("flag", ["fp8", "modelopt", "w4afp8"])
def test_any_flag_on_0_5_12_is_held_to_modelopt_mixeds_100(tmp_path: Path, flag: str) -> None:
    """0.5.10-0.5.12: ModelOptMixedPrecisionConfig asks ModelOptFp4Config's 100: an H100 fails whatever the flag
    (--quantization fp8 or modelopt was allowed on 24c3e54: Fp8Config's 80, ModelOptFp8Config's 89)."""
    doc = _gate(tmp_path, "0.5.12", "9.0", NEMOTRON, W4A8_ONLY, "--quantization", flag)
    check = _mixed_cc(doc)
    assert check is not None and check["status"] == "fail", check
    assert f"--quantization {flag} is replaced" in check["message"]
    assert doc["decision"] == "refuse"


def test_a_checkpoint_loaded_as_w4afp8_keeps_the_flags_minimum(tmp_path: Path) -> None:
    """No NVFP4 layer: 0.5.23 maps it to w4afp8, W4AFp8Config's 90 refuses sm_89."""
    doc = _gate(tmp_path, "0.5.23", "8.9", QWEN3_MOE, W4A8_ONLY, "--quantization", "w4afp8")
    assert quant_rules(doc).get("quant-loader-sm90") == "fail", quant_rules(doc)
    assert _mixed_cc(doc) is None


def test_the_pure_reading_of_the_flags_a_release_keeps() -> None:
    from stackcheck.launch.preflight.w4afp8 import loads_modelopt_mixed

    table = json.loads((ROOT / "manifests" / "preflight.json").read_text())["model"]["w4afp8_moe"]
    mixed = {"modelopt_mixed": True}
    assert loads_modelopt_mixed(table, mixed, None, "0.5.23") is True
    assert loads_modelopt_mixed(table, mixed, "fp8", "0.5.23") is True
    # REQUANTIZATION_METHODS skip the override loop from 0.5.18 only
    assert loads_modelopt_mixed(table, mixed, "quark_mxfp4", "0.5.23") is False
    assert loads_modelopt_mixed(table, mixed, "quark_mxfp4", "0.5.17") is True
    assert loads_modelopt_mixed(table, mixed, "quark_mxfp4", None) is None
    assert loads_modelopt_mixed(table, {"modelopt_mixed": None}, "w4afp8", None) is None
    assert loads_modelopt_mixed(table, {"modelopt_mixed": False}, "w4afp8", "0.5.23") is False
    assert loads_modelopt_mixed(table, None, "w4afp8", "0.5.23") is False


MISMATCH = "modelopt-mixed-flag-mismatch"


def _mismatch(doc: dict[str, Any]) -> Any:
    checks = (doc.get("preflight") or {}).get("checks") or []
    return next((c for c in checks if c.get("check") == MISMATCH), None)


@pytest.mark.parametrize(
    ("release", "config", "flag"),
    [
        ("0.5.23", QWEN3_MOE, "fp8"),
        ("0.5.23", QWEN3_MOE, "modelopt"),
        ("0.5.23", QWEN3_MOE, "modelopt_mixed"),
        ("0.5.14", QWEN3_MOE, "modelopt_fp8"),  # 0.5.10-0.5.14 map only NemotronH to modelopt_mixed
        ("0.5.9", NEMOTRON, "fp8"),  # no modelopt_mixed before 0.5.10: w4afp8
        ("0.5.17", QWEN3_MOE, "quark_mxfp4"),  # REQUANTIZATION_METHODS skip the check from 0.5.18 only
    ],
)
def test_another_flag_on_a_checkpoint_parsed_to_w4afp8_fails(
    tmp_path: Path, release: str, config: dict[str, Any], flag: str
) -> None:
    """A false pass on 24c3e54: the flag's own minimum passed on an H100, and SGLang raises the mismatch."""
    doc = _gate(tmp_path, release, "9.0", config, W4A8_ONLY, "--quantization", flag)
    check = _mismatch(doc)
    assert check is not None and check["status"] == "fail", check
    assert f"({flag})" in check["message"]
    assert doc["decision"] == "refuse"


@pytest.mark.parametrize(
    ("release", "config", "layers", "flag"),
    [
        ("0.5.23", QWEN3_MOE, W4A8_ONLY, "w4afp8"),  # the checkpoint's own
        ("0.5.23", QWEN3_MOE, WITH_NVFP4, "fp8"),  # modelopt_mixed: replaced, no mismatch
        ("0.5.12", NEMOTRON, W4A8_ONLY, "fp8"),
        ("0.5.23", QWEN3_MOE, W4A8_ONLY, "quark_mxfp4"),  # requantized (refused by quark-mxfp4-online-cuda)
        ("0.5.23", QWEN3_MOE, W4A8_ONLY, "humming"),  # HummingConfig overrides it for any checkpoint
    ],
)
def test_no_mismatch_where_sglang_takes_the_flag(
    tmp_path: Path, release: str, config: dict[str, Any], layers: dict[str, Any], flag: str
) -> None:
    assert _mismatch(_gate(tmp_path, release, "9.0", config, layers, "--quantization", flag)) is None


def test_the_mismatch_id_is_one_allow_takes() -> None:
    from stackcheck.launch.gate_preflight import preflight_checks

    assert MISMATCH in preflight_checks()


@pytest.mark.parametrize(("cc", "result"), [("8.6", {"quant-loader-sm90": "fail"}), ("9.0", {})])
def test_a_checkpoint_parsed_to_w4afp8_without_the_flag_is_held_to_90(
    tmp_path: Path, cc: str, result: dict[str, str]
) -> None:
    """0.5.13+: the rule quant-loader-depends was unknown between 80 and 90 (modelopt_mixed or w4afp8 not read); the
    release's mapping decides it: W4AFp8Config's 90."""
    doc = _gate(tmp_path, "0.5.23", cc, QWEN3_MOE, W4A8_ONLY)
    assert quant_rules(doc) == result, quant_rules(doc)
    assert doc["derived"]["launch"].get("model_quant_loaded") == "w4afp8"
