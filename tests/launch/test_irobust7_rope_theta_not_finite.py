"""irobust7: ZAYA1's rope-theta rule (igap55, _rope_theta_top_kept) took any float as a number: config.json's
`"rope_theta": NaN` or `Infinity` (json.loads, which the gate and transformers read config.json with, takes both) was
read as a base the config class keeps, and the launch allowed although the rotary base served is no number. Now a
base that is not finite is unknown ("no number"), as a string was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import cli_json, model_dir, release_box

RULE = "refusal rope-theta-file-default"
ZAYA: dict[str, Any] = {
    "architectures": ["ZayaForCausalLM"], "model_type": "zaya", "hidden_size": 2048,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "num_hidden_layers": 80,
}  # fmt: skip


def _reason(tmp_path: Path, config: dict[str, Any]) -> dict[str, Any] | None:
    model = model_dir(tmp_path, "m", config)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_base_that_is_no_finite_number_is_unknown(tmp_path: Path, value: float) -> None:
    # fails before: no reason (allowed: "kept by the config class")
    reason = _reason(tmp_path, {**ZAYA, "rope_theta": value})
    assert reason is not None and reason["status"] == "unknown", json.dumps(reason)


def test_a_finite_base_is_kept_as_before(tmp_path: Path) -> None:
    assert _reason(tmp_path, {**ZAYA, "rope_theta": 5000000.0}) is None
