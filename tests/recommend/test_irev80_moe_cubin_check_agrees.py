"""irev80: icubin3's check moe-trtllm-gen-cubins (a BF16 MoE model on SM100 whose MoE runner SGLang 0.5.20-0.5.23
set to flashinfer_trtllm, auto or by flag, loads the TRTLLM_GEN_BMM cubins) reads launch.moe_runner_auto and
launch.model_moe, which the gate sets once its preflight read the model. irev79 made recommend set
launch.moe_runner_auto for its feature judging (gate_problems) only: the stack checks a proposed line needs
(check_problems) were judged without either fact, and with a plan only those already failing without them. So on a
B200 whose cache holds every trtllm-gen family but TRTLLM_GEN_BMM, under FLASHINFER_NO_DOWNLOAD, recommend proposed
`--model-path <Qwen3-MoE BF16> --tp-size 8 --attention-backend trtllm_mha`, which the gate refused (check
moe-trtllm-gen-cubins blocked, crash). Now both judge the line with the same launch facts. The facts are the case
b200-cubins-offline with the other families made ready; the configs are this test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json
from gate_cli import QWEN3_MOE

__all__ = ["scrubbed_environ"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "b200-cubins-offline" / "facts.json"
BASE: dict[str, Any] = {
    "hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4, "head_dim": 128,
    "torch_dtype": "bfloat16", "vocab_size": 1024,
}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "qwen3-moe": {**QWEN3_MOE, "torch_dtype": "bfloat16"},  # (tests/gate_cli.py's; irev81: norm_topk_prob true)
    "qwen3_5-dense": {**BASE, "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5"},
}  # fmt: skip


def _box(tmp_path: Path, bmm: bool) -> Path:
    doc = json.loads(FACTS.read_text())
    cubins = (doc.get("facts") or doc)["flashinfer_cubins"]
    for family in ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_GEMM", "DEEPGEMM", *(("TRTLLM_GEN_BMM",) if bmm else ())):
        cubins["ready"][family] = True
        cubins["ready_reason"].pop(family, None)
        cubins["families"][family].update(manifest=True, listed=4, missing=0)
    # (irecmodel: recommend now refuses a line on a needed check that is unknown, as the gate does: the box's JIT
    # toolchain read, the nvcc 12.8 of the case b200-deepgemm-nvcc128, so that check jit-toolchain is judged)
    nvcc = json.loads((FACTS.parents[1] / "b200-deepgemm-nvcc128" / "facts.json").read_text())
    (doc.get("facts") or doc)["jit"] = (nvcc.get("facts") or nvcc)["jit"]
    path = tmp_path / f"facts-{bmm}.json"
    path.write_text(json.dumps(doc))
    return path


def _model(tmp_path: Path, name: str) -> Path:
    where = tmp_path / name
    where.mkdir(exist_ok=True)
    (where / "config.json").write_text(json.dumps(MODELS[name]))
    return where


def _check(gate: dict[str, Any]) -> list[Any]:
    # (irobust12: the gate's reasons name it as `feature` or `subject`, never `check`: the lookup found nothing)
    named = ("moe-trtllm-gen-cubins", "check moe-trtllm-gen-cubins")
    return [r.get("status") for r in gate["reasons"] if r.get("feature") in named or r.get("subject") in named]


@pytest.mark.parametrize("bmm", [False, True])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_recommend_and_gate_agree_on_the_bmm_cubins(tmp_path: Path, name: str, bmm: bool) -> None:
    """(--no-plan: the line is for the stack as installed, which the gate judges; a plan's line is for its stack.)"""
    facts, model = _box(tmp_path, bmm), _model(tmp_path, name)
    doc = stackcheck_json("recommend", "--facts", str(facts), "--model-path", str(model), "--tp", "8", "--no-plan",
                          "--format", "json")  # fmt: skip
    line = [str(w) for w in doc.get("command") or []]
    moe_needs_bmm = name == "qwen3-moe" and not bmm
    if not line:
        refused = json.dumps(doc.get("refused"))
        assert moe_needs_bmm and "moe-trtllm-gen-cubins" in refused, refused  # (refused for that check only)
        return
    assert not moe_needs_bmm, line  # (fails before: proposed)
    gate = stackcheck_json("gate", "--facts", str(facts), "--cwd", str(tmp_path), "--dry-run", "--format", "json",
                           "--", *line)  # fmt: skip
    assert "blocked" not in _check(gate), gate["reasons"]
