"""The twenty-sixth fact-check sample's false pass (tests/realworld/FACTCHECK.md, "Twenty-sixth sample"; row a1 of
bench/factcheck26_drawn.json), read in the real wheels:

- a1: `--moe-a2a-backend deepep_v2` with a BF16 MoE model on an RTX PRO 6000 (12.0), SGLang 0.5.21. SGLang's MoE
  hook resolves an auto --moe-runner-backend to deep_gemm for deepep_v2 and raises for any other runner (sglang 0.5.21
  wheel, arg_groups/moe_hook.py:331-349), so the MoE layers run DeepGEMM's grouped GEMMs exactly as with
  `--moe-runner-backend deep_gemm`, which the gate refused there (deepgemm unknown on SM 12.0) and refuses below SM90
  (refusal moe-runner-deep-gemm-deepgemm-off). deepep_v2 asked for no feature and was allowed on 8.9 and 12.0.

The model config is the test helpers' shape. On the parent 5 of these fail (every deepep_v2 launch was allowed)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_checkpoint, reason_status

V2 = ("--moe-a2a-backend", "deepep_v2", "--ep", "8")
DEEPGEMM_OFF = "refusal moe-runner-deep-gemm-deepgemm-off"


@pytest.mark.parametrize(
    ("release", "cc"),
    [("0.5.19", "8.9"), ("0.5.23", "8.9"), ("0.5.19", "12.0"), ("0.5.22", "8.6")],
)
def test_deepep_v2_resolves_deep_gemm_runner_where_deepgemm_is_off(tmp_path: Path, release: str, cc: str) -> None:
    # fails on the parent: allowed; the first MoE layer calls deep_gemm, which SGLang never imported here
    doc = gate_checkpoint(tmp_path, release, cc, QWEN3_MOE, *V2)
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get(DEEPGEMM_OFF) == ("blocked", "crash")


def test_deepep_v2_on_sm120_needs_deepgemm_as_the_runner_flag_does(tmp_path: Path) -> None:
    # fails on the parent: allowed, while --moe-runner-backend deep_gemm on the same box was refused (deepgemm unknown)
    doc = gate_checkpoint(tmp_path, "0.5.21", "12.0", QWEN3_MOE, *V2)
    flag = gate_checkpoint(tmp_path, "0.5.21", "12.0", QWEN3_MOE, "--moe-runner-backend", "deep_gemm", "--ep", "8")
    assert flag["decision"] == "refuse"
    assert doc["decision"] == "refuse"
    assert reason_status(doc).get("deepgemm") == reason_status(flag).get("deepgemm")
    assert reason_status(doc)["deepgemm"][0] == "unknown"


@pytest.mark.parametrize("cc", ["9.0", "10.0"])
def test_deepep_v2_where_deepgemm_serves_not_this_refusal(tmp_path: Path, cc: str) -> None:
    doc = gate_checkpoint(tmp_path, "0.5.23", cc, QWEN3_MOE, *V2)
    assert DEEPGEMM_OFF not in reason_status(doc)
    assert "deepgemm" not in reason_status(doc)
