"""GLM DSA (GlmMoeDsaForCausalLM: GLM-5) with an FP8 KV cache on a GPU of major 12, and the flashinfer_sparse_mla DSA
backend elsewhere: SGLang 0.5.17-0.5.23's DSA overrides give that GLM case flashinfer_sparse_mla for the sides not
given and skip their tilelang/KV checks, and the DSA backend's constructor validates the pair
(sglang/kernels/ops/attention/flash_mla_sm120.py _validate_flashinfer_sparse_mla_backend, 0.5.23:678-713): launch.json
dsa-glm-sm12-fp8-backends (only flashinfer_sparse_mla, and from 0.5.22 triton_sparse_mla) and
dsa-flashinfer-sparse-mla-glm-sm12-fp8-only. The configs are the test helpers' DeepSeek V3.2 shape and a GLM DSA one
in the same shape written here. On the parent the refusal tests fail (the launches were allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, gate_checkpoint, reason_status

# a GLM DSA config in the DeepSeek V3.2 shape (index_topk: SGLang runs it as DSA), written for these tests
GLM5: dict[str, Any] = {**DEEPSEEK_V32, "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa"}

GLM_RULE = "refusal dsa-glm-sm12-fp8-backends"
ONLY = "refusal dsa-flashinfer-sparse-mla-glm-sm12-fp8-only"


def _status(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    return reason_status(gate_checkpoint(tmp_path, release, cc, config, *flags))


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags", "rule"),
    [
        ("0.5.23", "12.0", GLM5, ["--dsa-prefill-backend", "tilelang"], GLM_RULE),  # FP8 by default on major 12
        ("0.5.19", "12.1", GLM5, ["--dsa-decode-backend", "trtllm", "--kv-cache-dtype", "fp8_e4m3"], GLM_RULE),
        ("0.5.21", "12.0", GLM5, ["--dsa-prefill-backend", "triton_sparse_mla"], GLM_RULE),  # listed from 0.5.22
        ("0.5.23", "10.0", GLM5, ["--dsa-decode-backend", "flashinfer_sparse_mla"], ONLY),
        ("0.5.17", "12.0", DEEPSEEK_V32, ["--dsa-prefill-backend", "flashinfer_sparse_mla"], ONLY),
        ("0.5.22", "12.0", GLM5, ["--dsa-prefill-backend", "flashinfer_sparse_mla", "--kv-cache-dtype", "bfloat16"],
         ONLY),
    ],
)  # fmt: skip
def test_refused(tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str], rule: str) -> None:
    # fails on the parent: allowed; SGLang's DSA backend raises ValueError as it is built
    status = _status(tmp_path, release, cc, config, *flags)
    assert status.get(rule) == ("blocked", "crash"), status


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.23", "12.0", GLM5, []),  # SGLang's own pick: flashinfer_sparse_mla for both
        ("0.5.23", "12.0", GLM5, ["--dsa-prefill-backend", "triton_sparse_mla"]),
        ("0.5.17", "12.0", GLM5, ["--dsa-decode-backend", "flashinfer_sparse_mla"]),
        ("0.5.23", "12.0", GLM5, ["--dsa-prefill-backend", "tilelang", "--kv-cache-dtype", "bfloat16"]),
        ("0.5.23", "10.0", GLM5, ["--dsa-prefill-backend", "trtllm"]),  # not major 12: the GLM case does not hold
        ("0.5.16", "12.0", GLM5, ["--dsa-prefill-backend", "tilelang"]),  # no such validation before 0.5.17
    ],
)
def test_not_refused_so(tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]) -> None:
    status = _status(tmp_path, release, cc, config, *flags)
    assert GLM_RULE not in status and ONLY not in status, status
