"""icubin1: the gate judges FlashInfer's trtllm-gen cubins of a launch on B200 facts. `FLASHINFER_NO_DOWNLOAD=1 python
-m sglang.launch_server --attention-backend trtllm_mha` on a box whose cubin cache lacks the FMHA family is refused
(blocked: RuntimeError 'Artifact not found locally' at the first kernel); with flashinfer-cubin of the same release
the cubin rule passes; a launch that sets one of the variables the cubin directory was read with (gate --facts)
leaves the rule unknown, never the facts' answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json

CASES = Path(__file__).resolve().parents[1] / "cases"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--attention-backend", "trtllm_mha"]


def cubin_rule(case: str, *prefix: str) -> tuple[str, dict[str, Any]]:
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--format", "json", "--", *prefix,
                          *LAUNCH)  # fmt: skip
    feature = next(f for f in doc["reasons"] if f["feature"] == "attention-trtllm-mha")
    rule = next((r for r in feature["reasons"] if r.get("rule") == "fmha-cubins"), {"result": "pass"})
    return str(doc["decision"]), rule


def test_offline_box_is_refused() -> None:
    decision, rule = cubin_rule("b200-cubins-offline")
    assert decision == "refuse"
    assert rule["result"] == "fail" and "Artifact not found locally" in rule["message"]


def test_matching_cubin_package_passes_the_rule() -> None:
    assert cubin_rule("b200-cubin-package")[1]["result"] == "pass"


@pytest.mark.parametrize("variable", ["FLASHINFER_NO_DOWNLOAD=1", "FLASHINFER_CUBIN_DIR=/elsewhere", "HOME=/srv"])
def test_launch_env_the_facts_were_not_read_with_is_unknown(variable: str) -> None:
    decision, rule = cubin_rule("b200-cubin-package", "env", variable)
    assert rule["result"] == "unknown" and variable.partition("=")[0] in rule["message"]
    assert decision == "refuse"
