"""igap20 (3): the speculative draft model's own quantization against the GPU.

SGLang builds the draft's ModelConfig with --speculative-draft-model-quantization (else the target's --quantization)
and the draft's own checkpoint, and its model loader applies the same minimum-capability test to the draft's config
class (model_loader/loader.py _get_quantization_config, every model it loads). The gate read only the served
model's quantization: a draft whose checkpoint asks for more than the box has was allowed (24c3e54). Also the
check modelopt-mixed-min-cc now judges a ModelOpt MIXED_PRECISION draft."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_MOE, gate_tp8, release_box

W4A8 = {"quant_algo": "W4A8_AWQ", "group_size": 128}
NVFP4 = {"quant_algo": "NVFP4", "group_size": 16}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _dir(root: Path, name: str, config: dict[str, Any], modelopt: dict[str, Any] | None) -> Path:
    path = root / name
    path.mkdir()
    (path / "config.json").write_text(json.dumps(config))
    if modelopt is not None:
        doc = {"producer": {"name": "modelopt"}, "quantization": modelopt}
        (path / "hf_quant_config.json").write_text(json.dumps(doc))
    return path


def _gate(release: str, cc: str, draft_quant: dict[str, Any] | None, *flags: str) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp())
    target = _dir(root, "target", QWEN3_MOE, None)
    draft = _dir(root, "draft", {**QWEN3_MOE, "architectures": ["Qwen3MoeForCausalLM"]}, draft_quant)
    spec = ("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", str(draft))
    return gate_tp8(release_box(root, release, cc), target, *spec, *flags)


def _draft(doc: dict[str, Any]) -> dict[str, str]:
    """The draft model's problems and preflight checks: rule or check -> status."""
    out = {}
    for r in doc.get("reasons") or []:
        if str(r.get("feature", "")).startswith("draft model "):
            for x in r.get("reasons") or []:
                msg = str(x.get("message") or "")
                rule = msg.split("rule ", 1)[1].split(")", 1)[0] if "rule " in msg else "?"
                out[rule] = str(r.get("status"))
    for c in (doc.get("preflight") or {}).get("checks") or []:
        if str(c.get("subject", "")).startswith("draft model") and c.get("status") != "ok":
            out[str(c.get("check"))] = str(c.get("status"))
    return out


def test_an_fp4_draft_below_modelopt_fp4s_minimum_is_refused() -> None:
    """0.5.12: ModelOptFp4Config asks 100; the draft's NVFP4 checkpoint on an H100 fails as the draft loads."""
    doc = _gate("0.5.12", "9.0", {"quant_algo": "NVFP4", "group_size": 16})
    assert _draft(doc) == {"quant-loader-sm100": "blocked"}, _draft(doc)
    assert doc["decision"] == "refuse"


def test_a_w4afp8_mixed_draft_on_an_a100_is_refused() -> None:
    """No NVFP4 layer: 0.5.23 loads the draft as w4afp8 (90), without a flag or with --quantization w4afp8 (the
    draft inherits it)."""
    quant = {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp.experts.0.w1": W4A8}}
    doc = _gate("0.5.23", "8.0", quant)
    assert _draft(doc) == {"quant-loader-sm90": "blocked"}, _draft(doc)
    assert doc["decision"] == "refuse"
    doc = _gate("0.5.23", "8.0", quant, "--quantization", "w4afp8")
    assert _draft(doc).get("quant-loader-sm90") == "blocked", _draft(doc)


def test_a_mixed_draft_loaded_as_modelopt_mixed_below_100_fails_on_0_5_12() -> None:
    quant = {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp.experts.0.w1": W4A8}}
    root = Path(tempfile.mkdtemp())
    target = _dir(root, "target", QWEN3_MOE, None)
    draft = _dir(root, "draft", {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}, quant)
    spec = ("--speculative-algorithm", "EAGLE", "--speculative-draft-model-path", str(draft))
    doc = gate_tp8(release_box(root, "0.5.12", "9.0"), target, *spec)
    assert _draft(doc).get("modelopt-mixed-min-cc") == "fail", _draft(doc)


@pytest.mark.parametrize(
    ("release", "cc", "quant", "flags"),
    [
        ("0.5.12", "10.0", {"quant_algo": "NVFP4", "group_size": 16}, ()),  # at its minimum
        ("0.5.23", "8.0", {"quant_algo": "NVFP4", "group_size": 16}, ()),  # 80 from 0.5.13
        ("0.5.23", "8.0", None, ()),  # an unquantized draft, no flag
        ("0.5.23", "9.0", {"quant_algo": "FP8"}, ()),  # modelopt_fp8: 89
    ],
)
def test_a_draft_the_gpu_loads_is_not_refused_for_it(
    release: str, cc: str, quant: dict[str, Any] | None, flags: tuple[str, ...]
) -> None:
    assert _draft(_gate(release, cc, quant, *flags)) == {}


def test_the_drafts_flag_is_its_own_else_the_targets() -> None:
    from stackcheck.launch.gate_preflight import draft_quant_flag

    own = "--speculative-draft-model-quantization"
    assert draft_quant_flag([own, "fp8"], None, "w4afp8") == "fp8"
    assert draft_quant_flag([], None, "w4afp8") == "w4afp8"
    # unquant drops the flag only: a quantized draft checkpoint still loads its own method
    assert draft_quant_flag([own, "unquant"], None, "w4afp8") is None
    assert draft_quant_flag([], None, None) is None


def test_unquant_leaves_the_draft_checkpoints_own_method() -> None:
    doc = _gate("0.5.23", "8.6", {"quant_algo": "FP8"}, "--speculative-draft-model-quantization", "unquant")
    assert _draft(doc) == {"quant-loader-sm89": "blocked"}, _draft(doc)


@pytest.mark.parametrize("algorithm", [(), ("--speculative-algorithm", "NGRAM")])
def test_no_draft_loaded_no_draft_judgement(algorithm: tuple[str, ...]) -> None:
    """Without --speculative-algorithm (or with NGRAM) SGLang loads no draft model: its checkpoint asks nothing."""
    root = Path(tempfile.mkdtemp())
    target = _dir(root, "target", QWEN3_MOE, None)
    draft = _dir(root, "draft", QWEN3_MOE, {"quant_algo": "NVFP4", "group_size": 16})
    doc = gate_tp8(release_box(root, "0.5.12", "9.0"), target, *algorithm, "--speculative-draft-model-path", str(draft))
    assert "quant-loader-sm100" not in _draft(doc), _draft(doc)


def test_no_draft_loaded_no_mixed_draft_check() -> None:
    quant = {"quant_algo": "MIXED_PRECISION", "quantized_layers": {"model.layers.0.mlp.experts.0.w1": W4A8}}
    root = Path(tempfile.mkdtemp())
    target = _dir(root, "target", QWEN3_MOE, None)
    draft = _dir(root, "draft", {**QWEN3_MOE, "architectures": ["NemotronHForCausalLM"]}, quant)
    doc = gate_tp8(release_box(root, "0.5.12", "9.0"), target, "--speculative-draft-model-path", str(draft))
    assert _draft(doc) == {}, _draft(doc)
