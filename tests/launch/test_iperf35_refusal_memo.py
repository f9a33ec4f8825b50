"""iperf35 (issue 21): refusal_problems reads the checkpoint's MoE and linear methods (launch_values' fp8_config_moe,
mxfp8_moe, the Quark and compressed-tensors ones) once per launch, not once per rule (~120 rules a
launch, ten readings each); the values every rule sees are those launch_values gives without the memo (the
reference)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from gate_cli import LAUNCH, LLAMA3, QWEN3_MOE

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate, refusals

MAPPING = load([], env={}).launch


def _ct_fp8(model: dict[str, Any], activations: bool) -> dict[str, Any]:
    weights = {"num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True}
    acts = {"num_bits": 8, "type": "float", "strategy": "token", "dynamic": True} if activations else None
    group = {"targets": ["Linear"], "weights": weights, "input_activations": acts}
    qc = {"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"g": group}}
    return {**model, "quantization_config": qc}


def _fp8_block(model: dict[str, Any]) -> dict[str, Any]:
    qc = {"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
    return {**model, "quantization_config": qc}


MODELS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "unread": {"model": None},
    "llama3": {"model": LLAMA3},
    "moe": {"model": QWEN3_MOE},
    "moe ct w8a8": {"model": _ct_fp8(QWEN3_MOE, True)},
    "moe ct w8a16": {"model": _ct_fp8(QWEN3_MOE, False)},
    "moe fp8 block": {"model": _fp8_block(QWEN3_MOE)},
}
FLAGS = {
    "plain": [],
    "fp8": ["--quantization", "fp8"],
    "deepep": ["--moe-a2a-backend", "deepep", "--enable-dp-attention", "--dp-size", "8"],
    "ct": ["--quantization", "compressed-tensors", "--fp8-gemm-backend", "cutlass"],
}


def _shape(value: Any) -> Any:
    """A value as data, to compare: the judged and auto values are objects of their own (no __eq__)."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_shape(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return ("set", type(value).__name__, sorted(map(repr, value)))
    if hasattr(value, "__dict__") and not callable(value):
        return (type(value).__name__, _shape(vars(value)))
    if hasattr(value, "__slots__"):
        return (type(value).__name__, [_shape(getattr(value, s, None)) for s in value.__slots__])
    if value is refusals._UNKNOWN:
        return "unknown"
    return value


def _entries(release: str) -> list[Mapping[str, Any]]:
    out = []
    for rule in MAPPING["refusals"]["rules"]:
        entry = refusals._for_release(rule.get("releases"), release)
        if entry is not None:
            out.append(entry)
    return out


@pytest.mark.parametrize("release", ["0.5.5", "0.5.13", "0.5.22", "0.5.23"])
@pytest.mark.parametrize("model", list(MODELS))
@pytest.mark.parametrize("flags", list(FLAGS))
def test_values_with_the_memo_are_the_references(release: str, model: str, flags: str) -> None:
    d = gate.derive([*LAUNCH, "--model-path", "m", "--tp", "8", *FLAGS[flags]], MAPPING, {})
    models = MODELS[model]
    memo: dict[tuple[bool, ...], dict[str, Any]] = {}
    entries = _entries(release)
    assert entries
    for entry in entries:
        for after in (True, False):
            kw: dict[str, Any] = {"majors": {9}, "models": models, "after_equal_split": after, "gpu_sm": 90}
            fast = refusals.launch_values(d, MAPPING, release, entry, memo=memo, **kw)
            reference = refusals.launch_values(d, MAPPING, release, entry, **kw)
            assert list(fast) == list(reference)  # (the same facts, in the same order)
            assert {k: _shape(v) for k, v in fast.items()} == {k: _shape(v) for k, v in reference.items()}


def test_the_checkpoints_methods_are_read_once_per_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    # fails before: _ct_moe ran four times for each rule judged (366 calls for this launch)
    calls = []
    real = refusals._ct_moe

    def counted(*args: Any, **kw: Any) -> Any:
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(refusals, "_ct_moe", counted)
    d = gate.derive([*LAUNCH, "--model-path", "m", "--tp", "8", *FLAGS["ct"]], MAPPING, {})
    models = {"model": _ct_fp8(QWEN3_MOE, False)}
    problems = refusals.refusal_problems(d, MAPPING, "0.5.23", {9}, "Qwen3MoeForCausalLM", models, gpu_sm=90)
    assert isinstance(problems, list)
    assert 0 < len(calls) <= 8  # (four readings per memo key: after the equal split or not, backend auto or not)
