"""DeepEP v2's MoE-method rules on a W4AFP8 or Quark launch whose config.json was not read (no file in the model
directory): whether the model has routed experts decides them, so the verdict is unknown and the gate fails closed;
on a dense model they say nothing (launch/refusals.py _dense_or_not_read, shared by the two)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_tp8, model_dir, reason_status, release_box

V2 = ("--moe-a2a-backend", "deepep_v2", "--ep", "8")
W4AFP8 = "refusal deepep-v2-w4afp8-moe"
QUARK = "refusal deepep-v2-quark-moe-method"


@pytest.mark.parametrize(
    ("release", "method", "rule"),
    [("0.5.22", "w4afp8", W4AFP8), ("0.5.23", "w4afp8", W4AFP8), ("0.5.20", "quark", QUARK)],
)
def test_experts_not_read_is_unknown(tmp_path: Path, release: str, method: str, rule: str) -> None:
    doc = gate_tp8(
        release_box(tmp_path, release, "10.0"), model_dir(tmp_path, "m", None), *V2, "--quantization", method
    )
    assert doc["decision"] == "refuse"  # fails closed without --allow-unknown
    assert reason_status(doc).get(rule, ("",))[0] == "unknown", reason_status(doc)


@pytest.mark.parametrize(("release", "method", "rule"), [("0.5.22", "w4afp8", W4AFP8), ("0.5.20", "quark", QUARK)])
def test_a_dense_model_is_not_the_rule(tmp_path: Path, release: str, method: str, rule: str) -> None:
    doc = gate_tp8(
        release_box(tmp_path, release, "10.0"), model_dir(tmp_path, "m", LLAMA3), *V2, "--quantization", method
    )
    assert rule not in reason_status(doc), reason_status(doc)
