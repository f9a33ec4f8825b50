"""irev51: igap19's --enable-flashinfer-allreduce-fusion drop (launch.json idle_for_models) judged the served model
alone, but a speculative draft model (--speculative-draft-model-path) is built by its own model runner under the same
server args: a STANDALONE draft whose module calls the communicator (Qwen3-MoE here; sglang 0.5.3-0.5.10
speculative/spec_info.py STANDALONE, layers/communicator.py apply_flashinfer_allreduce_fusion reads the global
server args alone, no draft exception) takes the fused path and builds the workspace. The need stays where a draft's
architectures are not all listed, or not read. On the parent (611c448) the first cases pass the flag unjudged."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, QWEN3_MOE, feature_rules, gate_tp8, model_dir, release_box

FEATURE = "flashinfer-allreduce-fusion"
FLAG = "--enable-flashinfer-allreduce-fusion"
EAGLE3 = {**LLAMA3, "architectures": ["LlamaForCausalLMEagle3"]}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _rules(tmp_path: Path, draft: dict[str, Any] | None, algorithm: str) -> dict[str, str]:
    box = release_box(tmp_path, "0.5.5", "8.0")
    target = model_dir(tmp_path, "m", LLAMA3)
    flags = [FLAG, "--speculative-algorithm", algorithm]
    flags += ["--speculative-draft-model-path", str(model_dir(tmp_path, "d", draft))]
    return feature_rules(gate_tp8(box, target, *flags), FEATURE)


@pytest.mark.parametrize("draft", [QWEN3_MOE, None], ids=["communicator-draft", "draft-not-read"])
def test_a_draft_that_may_take_the_fused_path_keeps_the_need(tmp_path: Path, draft: dict[str, Any] | None) -> None:
    assert "flashinfer-jit-majors-early" in _rules(tmp_path, draft, "STANDALONE")


def test_a_listed_draft_of_a_listed_target_drops_it(tmp_path: Path) -> None:
    assert _rules(tmp_path, EAGLE3, "EAGLE3") == {}
