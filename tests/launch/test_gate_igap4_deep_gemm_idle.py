"""--moe-runner-backend deep_gemm where no MoE layer runs it (igap4, item 4): a dense model has no MoE layer, and
SGLang 0.5.4-0.5.11's unquantized MoE method builds a Triton runner whatever the flag (layers/quantization/unquant.py
create_moe_runner: 0.5.4:230-234, 0.5.9:321-330, 0.5.11:368-382). The gate required the deepgemm feature for the
flag whatever the model (refusing a dense model on SM12x, where DeepGEMM crashes or is unknown) and refused a BF16 MoE
model on 0.5.4-0.5.11 with SGLANG_ENABLE_JIT_DEEPGEMM off (refusal moe-runner-deep-gemm-jit-off). The model configs
are written for the tests in the shape of the published ones."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, QWEN3_MOE, cli_json, model_dir, reason_status, release_box

JIT_OFF = "refusal moe-runner-deep-gemm-jit-off"
QWEN3_MOE_FP8: dict[str, Any] = {
    **QWEN3_MOE, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}  # fmt: skip


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, Any], *extra: str, jit: str | None = None) -> Any:
    model = model_dir(tmp_path, str(config["architectures"][0]) + str(len(config)), config)
    env = ["env", f"SGLANG_ENABLE_JIT_DEEPGEMM={jit}"] if jit is not None else []
    line = [*env, "python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8"]
    args = ["gate", "--facts", str(release_box(tmp_path, release, cc)), "--dry-run", "--format", "json", "--"]
    return cli_json([*args, *line, "--moe-runner-backend", "deep_gemm", *extra])[1]


def _deepgemm(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in doc["features"] if f["feature"] == "deepgemm"), None)


@pytest.mark.parametrize("release", ["0.5.11", "0.5.12", "0.5.23"])
def test_dense_model_does_not_need_deepgemm_for_the_runner(tmp_path: Path, release: str) -> None:
    # fails on the parent: refused on SM 12.0 (deepgemm blocked or unknown, needed by the runner flag)
    doc = _gate(tmp_path, release, "12.0", LLAMA3)
    assert doc["decision"] == "allow", doc["reasons"]
    dg = _deepgemm(doc)
    assert dg is not None and dg["kind"] == "default-warn"  # DeepGEMM's own default need: a warning, as without it
    off = _gate(tmp_path, release, "12.0", LLAMA3, jit="0")
    assert off["decision"] == "allow" and _deepgemm(off) is None


@pytest.mark.parametrize("release", ["0.5.4", "0.5.9", "0.5.11"])
def test_bf16_moe_on_0_5_4_to_0_5_11_runs_triton(tmp_path: Path, release: str) -> None:
    # fails on the parent: refused by moe-runner-deep-gemm-jit-off
    doc = _gate(tmp_path, release, "9.0", QWEN3_MOE, jit="0")
    assert JIT_OFF not in reason_status(doc) and _deepgemm(doc) is None


def test_guards_where_deepgemm_runs(tmp_path: Path) -> None:
    # guards (refused on the parent too): an FP8 checkpoint or --quantization on 0.5.11, a BF16 MoE from 0.5.12
    assert reason_status(_gate(tmp_path, "0.5.11", "9.0", QWEN3_MOE_FP8, jit="0")).get(JIT_OFF) == ("blocked", "crash")
    given = _gate(tmp_path, "0.5.11", "9.0", QWEN3_MOE, "--quantization", "fp8", jit="0")
    assert reason_status(given).get(JIT_OFF) == ("blocked", "crash")
    assert reason_status(_gate(tmp_path, "0.5.12", "9.0", QWEN3_MOE, jit="0")).get(JIT_OFF) == ("blocked", "crash")
    sm120 = _gate(tmp_path, "0.5.12", "12.0", QWEN3_MOE)  # the BF16 grouped GEMM from 0.5.12: deepgemm needed
    dg = _deepgemm(sm120)
    assert sm120["decision"] == "refuse" and dg is not None and dg["kind"] == "explicit"
    # 0.5.11 with an all-to-all backend: the DeepEP path reads DeepGEMM's switch, not the runner: the need stays
    a2a = _gate(tmp_path, "0.5.11", "12.0", QWEN3_MOE, "--moe-a2a-backend", "deepep")
    dg = _deepgemm(a2a)
    assert dg is not None and dg["kind"] == "explicit"
