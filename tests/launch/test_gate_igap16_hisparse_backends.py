"""--enable-hisparse with a given DSA backend outside HiSparse's list for the KV cache on CUDA (launch.json
hisparse-dsa-backend-bf16-kv and hisparse-dsa-backend-fp8-kv, SGLang 0.5.14-0.5.23: arg_groups/hisparse_hook.py
HISPARSE_CUDA_DSA_BACKENDS_BY_DTYPE and validate_hisparse_dsa_backend, 0.5.23:18-21, :44-61). The KV cache is the one
given, or SGLang's default for a DSA model (fp8_e4m3 on major >= 10, bfloat16 below). The configs are the test
helpers' DeepSeek V3.2 shape. On the parent the refusal tests fail (the launches were allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, LLAMA3, gate_checkpoint, reason_status

BF16 = "refusal hisparse-dsa-backend-bf16-kv"
FP8 = "refusal hisparse-dsa-backend-fp8-kv"
ON = ("--enable-hisparse", "--disable-radix-cache")


@pytest.mark.parametrize(
    ("release", "cc", "flags", "rule"),
    [
        ("0.5.23", "9.0", [*ON, "--dsa-decode-backend", "fa3"], BF16),  # bfloat16 by default on Hopper
        ("0.5.14", "10.0", [*ON, "--dsa-prefill-backend", "flashmla_kv", "--kv-cache-dtype", "bfloat16"], BF16),
        ("0.5.23", "10.0", [*ON, "--dsa-decode-backend", "trtllm"], FP8),  # FP8 by default on Blackwell
        ("0.5.17", "9.0", [*ON, "--dsa-prefill-backend", "flashinfer_sparse_mla", "--kv-cache-dtype", "fp8_e4m3"],
         FP8),  # listed from 0.5.18
    ],
)  # fmt: skip
def test_refused(tmp_path: Path, release: str, cc: str, flags: list[str], rule: str) -> None:
    # fails on the parent: allowed; SGLang raises ValueError while it reads its arguments
    doc = gate_checkpoint(tmp_path, release, cc, DEEPSEEK_V32, *flags)
    assert reason_status(doc).get(rule) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r.get("feature") == rule)["reasons"][0]
    assert "flashmla" in reason["required"] and "hisparse_hook.py" in reason["source"][0]["title"], reason


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.23", "9.0", DEEPSEEK_V32, [*ON, "--dsa-decode-backend", "flashmla_sparse"]),
        ("0.5.23", "10.0", DEEPSEEK_V32, [*ON, "--dsa-decode-backend", "flashinfer_sparse_mla"]),
        ("0.5.18", "10.0", DEEPSEEK_V32, [*ON, "--dsa-prefill-backend", "flashmla_kv"]),
        ("0.5.23", "10.0", DEEPSEEK_V32, list(ON)),  # SGLang fills both sides from HiSparse's own default
        ("0.5.23", "10.0", DEEPSEEK_V32, ["--dsa-decode-backend", "trtllm"]),  # no HiSparse
        ("0.5.13", "9.0", DEEPSEEK_V32, [*ON, "--dsa-decode-backend", "fa3"]),  # no backend list before 0.5.14
        ("0.5.23", "9.0", LLAMA3, [*ON, "--dsa-decode-backend", "fa3"]),  # no DSA model: not this check
    ],
)
def test_not_refused_so(tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]) -> None:
    status = reason_status(gate_checkpoint(tmp_path, release, cc, config, *flags))
    assert BF16 not in status and FP8 not in status, status
