"""igap15: a W4AFP8 MoE checkpoint off Hopper is unknown (check w4afp8-moe-gpu), never ok.

SGLang's W4AFp8MoEMethod calls sgl-kernel's cutlass_w4a8_moe_mm, which runs its SM90 kernel whatever the GPU
(sgl-kernel csrc/moe/cutlass_moe/w4a8/scaled_mm_entry.cu); W4AFp8Config's minimum capability is 90, so a B200
(10.0) or an RTX PRO 6000 (12.0) passed. Which ModelOpt MIXED_PRECISION checkpoints run it is the release's
_parse_modelopt_quant_config: modelopt_mixed for a NemotronH model (0.5.10-0.5.14) or one whose quantized_layers name
an NVFP4 layer (0.5.15 on), else w4afp8. The checkpoints are the test helpers' configs with an hf_quant_config.json
written here in ModelOpt's shape. On the parent (5e61616) 5 of these 9 fail: no such check (0.5.23 and 0.5.12 on a
10.0 box were allowed; 0.5.9 on 12.0 was refused for another reason), and no preflight/w4afp8.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, gate_tp8, release_box

CHECK = "w4afp8-moe-gpu"
W4A8 = {"quant_algo": "W4A8_AWQ", "group_size": 128}
NVFP4 = {"quant_algo": "NVFP4", "group_size": 16}


def _model(tmp_path: Path, config: dict[str, Any], layers: dict[str, Any]) -> Path:
    model = tmp_path / "ckpt"
    model.mkdir(parents=True)
    (model / "config.json").write_text(json.dumps(config))
    quant = {"quant_algo": "MIXED_PRECISION", "kv_cache_quant_algo": None, "quantized_layers": layers}
    (model / "hf_quant_config.json").write_text(json.dumps({"producer": {"name": "modelopt"}, "quantization": quant}))
    return model


def _w4(tmp_path: Path, release: str, cc: str, config: dict[str, Any], layers: dict[str, Any], *flags: str) -> Any:
    box = release_box(tmp_path, release, cc)
    doc = gate_tp8(box, _model(tmp_path, config, layers), *flags)
    checks = (doc.get("preflight") or {}).get("checks") or []
    return doc["decision"], next((c for c in checks if c.get("check") == CHECK), None)


MOE_W4A8 = {"model.layers.0.mlp.experts.0.w1": W4A8, "model.layers.0.self_attn.q_proj": {"quant_algo": "FP8"}}


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "10.0"), ("0.5.9", "12.0"), ("0.5.12", "10.0")])
def test_a_w4afp8_moe_checkpoint_off_hopper_is_unknown(tmp_path: Path, release: str, cc: str) -> None:
    decision, check = _w4(tmp_path, release, cc, QWEN3_MOE, MOE_W4A8)
    assert check is not None and check["status"] == "unknown", check
    assert "SM90" in check["message"] and decision == "refuse"


def test_explicit_w4afp8_flag_is_judged_too(tmp_path: Path) -> None:
    _, check = _w4(tmp_path, "0.5.23", "10.0", QWEN3_MOE, MOE_W4A8, "--quantization", "w4afp8")
    assert check is not None and check["status"] == "unknown", check


@pytest.mark.parametrize(
    ("release", "cc", "config", "layers"),
    [
        ("0.5.23", "9.0", QWEN3_MOE, MOE_W4A8),  # Hopper: the kernel's own GPU
        ("0.5.23", "10.0", LLAMA3, MOE_W4A8),  # no experts: no W4AFp8MoEMethod
        ("0.5.23", "10.0", QWEN3_MOE, {**MOE_W4A8, "model.layers.1.mlp.experts.0.w1": NVFP4}),  # modelopt_mixed
        ("0.5.12", "10.0", {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}, MOE_W4A8),  # modelopt_mixed
    ],
)
def test_not_w4afp8_moe_or_on_hopper_is_not_judged(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], layers: dict[str, Any]
) -> None:
    assert _w4(tmp_path, release, cc, config, layers)[1] is None


def test_the_release_not_known_and_rules_that_disagree_are_not_decided() -> None:
    from stackcheck.launch.preflight.w4afp8 import runs_w4afp8_moe

    table = json.loads((Path(__file__).resolve().parents[2] / "manifests" / "preflight.json").read_text())["model"][
        "w4afp8_moe"
    ]
    qcfg = {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"a": NVFP4}}
    assert runs_w4afp8_moe(table, None, "w4afp8", qcfg, {}, [], True, "0.5.23") is False  # modelopt_mixed
    assert runs_w4afp8_moe(table, None, "w4afp8", qcfg, {}, [], True, "0.5.9") is True  # every one is w4afp8
    assert runs_w4afp8_moe(table, None, "w4afp8", qcfg, {}, [], True, None) is None
    assert runs_w4afp8_moe(table, "w4afp8", None, {}, {}, [], object(), "0.5.23") is None  # experts not read
    assert runs_w4afp8_moe(table, "fp8", "w4afp8", qcfg, {}, [], True, "0.5.9") is False
