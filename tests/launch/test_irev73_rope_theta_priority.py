"""irev73: the rotary base transformers 5 keeps for EXAONE 4 / K-EXAONE (refusal rope-theta-file-default, igap53) is
the one inside rope_scaling where config.json gives a non-empty rope_scaling (it replaces rope_parameters), else the
one inside rope_parameters, and the top-level rope_theta only where that dict states none (transformers 5.3.0 and
5.19.0 modeling_rope_utils.py convert_rope_params_to_dict: `rope_scaling or self.rope_parameters`, then setdefault
of the top-level value; 5.19.0 reads each per-layer-type dict alike). igap53's reader took the top-level value first:
a config stating 1000000 there and another base inside rope_parameters was allowed, and SGLang 0.5.10-0.5.23 serve
1000000 while the model's base is the other (wrong output, no error)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json, model_dir, release_box

from stackcheck.launch.refusals import _Judged, _rope_theta_lost

RULE = "refusal rope-theta-file-default"
EXAONE4: dict[str, Any] = {
    "architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "hidden_size": 5120,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip
ARCH = "Exaone4ForCausalLM"


def _holds(keys: dict[str, Any]) -> bool | None:
    got = _rope_theta_lost(ARCH, keys)
    return got.holds if isinstance(got, _Judged) else got


@pytest.mark.parametrize(
    "keys",
    [
        # (the top level at the file's default, the dict transformers 5 keeps another base)
        {"rope_theta": 1000000, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}},
        {"rope_theta": 1000000, "rope_scaling": {"rope_type": "llama3", "factor": 16.0, "rope_theta": 500000.0}},
        # (rope_scaling replaces rope_parameters: the base in rope_parameters is not the one kept)
        {"rope_parameters": {"rope_theta": 1000000}, "rope_scaling": {"rope_type": "default", "rope_theta": 20000}},
        # (per layer type, 5.19.0: one type's base lost is enough)
        {
            "rope_theta": 1000000,
            "rope_parameters": {
                "full_attention": {"rope_type": "default", "rope_theta": 1000000},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000},
            },
        },
    ],
)
def test_the_base_transformers_5_keeps_decides(keys: dict[str, Any]) -> None:
    # fails before the fix: False (the top-level 1000000 was read first)
    assert _holds(keys) is True


@pytest.mark.parametrize(
    ("keys", "want"),
    [
        ({"rope_theta": 1000000}, False),
        ({"rope_theta": 500000}, True),
        ({"rope_parameters": {"rope_type": "default", "rope_theta": 1000000}}, False),
        # (a dict without rope_theta takes the top-level value: transformers' setdefault)
        ({"rope_theta": 1000000, "rope_scaling": {"rope_type": "llama3", "factor": 16.0}}, False),
        ({"rope_theta": 250000, "rope_scaling": {"rope_type": "llama3", "factor": 16.0}}, True),
        # (the top level not at the default, the kept dict at it: the model's base is served)
        ({"rope_theta": 500000, "rope_parameters": {"rope_theta": 1000000}}, False),
        ({}, None),
        ({"rope_scaling": {"rope_type": "llama3", "factor": 16.0}}, None),
        ({"rope_parameters": {"rope_theta": "1e6"}}, None),
        ({"rope_scaling": ["not", "a", "dict"], "rope_theta": 1000000}, None),
    ],
)
def test_other_configs(keys: dict[str, Any], want: bool | None) -> None:
    assert _holds(keys) is want


def test_the_gate_refuses_a_top_level_default_over_another_kept_base(tmp_path: Path) -> None:
    # fails before the fix: allowed
    config = {**EXAONE4, "rope_theta": 1000000, "rope_parameters": {"rope_type": "default", "rope_theta": 500000.0}}
    model = model_dir(tmp_path, "m", config)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    reason = next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)
    assert doc["decision"] == "refuse" and reason is not None and reason["status"] == "blocked", json.dumps(reason)


@pytest.mark.parametrize("theta", [10**400, -(10**400)], ids=["1e400", "-1e400"])
def test_a_base_too_large_for_a_float_is_judged_not_an_internal_error(theta: int) -> None:
    # fails before the fix: OverflowError (float(int) and the :g format), the gate's exit 4 'internal error'
    got = _rope_theta_lost(ARCH, {"rope_theta": theta})
    assert isinstance(got, _Judged) and got.holds is True and "digits" in got.text


def test_the_gate_refuses_a_base_too_large_for_a_float(tmp_path: Path) -> None:
    # fails before the fix: exit 4, "internal error: OverflowError"
    model = tmp_path / "m"
    model.mkdir()
    config = json.dumps({k: v for k, v in EXAONE4.items()})[:-1] + ', "rope_theta": 1' + "0" * 400 + "}"
    (model / "config.json").write_text(config)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    code, doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])
    reason = next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)
    assert doc["decision"] == "refuse" and reason is not None and reason["status"] == "blocked", (code, doc)
