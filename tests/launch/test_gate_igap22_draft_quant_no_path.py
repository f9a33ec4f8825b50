"""igap22 (3): --speculative-draft-model-quantization without --speculative-draft-model-path.

Every release that has the flag (0.5.7-0.5.23) accepts it without a draft path (server_args only resolves it: 0.5.9
server_args.py:880-885, 0.5.23 arg_groups/serving_hook.py:676-708), and the draft worker builds its ModelConfig
from `speculative_draft_model_path or model_path` with the draft's quantization (tp_worker.py 0.5.9:312-325,
model_config.py 0.5.9:241-251; 0.5.23 tp_worker.py:468-481, model_config.py:946-956): the draft is the target's own
checkpoint loaded with the draft's flag. The gate judged the draft's quantization only for a draft path it read,
so a draft flag the GPU cannot load was allowed (0.5.12, modelopt_fp4 on an H100: ModelOptFp4Config asks 100)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_MOE, gate_tp8, release_box

FLAG = "--speculative-draft-model-quantization"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _gate(release: str, cc: str, *flags: str, modelopt: dict[str, Any] | None = None) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp())
    target = root / "target"
    target.mkdir()
    (target / "config.json").write_text(json.dumps(QWEN3_MOE))
    if modelopt is not None:
        doc = {"producer": {"name": "modelopt"}, "quantization": modelopt}
        (target / "hf_quant_config.json").write_text(json.dumps(doc))
    return gate_tp8(release_box(root, release, cc), target, *flags)


def _draft(doc: dict[str, Any]) -> dict[str, str]:
    """The draft model's problems: subject -> status."""
    return {
        str(r["feature"]): str(r.get("status"))
        for r in doc.get("reasons") or []
        if str(r.get("feature", "")).startswith("draft model ")
    }


def test_the_drafts_flag_on_the_targets_checkpoint_is_judged() -> None:
    doc = _gate("0.5.12", "9.0", "--speculative-algorithm", "EAGLE", FLAG, "modelopt_fp4")
    drafts = _draft(doc)
    assert list(drafts.values()) == ["blocked"], drafts
    [subject] = drafts
    assert subject.endswith("(the target's checkpoint: no --speculative-draft-model-path is given)")
    [reason] = next(r for r in doc["reasons"] if r["feature"] == subject)["reasons"]
    assert "rule quant-loader-sm100" in reason["message"]
    assert doc["decision"] == "refuse"


def test_the_same_flag_on_a_gpu_that_loads_it_is_not_refused_for_it() -> None:
    assert _draft(_gate("0.5.12", "10.0", "--speculative-algorithm", "EAGLE", FLAG, "modelopt_fp4")) == {}


@pytest.mark.parametrize("algorithm", [(), ("--speculative-algorithm", "NGRAM")])
def test_no_draft_loaded_the_flag_does_nothing(algorithm: tuple[str, ...]) -> None:
    """Without --speculative-algorithm (or with NGRAM) no draft worker is built: the flag is never read."""
    doc = _gate("0.5.12", "9.0", *algorithm, FLAG, "modelopt_fp4")
    assert _draft(doc) == {} and doc["decision"] == "allow", doc["reasons"]


def test_the_targets_own_quantization_is_not_judged_twice() -> None:
    doc = _gate("0.5.12", "9.0", "--quantization", "fp8", "--speculative-algorithm", "EAGLE", FLAG, "fp8")
    assert _draft(doc) == {}, _draft(doc)


def test_unquant_loads_the_targets_checkpoint_by_its_own_method() -> None:
    """--quantization given for the target, `unquant` for the draft: the draft (the target's checkpoint) loads the
    checkpoint's own method (modelopt FP8: 89), not the target's flag; on an A10 (8.6) it fails."""
    doc = _gate(
        "0.5.23", "8.6", "--quantization", "fp8", "--speculative-algorithm", "EAGLE", FLAG, "unquant",
        modelopt={"quant_algo": "FP8"},
    )  # fmt: skip
    drafts = _draft(doc)
    assert list(drafts.values()) == ["blocked"], drafts
