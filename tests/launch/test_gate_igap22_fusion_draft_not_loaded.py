"""igap22 (4): a --speculative-draft-model-path that SGLang never loads does not keep a flag's need.

igap19/irev51's --enable-flashinfer-allreduce-fusion drop (launch.json idle_for_models) counts every architecture of
every model SGLang runs, the draft's too (gate_preflight.running_architectures). It counted the draft path's
architectures whether or not a draft is loaded: without --speculative-algorithm no draft worker is built (scheduler.py
0.5.5:342-347, 0.5.9:534-536), and NGRAM's worker loads no model (spec_info.py 0.5.9:95-102), so a communicator
model named as the draft, or a draft path not read, kept the fusion's need and refused the launch on an A100 (an
over-refusal: the target alone drops it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, QWEN3_MOE, feature_rules, gate_tp8, model_dir, release_box

FEATURE = "flashinfer-allreduce-fusion"
FLAG = "--enable-flashinfer-allreduce-fusion"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _rules(tmp_path: Path, draft: dict[str, Any] | None, *algorithm: str) -> dict[str, str]:
    box = release_box(tmp_path, "0.5.5", "8.0")
    target = model_dir(tmp_path, "m", LLAMA3)
    flags = [FLAG, *algorithm, "--speculative-draft-model-path", str(model_dir(tmp_path, "d", draft))]
    return feature_rules(gate_tp8(box, target, *flags), FEATURE)


@pytest.mark.parametrize("draft", [QWEN3_MOE, None], ids=["communicator-draft", "draft-not-read"])
@pytest.mark.parametrize("algorithm", [(), ("--speculative-algorithm", "NGRAM")], ids=["no-algorithm", "ngram"])
def test_a_draft_that_is_never_loaded_does_not_keep_the_need(
    tmp_path: Path, draft: dict[str, Any] | None, algorithm: tuple[str, ...]
) -> None:
    assert _rules(tmp_path, draft, *algorithm) == {}


@pytest.mark.parametrize("draft", [QWEN3_MOE, None], ids=["communicator-draft", "draft-not-read"])
def test_a_loaded_draft_still_keeps_it(tmp_path: Path, draft: dict[str, Any] | None) -> None:
    assert "flashinfer-jit-majors-early" in _rules(tmp_path, draft, "--speculative-algorithm", "STANDALONE")
