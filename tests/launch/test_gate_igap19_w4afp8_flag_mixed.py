"""igap19 (1): --quantization w4afp8 on a ModelOpt MIXED_PRECISION checkpoint resolves as the checkpoint does.

Every SGLang release with modelopt_mixed (0.5.10-0.5.23) parses a MIXED_PRECISION checkpoint to quant_method
modelopt_mixed or w4afp8 (_parse_modelopt_quant_config), then _verify_quantization asks every quantization class
to override the --quantization given: ModelOptMixedPrecisionConfig returns modelopt_mixed for a parsed
modelopt_mixed config whatever the flag says, and no other class answers for it. So the flag neither wins nor is
rejected: a checkpoint the release maps to modelopt_mixed takes per-layer methods, one it maps to w4afp8 runs
W4AFp8MoEMethod, the flag given or not. The check w4afp8-moe-gpu read the flag alone as W4AFp8 and refused the
modelopt_mixed one off Hopper (over-refusal). On the parent (4b195b7) the modelopt_mixed cases with the flag fail."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_MOE, gate_tp8, release_box

CHECK = "w4afp8-moe-gpu"
W4A8 = {"quant_algo": "W4A8_AWQ", "group_size": 128}
NVFP4 = {"quant_algo": "NVFP4", "group_size": 16}
W4A8_ONLY = {"model.layers.0.mlp.experts.0.w1": W4A8, "model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"}}
WITH_NVFP4 = {**W4A8_ONLY, "model.layers.1.mlp.experts.0.w1": NVFP4}
NEMOTRON = {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _check(tmp_path: Path, release: str, config: dict[str, Any], layers: dict[str, Any]) -> Any:
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": layers}
    (model / "hf_quant_config.json").write_text(json.dumps({"producer": {"name": "modelopt"}, "quantization": quant}))
    doc = gate_tp8(release_box(tmp_path, release, "10.0"), model, "--quantization", "w4afp8")
    checks = (doc.get("preflight") or {}).get("checks") or []
    return next((c for c in checks if c.get("check") == CHECK), None)


@pytest.mark.parametrize(
    ("release", "config", "layers"),
    [("0.5.23", QWEN3_MOE, WITH_NVFP4), ("0.5.15", QWEN3_MOE, WITH_NVFP4), ("0.5.12", NEMOTRON, W4A8_ONLY)],
)
def test_the_flag_on_a_checkpoint_loaded_as_modelopt_mixed_is_not_w4afp8(
    tmp_path: Path, release: str, config: dict[str, Any], layers: dict[str, Any]
) -> None:
    assert _check(tmp_path, release, config, layers) is None


@pytest.mark.parametrize(
    ("release", "config", "layers"),
    [
        ("0.5.23", QWEN3_MOE, W4A8_ONLY),  # no NVFP4 layer: w4afp8
        ("0.5.14", QWEN3_MOE, WITH_NVFP4),  # 0.5.10-0.5.14 map only NemotronH to modelopt_mixed
        ("0.5.9", NEMOTRON, WITH_NVFP4),  # no modelopt_mixed before 0.5.10
    ],
)
def test_the_flag_on_a_checkpoint_loaded_as_w4afp8_is_still_judged(
    tmp_path: Path, release: str, config: dict[str, Any], layers: dict[str, Any]
) -> None:
    check = _check(tmp_path, release, config, layers)
    assert check is not None and check["status"] == "unknown", check


def test_the_pure_reading_follows_the_release_mapping_with_the_flag() -> None:
    from stackcheck.launch.preflight.w4afp8 import runs_w4afp8_moe

    table = json.loads((Path(__file__).resolve().parents[2] / "manifests" / "preflight.json").read_text())["model"][
        "w4afp8_moe"
    ]
    qcfg = {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"a": NVFP4}}
    assert runs_w4afp8_moe(table, "w4afp8", "w4afp8", qcfg, {}, [], True, "0.5.23") is False
    assert runs_w4afp8_moe(table, "w4afp8", "w4afp8", qcfg, {}, [], True, "0.5.9") is True
    assert runs_w4afp8_moe(table, "w4afp8", "w4afp8", qcfg, {}, [], True, None) is None
    assert runs_w4afp8_moe(table, "w4afp8", "fp8", {"quant_algo": "FP8"}, {}, [], True, "0.5.23") is True


MIXED_CC = "modelopt-mixed-min-cc"


def _mixed_check(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> Any:
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": W4A8_ONLY}
    (model / "hf_quant_config.json").write_text(json.dumps({"producer": {"name": "modelopt"}, "quantization": quant}))
    doc = gate_tp8(release_box(tmp_path, release, cc), model, *flags)
    checks = (doc.get("preflight") or {}).get("checks") or []
    return doc["decision"], next((c for c in checks if c.get("check") == MIXED_CC), None)


@pytest.mark.parametrize("flags", [(), ("--quantization", "w4afp8")])
def test_a_checkpoint_loaded_as_modelopt_mixed_below_its_loaders_minimum_fails(
    tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """0.5.10-0.5.12: ModelOptMixedPrecisionConfig asks for ModelOptFp4Config's 100, and a NemotronH
    MIXED_PRECISION checkpoint loads as modelopt_mixed: the loader raises on a Hopper GPU (allowed on 4b195b7)."""
    decision, check = _mixed_check(tmp_path, "0.5.12", "9.0", NEMOTRON, *flags)
    assert check is not None and check["status"] == "fail", check
    assert decision == "refuse"


@pytest.mark.parametrize(
    ("release", "cc", "config"),
    [
        ("0.5.12", "10.0", NEMOTRON),  # at its minimum
        ("0.5.13", "9.0", NEMOTRON),  # 80 from 0.5.13
        ("0.5.12", "9.0", QWEN3_MOE),  # loaded as w4afp8 (90)
        ("0.5.9", "9.0", NEMOTRON),  # no modelopt_mixed before 0.5.10
    ],
)
def test_no_such_failure_where_it_loads(tmp_path: Path, release: str, cc: str, config: dict[str, Any]) -> None:
    assert _mixed_check(tmp_path, release, cc, config)[1] is None
