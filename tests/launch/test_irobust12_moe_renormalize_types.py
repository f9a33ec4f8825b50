"""irobust12: launch.model_moe_renormalize (ifc64) from a config.json whose norm_topk_prob is no boolean (0, 1,
null, "false", [], {}). The fact was left unset, and the renormalize rules guard it with `exists`: no verdict, so a
BF16 Qwen3-MoE with `"norm_topk_prob": 0` was allowed on a B200 with the cubins present (a false pass: transformers
5.12.1 / 5.19.0, the pins of SGLang 0.5.20-0.5.23, validate Qwen3MoeConfig's `norm_topk_prob: bool` with
huggingface_hub's @strict and raise; transformers 4 passes the value on, and SGLang's assert reads its truth: 0 fails
it). Such a value now makes the rules on the fact unknown (judged with it true and false; pipeline.reevaluate_unknown,
as for launch.mla). The configs are this test's own minimal files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json
from gate_cli import QWEN3_MOE

from stackcheck.launch.refusals import moe_renormalize_unread

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
# tests/gate_cli.py's Qwen3-MoE in BF16, norm_topk_prob taken out: what each test below varies
BASE: dict[str, Any] = {**{k: v for k, v in QWEN3_MOE.items() if k != "norm_topk_prob"}, "torch_dtype": "bfloat16"}
ODD: dict[str, Any] = {"zero": 0, "one": 1, "null": None, "text": "false", "list": [], "object": {}}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irobust12-renormalize")
    for name, value in {**ODD, "true": True}.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps({**BASE, "norm_topk_prob": value}), encoding="utf-8")
    return root


def gate(cwd: Path, model: str) -> tuple[str, str]:
    """(check moe-trtllm-gen-cubins's status, its reasons' messages)"""
    doc = stackcheck_json("gate", "--facts", str(CASES / "b200-cubin-package" / "facts.json"), "--cwd", str(cwd),
                          "--dry-run", "--format", "json", "--", "python", "-m", "sglang.launch_server",
                          "--model-path", model, "--attention-backend", "triton", "--tp", "8")  # fmt: skip
    status = [str(f["status"]) for f in doc["features"] if f["feature"] == "moe-trtllm-gen-cubins"]
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return ",".join(status), " ".join(str(r.get("message")) for f in found for r in f["reasons"])


@pytest.mark.parametrize("model", sorted(ODD))
def test_a_norm_topk_prob_that_is_no_boolean_is_not_ok(cwd: Path, model: str) -> None:
    status, messages = gate(cwd, model)
    assert status == "unknown"  # (fails before: ok)
    assert "norm_topk_prob is" in messages


def test_a_boolean_keeps_its_verdict(cwd: Path) -> None:
    assert gate(cwd, "true") == ("ok", "")


def test_the_reason() -> None:
    assert moe_renormalize_unread({"model": {"model_type": "qwen3_moe", "norm_topk_prob": 0}}) is not None
    for keys in ({"model_type": "qwen3_moe", "norm_topk_prob": False}, {"model_type": "qwen3_moe"},
                 {"model_type": "mixtral", "norm_topk_prob": 0}):  # fmt: skip
        assert moe_renormalize_unread({"model": keys}) is None
    assert moe_renormalize_unread({"model": None}) is None and moe_renormalize_unread({}) is None
