"""irobust12: recommend judges a line's stack checks with the launch facts the gate sets (irev80: moe_runner_auto,
model_moe), but not launch.model_moe_renormalize (ifc64, merged beside it). On a B200 with every trtllm-gen cubin
family ready, recommend proposed `--model-path <BF16 Qwen3-MoE without norm_topk_prob> --tp-size 8 --attention-backend
trtllm_mha`, which the gate refuses (check moe-trtllm-gen-cubins blocked, rule unquantized-auto-renormalize, crash:
SGLang picks flashinfer_trtllm there and asserts the top-k renormalizes). (irev80's agreement test looked the check up
under the key `check`, which the gate's reasons do not use: it could not see this.) The facts are the case
b200-cubins-offline with every family made ready; the configs are this test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json
from gate_cli import QWEN3_MOE

__all__ = ["scrubbed_environ"]

FACTS = Path(__file__).resolve().parents[1] / "cases" / "b200-cubins-offline" / "facts.json"
# tests/gate_cli.py's Qwen3-MoE in BF16, norm_topk_prob taken out: what each model below varies
BASE: dict[str, Any] = {**{k: v for k, v in QWEN3_MOE.items() if k != "norm_topk_prob"}, "torch_dtype": "bfloat16"}
MODELS: dict[str, dict[str, Any]] = {
    "no-key": BASE, "false": {**BASE, "norm_topk_prob": False}, "zero": {**BASE, "norm_topk_prob": 0},
    "true": {**BASE, "norm_topk_prob": True},
}  # fmt: skip


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irobust12-recommend")
    doc = json.loads(FACTS.read_text())
    cubins = (doc.get("facts") or doc)["flashinfer_cubins"]
    for family in ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_GEMM", "DEEPGEMM", "TRTLLM_GEN_BMM"):
        cubins["ready"][family] = True
        cubins["ready_reason"].pop(family, None)
        cubins["families"][family].update(manifest=True, listed=4, missing=0)
    # (irecmodel: recommend refuses a line whose needed check is unknown, as the gate does; the JIT toolchain read,
    # the nvcc 12.8 of the case b200-deepgemm-nvcc128, so that check jit-toolchain is judged)
    nvcc = json.loads((FACTS.parents[1] / "b200-deepgemm-nvcc128" / "facts.json").read_text())
    (doc.get("facts") or doc)["jit"] = (nvcc.get("facts") or nvcc)["jit"]
    (root / "facts.json").write_text(json.dumps(doc))
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg))
    return root


def _cubin_check(gate: dict[str, Any]) -> list[str]:
    named = ("moe-trtllm-gen-cubins", "check moe-trtllm-gen-cubins")
    return [str(r.get("status")) for r in gate["reasons"] if r.get("feature") in named or r.get("subject") in named]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_recommend_proposes_no_line_the_gate_blocks_for_renormalize(box: Path, name: str) -> None:
    doc = stackcheck_json("recommend", "--facts", str(box / "facts.json"), "--model-path", str(box / name), "--tp", "8",
                          "--no-plan", "--format", "json")  # fmt: skip
    line = [str(w) for w in doc.get("command") or []]
    renormalizes = name == "true"
    if not line:
        refused = json.dumps(doc.get("refused"))
        assert not renormalizes and "moe-trtllm-gen-cubins" in refused, refused
        return
    assert renormalizes, line  # (fails before: a line proposed for no-key, false and zero)
    gate = stackcheck_json("gate", "--facts", str(box / "facts.json"), "--cwd", str(box), "--dry-run", "--format",
                           "json", "--", *line)  # fmt: skip
    assert _cubin_check(gate) == [], gate["reasons"]
