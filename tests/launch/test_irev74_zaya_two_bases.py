"""irev74 (review of the merge of igap55 / irev73 / ifc56 in refusal rope-theta-file-default): for ZAYA1 a top-level
rope_theta was read as the model's base whatever config.json states inside rope_parameters / rope_scaling. zaya.py
serves the top-level base to every layer (0.5.23 :959); transformers 5.19.0's ZayaConfig keeps the dict config.json
gives (its __post_init__ fills per-layer-type defaults only where it gives none), from which transformers' own model
reads each layer's base. A config.json stating two different bases is not read as either: unknown, not allowed."""

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


def _reason(tmp_path: Path, config: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    model = model_dir(tmp_path, "m", config)
    facts = release_box(tmp_path, "0.5.23", "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    doc = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
    return doc["decision"], next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize(
    "config",
    [
        {**ZAYA, "rope_theta": 1000000.0, "rope_parameters": {"hybrid": {"rope_theta": 5000000.0},
                                                               "hybrid_sliding": {"rope_theta": 10000.0}}},
        {**ZAYA, "rope_theta": 1000000, "rope_parameters": {"rope_type": "default", "rope_theta": 5000000}},
        {**ZAYA, "rope_theta": 1000000.0, "rope_scaling": {"rope_type": "yarn", "rope_theta": 10**400}},
        {**ZAYA, "rope_theta": 1000000.0, "rope_parameters": {"rope_theta": "5e6"}},
    ],
)  # fmt: skip
def test_a_top_level_base_beside_another_in_the_rope_dict_is_unknown(tmp_path: Path, config: dict[str, Any]) -> None:
    # fails before: no reason (allowed: the top-level base read as the model's)
    decision, reason = _reason(tmp_path, config)
    assert reason is not None and reason["status"] == "unknown" and decision != "allow", json.dumps(reason)
    assert "at the top of config.json" in json.dumps(reason)


@pytest.mark.parametrize(
    "config",
    [
        {**ZAYA, "rope_theta": 5000000.0},
        {**ZAYA, "rope_theta": 1000000.0, "rope_parameters": {"rope_type": "default", "rope_theta": 1000000}},
        {**ZAYA, "rope_theta": 1000000.0, "rope_parameters": {"hybrid": {"rope_theta": 1e6, "rope_type": "default"}}},
        {**ZAYA, "rope_theta": 1000000.0, "rope_parameters": {"rope_type": "default"}},
    ],
)
def test_one_base_at_the_top_is_allowed_as_before(tmp_path: Path, config: dict[str, Any]) -> None:
    assert _reason(tmp_path, config)[1] is None
