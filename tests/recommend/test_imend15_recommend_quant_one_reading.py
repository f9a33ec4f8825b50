"""imend15: recommend takes the checkpoint's quantization facts (launch.model_quant_schemes, launch.model_kv_cache_fp8)
from the one reading of the model that the gate's preflight makes (preflight.read_model -> preflight.model_launch ->
gate_preflight.checkpoint_quant_facts, which gate_preflight.model_file_facts returns to `stackcheck gate`), not from a
second call of its own. The launch facts recommend states and those the gate derives for the same checkpoint agree,
for a compressed-tensors W4A16, a Quark MXFP4 and a ModelOpt FP8 (FP8 KV cache) config: this test's own minimal
files, in the shape of those exports. The facts are the case h200-newest (SGLang 0.5.23)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json
from gate_cli import LLAMA3

__all__ = ["scrubbed_environ"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "h200-newest" / "facts.json"
BASE: dict[str, Any] = {**LLAMA3, "num_hidden_layers": 4, "vocab_size": 32000, "torch_dtype": "bfloat16"}
W4 = {"type": "int", "num_bits": 4, "strategy": "group", "group_size": 128, "symmetric": True, "dynamic": False}
_MX = {"qscheme": "per_group", "group_size": 32, "scale_format": "e8m0", "symmetric": True, "ch_axis": None}
QUARK_MX = {"weight": {"dtype": "fp4", "is_dynamic": False, **_MX}, "input_tensors": {"dtype": "fp4",
            "is_dynamic": True, **_MX}, "output_tensors": None, "bias": None}  # fmt: skip
CONFIGS: dict[str, dict[str, Any]] = {
    "ct-w4a16": {"quant_method": "compressed-tensors", "format": "pack-quantized",
                 "config_groups": {"group_0": {"targets": ["Linear"], "weights": W4}}},
    "quark-mxfp4": {"quant_method": "quark", "global_quant_config": QUARK_MX, "layer_quant_config": {},
                    "layer_type_quant_config": {}, "exclude": ["lm_head"]},
    "modelopt-fp8": {"quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"},
}  # fmt: skip
#: what each reading gives on 0.5.23 (so that the agreement below is no agreement on nothing)
EXPECTED = {
    "ct-w4a16": {"model_quant_schemes": ["wna16"], "model_kv_cache_fp8": False},
    "quark-mxfp4": {"model_quant_schemes": ["quark-mxfp4"]},
    "modelopt-fp8": {"model_kv_cache_fp8": True},
}
KEYS = ("model_quant_schemes", "model_kv_cache_fp8")


def _model(tmp_path: Path, name: str) -> Path:
    model = tmp_path / name
    model.mkdir()
    (model / "config.json").write_text(json.dumps({**BASE, "quantization_config": CONFIGS[name]}))
    return model


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_recommend_states_the_quant_facts_the_gate_derives(tmp_path: Path, name: str) -> None:
    model = _model(tmp_path, name)
    rec = stackcheck_json("recommend", "--facts", str(FACTS), "--model-path", str(model), "--no-plan", "--format",
                          "json")  # fmt: skip
    gate = stackcheck_json("gate", "--facts", str(FACTS), "--cwd", str(tmp_path), "--dry-run", "--format", "json",
                           "--", "python", "-m", "sglang.launch_server", "--model-path", str(model))  # fmt: skip
    stated = {k: v for k, v in rec["launch"].items() if k in KEYS}
    derived = {k: v for k, v in gate["derived"]["launch"].items() if k in KEYS}
    assert stated == derived == EXPECTED[name], (stated, derived)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_the_model_facts_come_from_the_preflights_reading(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """recommend's model facts make no call of their own to preflight.model.quant_scheme_facts: the preflight's
    reader (read_model) is the one reading, so a checkpoint reading changed there is recommend's too."""
    from stackcheck.commands import recommend
    from stackcheck.knowledge.loader import load
    from stackcheck.launch.preflight import model as preflight_model

    calls: list[str] = []
    real = preflight_model.quant_scheme_facts

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(preflight_model, "quant_scheme_facts", counted)
    mdata = load([]).preflight["model"]
    out, _where, _config = recommend.model_facts(str(_model(tmp_path, name)), mdata, "0.5.23")
    assert {k: v for k, v in out.items() if k in KEYS} == EXPECTED[name]
    assert calls == [name]  # (fails before: two readings, recommend's own call and read_model's)
