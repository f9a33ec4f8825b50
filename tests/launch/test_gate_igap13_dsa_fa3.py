"""igap13: --nsa-/--dsa-prefill-backend and decode-backend fa3 run FlashAttention-3 (flash_attn_with_kvcache with the
MLA query as qv) from sgl-kernel (0.5.3-0.5.10) or SGLang's FA3 wrapper (0.5.11-0.5.23), which has kernels for majors
8 and 9 only: the wrapper raises NotImplementedError elsewhere (flash_attention_v3.py 0.5.23:84-99, :137-140) and
sgl-kernel's flash_ops carries sm_80/sm_86/sm_90a code only. The gate mapped the fa3 choice to no feature, so fa3 on
Blackwell passed (a false pass). Feature attention-dsa-fa3. On the parent (1dd622a) 4 of these fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_tp8, model_dir, release_box


def _fa3(tmp_path: Path, release: str, cc: str, *flags: str) -> tuple[str, dict[str, str]]:
    doc: dict[str, Any] = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", dict(LLAMA3)), *flags)
    reasons = [r for r in doc.get("reasons") or [] if r.get("feature") == "attention-dsa-fa3"]
    rules = {str(x.get("rule")): str(x.get("result")) for r in reasons for x in r.get("reasons") or []}
    return str(doc["decision"]), rules


@pytest.mark.parametrize(
    ("release", "cc", "flag"),
    [
        ("0.5.23", "12.0", "--dsa-decode-backend"),
        ("0.5.23", "10.0", "--dsa-prefill-backend"),
        ("0.5.9", "10.0", "--nsa-decode-backend"),
    ],
)
def test_dsa_fa3_off_majors_8_and_9_is_refused(tmp_path: Path, release: str, cc: str, flag: str) -> None:
    decision, rules = _fa3(tmp_path, release, cc, flag, "fa3")
    assert decision == "refuse"
    assert rules.get("dsa-fa3-majors") == "fail"


def test_dsa_fa3_on_ampere_is_unknown(tmp_path: Path) -> None:
    decision, rules = _fa3(tmp_path, "0.5.23", "8.0", "--dsa-decode-backend", "fa3")
    assert decision == "refuse"
    assert rules.get("dsa-fa3-ampere") == "unknown"


def test_dsa_fa3_on_hopper_is_allowed(tmp_path: Path) -> None:
    decision, rules = _fa3(tmp_path, "0.5.23", "9.0", "--dsa-decode-backend", "fa3")
    assert decision == "allow"
    assert all(v == "ok" for v in rules.values()), rules
