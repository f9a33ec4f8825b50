"""igap53: SGLang 0.5.10-0.5.23 beside the transformers 5 they pin (check rule transformers-5-rope-theta stops at
<0.5.10). exaone4.py and exaone_moe.py still take the rotary base as getattr(config, "rope_theta", 1000000), and
transformers 5's Exaone4Config / ExaoneMoeConfig move config.json's rope_theta into rope_parameters (no attribute
left): a checkpoint whose base is not 1000000 is served with 1000000, wrong output and no error. The gate allowed it.
Model files that read rope_parameters first (llama.py) or whose config sets rope_theta itself are not judged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULE = "refusal rope-theta-file-default"
EXAONE4: dict[str, Any] = {
    "architectures": ["Exaone4ForCausalLM"], "model_type": "exaone4", "hidden_size": 5120,
    "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip


def _gate(tmp_path: Path, release: str, config: dict[str, Any]) -> dict[str, Any]:
    model = model_dir(tmp_path, "m", config)
    facts = release_box(tmp_path, release, "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model)]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _refusal(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize("release", ["0.5.10", "0.5.14", "0.5.19", "0.5.23"])
@pytest.mark.parametrize(
    "config",
    [
        {**EXAONE4, "rope_theta": 500000.0},
        {**EXAONE4, "rope_parameters": {"rope_type": "default", "rope_theta": 8000000.0}},
        {**EXAONE4, "architectures": ["ExaoneMoEForCausalLM"], "model_type": "exaone_moe", "rope_theta": 10000},
    ],
)
def test_a_base_the_file_does_not_default_to_is_refused(tmp_path: Path, release: str, config: dict[str, Any]) -> None:
    # fails on the parent: allowed (no rule past 0.5.9)
    doc = _gate(tmp_path, release, config)
    reason = _refusal(doc)
    assert doc["decision"] == "refuse" and reason is not None and reason["status"] == "blocked", json.dumps(reason)
    assert "1000000" in reason["reasons"][0]["message"]


@pytest.mark.parametrize(
    ("release", "config"),
    [
        ("0.5.23", {**EXAONE4, "rope_theta": 1000000}),  # (the file's default: served right)
        ("0.5.23", {**LLAMA3, "rope_theta": 500000.0}),  # (llama.py reads rope_parameters first)
        ("0.5.9", {**EXAONE4, "rope_theta": 500000.0}),  # (0.5.1-0.5.9: checks.json transformers-5-rope-theta)
    ],
)
def test_the_default_or_another_family_is_not_refused_here(
    tmp_path: Path, release: str, config: dict[str, Any]
) -> None:
    assert _refusal(_gate(tmp_path, release, config)) is None


def test_a_config_without_rope_theta_is_unknown(tmp_path: Path) -> None:
    doc = _gate(tmp_path, "0.5.23", dict(EXAONE4))
    reason = _refusal(doc)
    assert reason is not None and reason["status"] == "unknown" and doc["decision"] != "allow"
