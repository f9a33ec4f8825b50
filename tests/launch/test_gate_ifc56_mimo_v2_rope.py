"""ifc56 (the fifty-sixth fact-check sample, rows t1 / t3: a MiMoV2FlashForCausalLM config stating rope_theta
5000000 allowed at SGLang 0.5.14 and 0.5.23). igap53's rope-theta-file-default named SGLang's mimo_v2.py "not
judged, and may be affected", yet its rope_theta_lost read False for it, so the gate allowed. transformers 5.8.1
(0.5.14's pin) has no config class for mimo_v2_flash; 5.19.0's fills per-layer-type rope_parameters that mimo_v2.py
hands get_rope as its scaling. Now unknown for mimo_v2.py's architectures; EXAONE 4 and other families unchanged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box

RULE = "refusal rope-theta-file-default"
MIMO: dict[str, Any] = {
    "architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "rope_theta": 5000000,
}  # fmt: skip


def _gate(tmp_path: Path, release: str, config: dict[str, Any]) -> dict[str, Any]:
    model = model_dir(tmp_path, "m", config)
    facts = release_box(tmp_path, release, "9.0")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "2"]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]


def _reason(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in doc.get("reasons") or [] if r.get("feature") == RULE), None)


@pytest.mark.parametrize("release", ["0.5.10", "0.5.14", "0.5.19", "0.5.23"])
@pytest.mark.parametrize(
    "config",
    [MIMO, {**MIMO, "architectures": ["MiMoV2ForCausalLM"], "model_type": "mimo_v2"}, {**MIMO, "rope_theta": 10000}],
)
def test_mimo_v2_is_unknown(tmp_path: Path, release: str, config: dict[str, Any]) -> None:
    # fails before: allowed (rope_theta_lost read False for every architecture but EXAONE 4's)
    doc = _gate(tmp_path, release, config)
    reason = _reason(doc)
    assert reason is not None and reason["status"] == "unknown" and doc["decision"] != "allow", doc["decision"]


def test_before_the_rule_and_other_families_are_unchanged(tmp_path: Path) -> None:
    assert _reason(_gate(tmp_path, "0.5.9", MIMO)) is None  # (the rule's releases start at 0.5.10)
    assert _reason(_gate(tmp_path, "0.5.23", {**LLAMA3, "rope_theta": 500000.0})) is None
