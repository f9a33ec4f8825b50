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
from gate_cli import DEEPSEEK_R1, QWEN3_MOE, gate_tp8, release_box

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


# rows 8-10: flashmla / triton decoding a DeepSeek MLA model under --dcp-size. Neither is in
# FORWARD_ABSORB_CORE_ATTENTION_BACKENDS (0.5.15-0.5.23), so forward_absorb_core decodes in the branch that sets no
# lse; the DCP correction after it views attn_output (flashmla's (o, lse) tuple: AttributeError) and reads lse
# (triton: UnboundLocalError). SGLang's own MLA pick: fa3 on Hopper, flashinfer / trtllm_mla on SM100, else triton.
UNABSORBED = "refusal mla-dcp-unabsorbed-decode-no-lse"
FA3 = "refusal mla-dcp-fa3-decode-no-lse"


def _dsr1(tmp_path: Path, release: str, cc: str, dcp: str, *flags: str) -> dict[str, Any]:
    model = tmp_path / "dsr1"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text(json.dumps(DEEPSEEK_R1))
    return gate_tp8(release_box(tmp_path, release, cc), model, "--dcp-size", dcp, *flags)


def _statuses(doc: dict[str, Any]) -> dict[str, str]:
    return {str(r.get("feature")): str(r.get("status")) for r in doc.get("reasons") or []}


def _message(doc: dict[str, Any], feature: str) -> str:
    return json.dumps([r for r in doc.get("reasons") or [] if r.get("feature") == feature])


@pytest.mark.parametrize(
    ("release", "cc", "flags", "error"),
    [
        ("0.5.16", "9.0", ("--decode-attention-backend", "flashmla"), "'tuple' object has no attribute 'view'"),  # 8
        ("0.5.20", "10.0", ("--decode-attention-backend", "triton"), "UnboundLocalError"),  # row 9
        ("0.5.15", "9.0", ("--decode-attention-backend", "flashmla"), "AttributeError"),  # row 10
        ("0.5.23", "9.0", ("--attention-backend", "triton"), "UnboundLocalError"),
        ("0.5.23", "10.0", ("--attention-backend", "flashmla"), "AttributeError"),
        ("0.5.19", "9.0", ("--prefill-attention-backend", "triton", "--decode-attention-backend", "triton"), "Unbound"),
    ],
)
def test_flashmla_or_triton_decode_under_dcp_is_refused(
    tmp_path: Path, release: str, cc: str, flags: tuple[str, ...], error: str
) -> None:
    doc = _dsr1(tmp_path, release, cc, "2", *flags)
    assert doc["decision"] == "refuse"
    assert _statuses(doc).get(UNABSORBED) == "blocked", doc["reasons"]
    assert error in _message(doc, UNABSORBED)


@pytest.mark.parametrize(
    ("release", "cc", "dcp", "flags"),
    [
        ("0.5.21", "9.0", "2", ("--attention-backend", "flashinfer")),  # row 7: absorbed, returns the LSE
        ("0.5.16", "9.0", "2", ("--prefill-attention-backend", "flashmla", "--decode-attention-backend", "flashinfer")),
        ("0.5.20", "10.0", "2", ("--attention-backend", "triton", "--decode-attention-backend", "flashinfer")),
        ("0.5.23", "9.0", "1", ("--decode-attention-backend", "flashmla")),  # no DCP
        ("0.5.20", "10.0", "2", ()),  # SGLang's pick on SM100: flashinfer, or trtllm_mla by the DeepSeek override
        ("0.5.23", "9.0", "2", ()),  # SGLang's pick on Hopper: fa3 (its own rule)
        ("0.5.20", "9.0", "2", ("--prefill-attention-backend", "triton")),  # the decode side on Hopper's pick
    ],
)
def test_an_absorbed_decode_or_no_dcp_is_not_this_rule(
    tmp_path: Path, release: str, cc: str, dcp: str, flags: tuple[str, ...]
) -> None:
    assert UNABSORBED not in _statuses(_dsr1(tmp_path, release, cc, dcp, *flags))


@pytest.mark.parametrize("release", ["0.5.20", "0.5.23"])
def test_sglangs_own_pick_under_dcp_on_sm100_is_still_allowed(tmp_path: Path, release: str) -> None:
    doc = _dsr1(tmp_path, release, "10.0", "2")
    assert doc["decision"] == "allow", doc["reasons"]


@pytest.mark.parametrize(("release", "cc"), [("0.5.16", "8.0"), ("0.5.23", "8.9"), ("0.5.20", "12.0")])
def test_sglangs_own_pick_elsewhere_is_triton_and_not_allowed(tmp_path: Path, release: str, cc: str) -> None:
    doc = _dsr1(tmp_path, release, cc, "2")
    assert doc["decision"] == "refuse"
    assert _statuses(doc).get(UNABSORBED) == "unknown", doc["reasons"]


def test_the_fa3_refusal_no_longer_advises_flashmla(tmp_path: Path) -> None:
    doc = _dsr1(tmp_path, "0.5.21", "9.0", "2", "--attention-backend", "fa3")
    assert _statuses(doc).get(FA3) == "blocked"
    said = [str(x.get("message")) for r in doc["reasons"] if r.get("feature") == FA3 for x in r.get("reasons") or []]
    assert said and all("Give --attention-backend flashinfer, or --dcp-size 1" in m for m in said), said
    assert not any("flashmla" in m.split("Give ")[-1] for m in said), said


# Beside the rows: SGLang never picks cutlass_mla by itself (no release 0.5.1-0.5.23 assigns or returns it), so with
# no attention flag mla-dcp-decode-no-lse's 0.5.19 entry (cutlass_mla only) no longer makes the launch unknown, and
# each DeepSeek R1 launch under DCP with SGLang's own pick names one mla-dcp-* cause at most.
@pytest.mark.parametrize(
    ("release", "cc", "cause"),
    [
        ("0.5.19", "10.0", None),  # trtllm_mla (DeepSeek's override on SM100) decodes with DCP from 0.5.19
        ("0.5.15", "10.0", "refusal mla-dcp-decode-no-lse"),  # trtllm_mla without DCP code before 0.5.19
        ("0.5.19", "9.0", FA3),
        ("0.5.15", "8.0", UNABSORBED),
        ("0.5.19", "12.0", UNABSORBED),
    ],
)
def test_sglangs_own_pick_under_dcp_names_one_cause(tmp_path: Path, release: str, cc: str, cause: str | None) -> None:
    doc = _dsr1(tmp_path, release, cc, "2")
    named = [f for f, s in _statuses(doc).items() if f.startswith("refusal mla-dcp-") and s != "ok"]
    assert named == ([cause] if cause else []), doc["reasons"]
    assert doc["decision"] == ("refuse" if cause else "allow"), doc["reasons"]
