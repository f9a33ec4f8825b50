"""The gate's model-dependent refusals on a config.json of odd shapes (irev3's review): an `architectures` that is
not a list (a number, true, an object) is read as no architecture, as the preflight reads it, so the heads rule of
trtllm_mha's pages of 128 and the split-flag rules judge the launch (unknown where they cannot say) instead of the
gate stopping with an internal error (exit 4, `TypeError: 'int' object is not iterable`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json, model_dir

from stackcheck.launch.refusals import model_heads

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests/cases/b200/facts.json"  # SGLang 0.5.20 on eight B200s (SM100)
HEADS = {"num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128}


@pytest.mark.parametrize("archs", [5, True, 1.5, {"LlamaForCausalLM": 1}, "LlamaForCausalLM"])
def test_an_architectures_that_is_not_a_list_reads_as_none(archs: Any) -> None:
    assert model_heads({"architectures": archs, **HEADS}, {}) == (32, 8, 128, 128)


@pytest.mark.parametrize("archs", [5, True])
@pytest.mark.parametrize(
    "flags", [["--attention-backend", "trtllm_mha"], ["--prefill-attention-backend", "fa3"]], ids=["trtllm", "split"]
)
def test_the_gate_judges_a_launch_whose_config_has_odd_architectures(
    tmp_path: Path, archs: Any, flags: list[str]
) -> None:
    model = model_dir(tmp_path, "m", {"architectures": archs, **HEADS})
    doc = gate_json(B200, "--model-path", str(model), *flags, dry_run=True)  # exit 0 or 1, JSON: no internal error
    assert doc["decision"] in ("allow", "refuse"), doc
