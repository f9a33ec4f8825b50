"""ifc34 (thirty-fourth fact-check sample, rows 0-3): modelopt-mixed-unloadable-experts under a --quantization the
release replaces by modelopt_mixed.

A ModelOpt MIXED_PRECISION checkpoint with an NVFP4 layer is parsed to quant_method modelopt_mixed, and
ModelOptMixedPrecisionConfig.override_quantization_method answers modelopt_mixed whatever --quantization says (sglang
0.5.16 configs/model_config.py:1213-1223 and :1408-1416, layers/quantization/modelopt_quant.py:619-623); its FusedMoE
branch gives W4A8_AWQ experts no method (:806-815), so FusedMoE builds BF16 UnquantizedFusedMoEMethod and the
int4-packed tensors do not load. The rule judged only launches without --quantization or with w4afp8, so
`--quantization modelopt_fp8` on such a checkpoint was allowed on 8.6 / 8.9 with 0.5.13+ (igap20 lets the flag pass
its minimum there)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_MOE, gate_tp8, release_box

RULE = "refusal modelopt-mixed-unloadable-experts"
W4A8 = {"quant_algo": "W4A8_AWQ", "group_size": 128}
NVFP4 = {"quant_algo": "NVFP4", "group_size": 16}
FP8_QPROJ = {"model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"}}
W4A8_NVFP4 = {**FP8_QPROJ, "model.layers.0.mlp.experts.0.w1": W4A8, "model.layers.1.mlp.experts.0.w1": NVFP4}
NVFP4_ONLY = {**FP8_QPROJ, "model.layers.1.mlp.experts.0.w1": NVFP4}
NEMOTRON = {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], layers: dict[str, Any], *flags: str) -> Any:
    model = tmp_path / "ckpt"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": layers}
    (model / "hf_quant_config.json").write_text(json.dumps({"producer": {"name": "modelopt"}, "quantization": quant}))
    return gate_tp8(release_box(tmp_path, release, cc), model, *flags)


def _status(doc: dict[str, Any]) -> str | None:
    return next((str(r.get("status")) for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    ("release", "cc", "config", "flag"),
    [
        ("0.5.16", "8.9", NEMOTRON, "modelopt_fp8"),  # row 0
        ("0.5.21", "8.6", NEMOTRON, "modelopt_fp8"),  # row 1
        ("0.5.15", "8.6", NEMOTRON, "modelopt_fp8"),  # row 2
        ("0.5.17", "8.9", NEMOTRON, "modelopt_fp8"),  # row 3
        ("0.5.23", "10.0", QWEN3_MOE, "modelopt_fp8"),
        ("0.5.20", "10.0", QWEN3_MOE, "fp8"),
    ],
)
def test_a_replaced_flag_on_w4a8_experts_is_refused(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flag: str
) -> None:
    doc = _gate(tmp_path, release, cc, config, W4A8_NVFP4, "--quantization", flag)
    assert doc["derived"]["launch"].get("model_quant_loaded") == "modelopt_mixed"
    assert _status(doc) == "blocked", doc["reasons"]
    assert doc["decision"] == "refuse"
    message = json.dumps(doc["reasons"])
    assert f"--quantization {flag} on a ModelOpt MIXED_PRECISION checkpoint" in message
    assert "W4A8_AWQ" in message


@pytest.mark.parametrize("flag", ["modelopt_fp8", "w4afp8"])
def test_mapped_experts_under_a_replaced_flag_still_pass(tmp_path: Path, flag: str) -> None:
    """NVFP4 experts (a MoE method from 0.5.10) load whatever the flag: the rule does not fire."""
    doc = _gate(tmp_path, "0.5.23", "10.0", QWEN3_MOE, NVFP4_ONLY, "--quantization", flag)
    assert doc["derived"]["launch"].get("model_quant_loaded") == "modelopt_mixed"
    assert _status(doc) is None, doc["reasons"]
