"""--quantization fp8 on a checkpoint without FP8 weights (igap4, item 3): SGLang builds Fp8Config() without a
weight_block_size (model_loader/weight_utils.py get_quant_config), quantizes the weights per channel while loading and
runs the kernel package's fp8_scaled_mm (Marlin below SM 8.9), never the block-FP8 GEMM or DeepGEMM the gate judged.
SM12x boxes with SGLang 0.5.5-0.5.9 (whose kernels have an SM120 rowwise FP8 GEMM) were refused by the block path's
DeepGEMM rule; where the kernel has none for the GPU (sgl-kernel 0.3.5-0.3.7: SM89/SM90 only, every newer SM sent to
the SM90 kernel; 0.3.9.post2-0.3.16.post3: SM 10.0/10.3 added) the reason was the DeepGEMM rule, or nothing on
a GPU that rule does not name. The model config is written for the tests in the shape of a published one; the boxes
are each release with its pinned packages (stackcheck explain's)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, gate_tp8, model_dir, reason_status, release_box

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import load
from stackcheck.verdicts.context import assumed_gpus

FP8_BLOCK: dict[str, Any] = {
    **LLAMA3, "quantization_config": {"quant_method": "fp8", "weight_block_size": [128, 128]},
}  # fmt: skip


def _box(tmp_path: Path, sglang: str, cc: str) -> Path:
    m = load()
    base: dict[str, Any] = {
        "gpus": assumed_gpus(m, f"{cc}x8"),
        "topology": {"interconnect": "nvlink", "nvswitch": True, "p2p": "all", "same_model": True, "gpu_count": 8},
        "system": {"machine": "x86_64", "python": "3.12.3"},
    }
    facts = release_facts(copy.deepcopy(base), m, sglang, None, None)
    path = tmp_path / f"box-{sglang}-{cc}.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    return path


def _gate(tmp_path: Path, sglang: str, cc: str, config: dict[str, Any] | None) -> dict[str, Any]:
    model = model_dir(tmp_path, f"m{len(config or {})}", config)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "8", "--quantization", "fp8"]
    return cli_json(["gate", "--facts", str(_box(tmp_path, sglang, cc)), "--dry-run", "--format", "json", "--", *line])[
        1
    ]


def _fp8_rules(doc: dict[str, Any]) -> dict[str, str]:
    hits = [x for r in doc["reasons"] if r.get("feature") == "fp8-block-gemm" for x in r.get("reasons") or []]
    return {str(x.get("rule")): str(x.get("result")) for x in hits}


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.1", "10.0"), ("0.5.1", "12.0"), ("0.5.2", "12.0"), ("0.5.4", "12.0")])
def test_online_fp8_without_the_kernel_refused(tmp_path: Path, sglang: str, cc: str) -> None:
    # fails on the parent: the rule did not exist (10.0: no fp8-block-gemm reason; 12.0: the DeepGEMM rule instead)
    doc = _gate(tmp_path, sglang, cc, LLAMA3)
    assert doc["decision"] == "refuse"
    assert _fp8_rules(doc).get("online-fp8-scaled-mm-dispatch") == "fail", doc["reasons"]
    assert "auto-picks-deepgemm-sm120" not in _fp8_rules(doc)


@pytest.mark.parametrize(("sglang", "cc"), [("0.5.5", "12.0"), ("0.5.9", "12.0")])
def test_online_fp8_on_sm120_not_judged_as_deepgemm(tmp_path: Path, sglang: str, cc: str) -> None:
    # fails on the parent (auto-picks-deepgemm-sm120: the block path's DeepGEMM, which this launch never runs)
    doc = _gate(tmp_path, sglang, cc, LLAMA3)
    rules = _fp8_rules(doc)
    assert "auto-picks-deepgemm-sm120" not in rules and rules.get("online-fp8-scaled-mm-dispatch") != "fail"


def test_guards(tmp_path: Path) -> None:
    # an FP8 block checkpoint keeps the block path's rules; a config.json not read too (fail closed); the online
    # path on SM 10.0 with 0.5.2's kernel (sm100 rowwise GEMM) and on H200 is not refused by the new rule
    block = _fp8_rules(_gate(tmp_path, "0.5.9", "12.0", FP8_BLOCK))
    assert block.get("auto-picks-deepgemm-sm120") == "fail" and "online-fp8-scaled-mm-dispatch" not in block
    unread = _fp8_rules(_gate(tmp_path, "0.5.9", "12.0", None))
    assert unread.get("auto-picks-deepgemm-sm120") == "fail"
    assert "online-fp8-scaled-mm-dispatch" not in _fp8_rules(_gate(tmp_path, "0.5.2", "10.0", LLAMA3))
    model = model_dir(tmp_path, "llama3", LLAMA3)  # the H200 case of tests/cases, with a driver and its probes
    h200 = gate_tp8(release_box(tmp_path, "0.5.23", "9.0"), model, "--quantization", "fp8")
    assert h200["decision"] == "allow", reason_status(h200)
