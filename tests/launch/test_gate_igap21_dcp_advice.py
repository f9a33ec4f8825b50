"""igap21, item 3 of the thirty-second sample's leftovers (tests/realworld/FACTCHECK.md): the gate's advice for a
DeepSeek launch with --dcp-size > 1, followed, through the gate again.

With split attention flags given, the advice used to say 'add --attention-backend fa3', which changes
nothing SGLang runs (the split flags win over --attention-backend: 0.5.23 arg_groups/model_override_base.py:138-152,
attention_backends_of) and, with the split flags dropped, is itself refused under DCP (refusal
mla-dcp-fa3-decode-no-lse). The advice now drops the split flags with the backend it sets, and judges that line. On
the parent 10 of these cases fail."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_V32, cli_json, model_dir, release_box
from launch.test_gate_advice_models import advised


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


DCP_SUBJECTS = ("refusal dsa-dcp-", "refusal mla-dcp-", "attention-")


def _dcp_refusals(doc: dict[str, Any]) -> list[str]:
    reasons = doc.get("reasons") or []
    assert isinstance(reasons, list)
    return [str(r["feature"]) for r in reasons if str(r["feature"]).startswith(DCP_SUBJECTS) and r["status"] != "ok"]


@pytest.mark.parametrize("release", ["0.5.15", "0.5.20", "0.5.22", "0.5.23"])
@pytest.mark.parametrize("cc", ["9.0", "10.0"])
@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--prefill-attention-backend", "dsa", "--decode-attention-backend", "flashmla"),
        ("--decode-attention-backend", "fa3"),
        ("--attention-backend", "fa3"),
    ],
)
def test_the_advice_for_a_dcp_launch_never_leads_to_a_refused_line(
    tmp_path: Path, release: str, cc: str, flags: tuple[str, ...]
) -> None:
    facts, model = release_box(tmp_path, release, cc), model_dir(tmp_path, "m", DEEPSEEK_V32)
    command = ["--model-path", str(model), "--tp", "8", "--dcp-size", "2", *flags]
    doc = gate_tp8_args(facts, command)
    advice = [str(a) for a in doc.get("advice") or []]
    changes = [a for a in advice if a.startswith(("recommend: add --", "recommend: change --", "recommend: drop --"))]
    if not any("attention-backend" in a for a in changes):
        return  # no attention line advised
    line = advised(command, changes)
    assert _dcp_refusals(gate_tp8_args(facts, line)) == [], (changes, line)


def gate_tp8_args(facts: Path, args: list[str]) -> dict[str, Any]:
    line = ["python3", "-m", "sglang.launch_server", *args]
    return cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])[1]
