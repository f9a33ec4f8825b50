"""The fifteenth fact-check sample's false passes (tests/realworld/FACTCHECK.md, "Fifteenth sample"; the rows in
bench/factcheck15_drawn.json), each read in the real SGLang wheels:

- a7, b2, b3, b5: a Qwen2.5-1M config (dual_chunk_attention_config) on SGLang 0.5.20-0.5.23. These releases dropped
  the dual_chunk_flash_attn backend, but Qwen2 still builds DualChunkRotaryEmbedding from the config key, whose
  queries are five rotated copies side by side; no backend left reads them (refusal dual-chunk-model-no-backend,
  inferred). The gate allowed it with no attention flag, and recommend proposed `--attention-backend flashinfer`.
- b6: recommend proposed a line for a ModelOpt MXFP8 checkpoint on an A100 with 0.5.23, which maps it to mxfp8
  (minimum capability 100): its judging of the line (gate_problems) left out what the checkpoint's own
  quantization needs (preflight.json model.quantization), which the gate's preflight adds. It now judges them.

The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, gate_tp8, model_dir, release_box

RULE = "refusal dual-chunk-model-no-backend"
QWEN_1M: dict[str, Any] = {
    "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "hidden_size": 5120, "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "dual_chunk_attention_config": {
        "chunk_size": 262144, "local_size": 8192, "original_max_position_embeddings": 262144,
    },
}  # fmt: skip
MXFP8: dict[str, Any] = {**LLAMA3, "quantization_config": {"quant_method": "modelopt", "quant_algo": "MXFP8"}}


def _run(args: list[str]) -> tuple[int, dict[str, Any]]:
    return cli_json(args)


_box = release_box
_gate = gate_tp8


def _model(tmp_path: Path, name: str, config: dict[str, Any]) -> Path:
    return model_dir(tmp_path, name, config)


@pytest.mark.parametrize(
    ("release", "cc", "flags"),
    [
        ("0.5.22", "8.0", []),  # row a7
        ("0.5.20", "9.0", ["--attention-backend", "fa3"]),
        ("0.5.23", "12.0", ["--attention-backend", "flashinfer"]),
        ("0.5.21", "10.0", ["--attention-backend", "triton"]),
    ],
)
def test_a_dual_chunk_config_from_0_5_20_is_refused(tmp_path: Path, release: str, cc: str, flags: list[str]) -> None:
    doc = _gate(_box(tmp_path, release, cc), _model(tmp_path, "q", QWEN_1M), *flags)
    assert doc["decision"] == "refuse"
    hit = next(r for r in doc["reasons"] if r.get("feature") == RULE)
    assert hit["status"] == "blocked" and "DualChunkRotaryEmbedding" in json.dumps(hit)


def test_the_no_backend_rule_holds_only_from_0_5_20_and_for_a_dual_chunk_config(tmp_path: Path) -> None:
    q = _model(tmp_path, "q", QWEN_1M)
    ok = _gate(_box(tmp_path, "0.5.19", "9.0"), q, "--attention-backend", "dual_chunk_flash_attn")
    assert ok["decision"] == "allow", ok["reasons"]
    plain = _model(tmp_path, "plain", {k: v for k, v in QWEN_1M.items() if k != "dual_chunk_attention_config"})
    assert not [r for r in _gate(_box(tmp_path, "0.5.23", "9.0"), plain)["reasons"] if r.get("feature") == RULE]


@pytest.mark.parametrize(("installed", "cc"), [("0.5.22", "8.0"), ("0.5.23", "12.0")])  # rows b2, b3 (b5 as b3)
def test_recommend_proposes_no_line_for_a_dual_chunk_config_on_0_5_23(tmp_path: Path, installed: str, cc: str) -> None:
    args = ["--model-path", str(_model(tmp_path, "q", QWEN_1M)), "--tp", "8", "--format", "json"]
    rc, rec = _run(["recommend", "--facts", str(_box(tmp_path, installed, cc)), *args])
    assert rec["stack"]["sglang"] == "0.5.23"
    assert rc == 1 and rec["command"] == [] and [r["subject"] for r in rec["refused"]] == [RULE]


def test_recommend_judges_the_checkpoints_own_quantization_row_b6(tmp_path: Path) -> None:
    """Row b6: the box's A100s with 0.5.8, the plan's 0.5.23 maps the ModelOpt MXFP8 checkpoint to mxfp8, which
    needs SM100 (Fp8Config.get_min_capability 100; the loader raises ValueError below it). The gate refuses the line
    (feature mxfp8, the preflight's requirement); recommend proposed it."""
    model = _model(tmp_path, "mx", MXFP8)
    rc, rec = _run(["recommend", "--facts", str(_box(tmp_path, "0.5.8", "8.0")), "--model-path", str(model), "--tp",
                    "8", "--format", "json"])  # fmt: skip
    assert rec["stack"]["sglang"] == "0.5.23"
    assert (
        rc == 1
        and rec["command"] == []
        and [(r["subject"], r["status"]) for r in rec["refused"]] == [("mxfp8", "blocked")]
    )
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp-size", "8",
            "--attention-backend", "flashinfer"]  # fmt: skip
    _, gate = _run(["gate", "--facts", str(_box(tmp_path, "0.5.23", "8.0")), "--dry-run", "--format", "json", "--",
                    *line])  # fmt: skip
    assert gate["decision"] == "refuse"
    assert ("mxfp8", "blocked") in [(r["feature"], r["status"]) for r in gate["reasons"]]


def test_recommend_still_proposes_a_line_for_a_plain_llama(tmp_path: Path) -> None:
    model = _model(tmp_path, "llama", LLAMA3)
    rc, rec = _run(["recommend", "--facts", str(_box(tmp_path, "0.5.8", "8.0")), "--model-path", str(model), "--tp",
                    "8", "--format", "json"])  # fmt: skip
    assert rc == 0 and rec["command"], rec["notes"]
