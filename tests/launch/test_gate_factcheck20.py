"""The twentieth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Twentieth sample"; the rows in
bench/factcheck20_drawn.json), each read in the real sglang wheels:

- a1, a2, a3, a9: --quantization awq / gptq_marlin / moe_wna16 (and awq_marlin, gptq, auto-round, the same
  loader path) on a checkpoint with no quantization: the method's config class names its own config file, none is
  beside config.json, and SGLang's get_quant_config raises ValueError 'Cannot find the config file for ...' as the
  model loads (preflight.json flag_checkpoint_conflicts *-unquantized-checkpoint).
- a4, a7, a10: --quantization mlx_q4 / mlx_q8 on CUDA: SGLang registers them on MPS only, and its model config
  raises 'Unknown quantization method' (mlx-q4-on-cuda, mlx-q8-on-cuda).
- beside the draw: modelopt / modelopt_fp8 / petit_nvfp4 / modelopt_mixed (hf_quant_config.json not found) and
  compressed-tensors (its config class built with no arguments: TypeError) on a BF16 checkpoint.

The model config is written for the tests in the shape of a published Llama 3 8B one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box


def _gate(tmp_path: Path, release: str, cc: str, config: dict[str, object] | None, *flags: str) -> dict[str, object]:
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", config)),
            "--tp", "1", *flags]  # fmt: skip
    return cli_json(["gate", "--facts", str(release_box(tmp_path, release, cc)), "--dry-run", "--format", "json",
                     "--", *line])[1]  # fmt: skip


@pytest.mark.parametrize(
    ("release", "cc", "flag", "needle"),
    [
        ("0.5.15", "10.0", "awq", "Cannot find the config file for awq"),
        ("0.5.16", "8.0", "gptq_marlin", "Cannot find the config file for gptq_marlin"),
        ("0.5.17", "8.6", "gptq_marlin", "Cannot find the config file for gptq_marlin"),
        ("0.5.14", "9.0", "moe_wna16", "Cannot find the config file for moe_wna16"),
        ("0.5.23", "9.0", "awq_marlin", "Cannot find the config file for awq_marlin"),
        ("0.5.16", "10.0", "mlx_q8", "Unknown quantization method: mlx_q8"),
        ("0.5.17", "12.0", "mlx_q4", "Unknown quantization method: mlx_q4"),
        ("0.5.20", "12.0", "mlx_q8", "Unknown quantization method: mlx_q8"),
        # beside the draw
        ("0.5.23", "9.0", "modelopt", "Cannot find the config file for modelopt"),
        ("0.5.17", "10.0", "modelopt_fp8", "Cannot find the config file for modelopt_fp8"),
        ("0.5.23", "9.0", "petit_nvfp4", "Cannot find the config file for petit_nvfp4"),
        ("0.5.17", "10.0", "modelopt_mixed", "Cannot find the config file for modelopt_mixed"),
        ("0.5.23", "9.0", "compressed-tensors", "TypeError as the model loads"),
    ],
)
def test_a_quantization_needing_its_checkpoint_is_refused_on_a_bf16_one(
    tmp_path: Path, release: str, cc: str, flag: str, needle: str
) -> None:
    doc = _gate(tmp_path, release, cc, LLAMA3, "--quantization", flag)
    assert doc["decision"] == "refuse"
    assert needle in json.dumps(doc), doc.get("reasons")


def test_guard_the_checkpoints_own_awq_and_online_fp8_still_pass_the_rows(tmp_path: Path) -> None:
    awq = {**LLAMA3, "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128,
                                             "zero_point": True, "version": "gemm"}}  # fmt: skip
    assert "Cannot find the config file" not in json.dumps(_gate(tmp_path, "0.5.22", "8.9", awq))
    assert "Cannot find the config file" not in json.dumps(_gate(tmp_path, "0.5.22", "9.0", LLAMA3, "--quantization",
                                                                 "fp8"))  # fmt: skip


# ---- quark_int4fp8_moe on a MoE model (ifc20 left it open; fixed at the merge) -----------------------------------


def _quark_reasons(doc: dict[str, object]) -> list[dict[str, object]]:
    reasons = doc.get("reasons")
    rows = reasons if isinstance(reasons, list) else []
    return [r for r in rows if isinstance(r, dict) and r.get("feature") == "refusal quark-int4fp8-moe-cuda"]


@pytest.mark.parametrize(("release", "cc"), [("0.5.23", "9.0"), ("0.5.8", "10.0"), ("0.5.17", "12.0")])
def test_quark_int4fp8_moe_on_a_moe_model_is_refused(tmp_path: Path, release: str, cc: str) -> None:
    # (fails on the parent, 99e0775) every MoE layer's QuarkInt4Fp8MoEMethod raises NotImplementedError off ROCm
    from gate_cli import QWEN3_MOE

    doc = _gate(tmp_path, release, cc, QWEN3_MOE, "--quantization", "quark_int4fp8_moe")
    found = _quark_reasons(doc)
    assert doc["decision"] == "refuse" and found and found[0]["status"] == "blocked", doc.get("reasons")


def test_guard_quark_int4fp8_moe_on_a_dense_model(tmp_path: Path) -> None:
    # (a guard) a dense model's linear layers take Fp8LinearMethod and load
    dense = _gate(tmp_path, "0.5.23", "9.0", LLAMA3, "--quantization", "quark_int4fp8_moe")
    assert "quark-int4fp8-moe-cuda" not in json.dumps(dense.get("reasons"))


def test_quark_int4fp8_moe_with_a_model_not_read_is_unknown(tmp_path: Path) -> None:
    # (fails on the parent) whether the model has routed experts is not known: refused as unknown, never allowed
    doc = _gate(tmp_path, "0.5.23", "9.0", None, "--quantization", "quark_int4fp8_moe")
    found = _quark_reasons(doc)
    assert doc["decision"] == "refuse" and found and found[0]["status"] == "unknown", doc.get("reasons")
