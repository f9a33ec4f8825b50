"""imodel2: SGLang 0.5.16-0.5.23 assert the attention backends of a Gemma 4 model at argument parsing (the
Gemma4 branch of the model-specific adjustments: trtllm_mha, triton and a few non-NVIDIA ones; fa4 from 0.5.22),
so `--attention-backend flashinfer` (or fa3) on a Gemma 4 checkpoint stops the server with an AssertionError. The
gate had no rule for it and allowed such a launch on an H200 box (a false pass). The configs are this test's own
minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
TEXT = {"model_type": "gemma4_text", "hidden_size": 2048, "num_attention_heads": 8, "num_key_value_heads": 4,
        "head_dim": 256, "num_hidden_layers": 4, "vocab_size": 1024, "sliding_window": 512}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "g4": {"architectures": ["Gemma4ForConditionalGeneration"], "model_type": "gemma4", "text_config": TEXT},
    "g3": {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3", "text_config": TEXT},
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel2-gemma4")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


def refusal(cwd: Path, case: str, model: str, *words: str) -> list[str]:
    doc = stackcheck_json("gate", "--facts", str(CASES / case / "facts.json"), "--cwd", str(cwd), "--dry-run",
                          "--format", "json", "--", "python", "-m", "sglang.launch_server", "--model-path", model,
                          *words)  # fmt: skip
    return [str(f.get("status")) for f in doc["reasons"] if f["feature"] == "refusal gemma4-attention-backend"]


def test_a_backend_gemma4_does_not_take_is_refused(cwd: Path) -> None:
    # h200-newest: SGLang 0.5.23 on H200
    assert refusal(cwd, "h200-newest", "g4", "--attention-backend", "flashinfer") == ["blocked"]
    assert refusal(cwd, "h200-newest", "g4", "--attention-backend", "fa3") == ["blocked"]


def test_a_listed_backend_no_flag_or_another_model_passes(cwd: Path) -> None:
    assert refusal(cwd, "h200-newest", "g4", "--attention-backend", "triton") == []
    assert refusal(cwd, "h200-newest", "g4", "--attention-backend", "fa4") == []  # listed from 0.5.22
    assert refusal(cwd, "h200-newest", "g4") == []  # the Gemma 4 override picks triton here
    assert refusal(cwd, "h200-newest", "g3", "--attention-backend", "flashinfer") == []
