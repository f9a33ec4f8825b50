"""The tilelang DSA backend with an FP8 KV cache on CUDA before SGLang checked it (launch.json refusal
dsa-tilelang-fp8-kv-cuda-kernel, 0.5.11-0.5.16): those releases keep a tilelang side the user gives, default a DSA
model's KV cache to fp8_e4m3 on a GPU of major >= 10, and hand the FP8 pool to tilelang_sparse_fwd, whose CUDA branch
builds the bfloat16-only kernel (0.5.16 sglang/kernels/ops/attention/dsa/tilelang_kernel.py:1317-1387; 0.5.17's
check says the launch crashed at decode CUDA graph capture). The configs are the test helpers' DeepSeek V3.2 and
Llama 3 shapes. On the parent the refusal tests fail (those launches were allowed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import DEEPSEEK_V32, LLAMA3, gate_checkpoint, reason_status

KERNEL = "refusal dsa-tilelang-fp8-kv-cuda-kernel"
CUDA = "refusal dsa-tilelang-fp8-kv-cuda"


def _doc(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, Any]:
    return gate_checkpoint(tmp_path, release, cc, config, *flags)


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.16", "10.0", ["--dsa-prefill-backend", "tilelang"]),  # FP8 by default on Blackwell
        ("0.5.15", "9.0", ["--dsa-decode-backend", "tilelang", "--kv-cache-dtype", "fp8_e4m3"]),
        ("0.5.11", "10.0", ["--nsa-decode-backend", "tilelang"]),  # the older spelling
        ("0.5.13", "9.0", ["--dsa-prefill-backend=tilelang", "--dsa-decode-backend=tilelang", "--kv-cache-dtype",
                           "fp8_e4m3"]),
    ],
)  # fmt: skip
def test_refused_as_the_kernel_fails(tmp_path: Path, release: str, cc: str, flags: list[str]) -> None:
    # fails on the parent: allowed
    doc = _doc(tmp_path, release, cc, DEEPSEEK_V32, *flags)
    assert reason_status(doc).get(KERNEL) == ("blocked", "crash"), doc["reasons"]
    reason = next(r for r in doc["reasons"] if r.get("feature") == KERNEL)["reasons"][0]
    assert "kv_cache_dtype" in reason["observed"] and "bfloat16" in reason["required"], reason
    assert any("tilelang_kernel.py" in s["title"] for s in reason["source"]), reason


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags"),
    [
        ("0.5.16", "9.0", DEEPSEEK_V32, ["--dsa-prefill-backend", "tilelang"]),  # bfloat16 KV by default on Hopper
        ("0.5.16", "10.0", DEEPSEEK_V32, ["--dsa-decode-backend", "tilelang", "--kv-cache-dtype", "bfloat16"]),
        ("0.5.16", "10.0", DEEPSEEK_V32, ["--dsa-decode-backend", "trtllm"]),
        ("0.5.16", "10.0", LLAMA3, ["--dsa-decode-backend", "tilelang"]),  # no DSA model: the flag is ignored
        ("0.5.10", "10.0", DEEPSEEK_V32, ["--nsa-decode-backend", "tilelang"]),  # not read: not judged
    ],
)  # fmt: skip
def test_not_refused_so(tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: list[str]) -> None:
    assert KERNEL not in reason_status(_doc(tmp_path, release, cc, config, *flags))


def test_from_0_5_17_the_argument_check_alone(tmp_path: Path) -> None:
    # passes on the parent too: 0.5.17 refuses it while it reads its arguments (igap14's rule), not this one
    status = reason_status(_doc(tmp_path, "0.5.17", "10.0", DEEPSEEK_V32, "--dsa-prefill-backend", "tilelang"))
    assert status.get(CUDA) == ("blocked", "crash") and KERNEL not in status, status
