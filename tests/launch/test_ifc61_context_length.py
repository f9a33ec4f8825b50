"""ifc61: `--context-length N` above the model's own context length was allowed (the sixty-first sample's row v2:
`sglang serve --model-path LLAMA3 --tp 2 --context-length 8192`, a config.json with no length key, which SGLang reads
as LlamaConfig's default 2048). SGLang 0.5.1-0.5.23 derive the length from hf_text_config (get_context_length: the
first of max_sequence_length, seq_length, max_seq_len, model_max_length, max_position_embeddings, times rope_scaling's
factor unless original_max_position_embeddings or llama3; else 2048) and ModelConfig._derive_context_length raises
ValueError above it unless SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN is set. Now the model check is unknown there.
The configs are written here (no upstream file)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
BASE = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
        "num_key_value_heads": 8, "head_dim": 128}  # fmt: skip


def _model(tmp_path: Path, **extra: Any) -> str:
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({**BASE, **extra}))
    return str(d)


def _gate(model: str, *flags: str, prefix: tuple[str, ...] = (), serve: bool = False) -> dict[str, Any]:
    launch = ["sglang", "serve"] if serve else ["python3", "-m", "sglang.launch_server"]
    line = [*prefix, *launch, "--model-path", model, "--tp", "2", *flags]
    return stackcheck_json("gate", "--facts", str(H200), "--dry-run", "--format", "json", "--", *line)


def _model_reasons(doc: dict[str, Any]) -> list[str]:
    return [r["reasons"][0]["message"] for r in doc["reasons"] if r.get("feature") == "model"]


@pytest.mark.parametrize(
    ("extra", "flag"),
    [({}, "8192"), ({"max_position_embeddings": 8192}, "16384"), ({"max_position_embeddings": 4096,
      "rope_scaling": {"rope_type": "linear", "factor": 2.0}}, "8193"),
     ({"max_position_embeddings": 8192, "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
       "original_max_position_embeddings": 8192}}, "16384"),
     ({"seq_length": 4096, "max_position_embeddings": 32768}, "8192")],
)  # fmt: skip
def test_a_longer_context_than_the_model_derives_is_refused(tmp_path: Path, extra: dict[str, Any], flag: str) -> None:
    # fails before: allowed (the flag not read)
    model = _model(tmp_path, **extra)
    for serve in (False, True):
        doc = _gate(model, "--context-length", flag, serve=serve)
        assert doc["decision"] == "refuse", doc["reasons"]
        assert any("--context-length" in m and "ValueError" in m for m in _model_reasons(doc)), doc["reasons"]


@pytest.mark.parametrize(
    ("extra", "flag"),
    [({}, "2048"), ({"max_position_embeddings": 8192}, "8192"), ({"max_position_embeddings": 131072}, "32768"),
     ({"max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 4.0}}, "16384")],
)  # fmt: skip
def test_a_context_within_the_models_is_allowed(tmp_path: Path, extra: dict[str, Any], flag: str) -> None:
    doc = _gate(_model(tmp_path, **extra), "--context-length", flag)
    assert doc["decision"] == "allow" and not _model_reasons(doc), doc["reasons"]


def test_the_override_lets_it_through(tmp_path: Path) -> None:
    model = _model(tmp_path, max_position_embeddings=8192)
    for name in ("SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN", "SGLANG_IS_IN_CI"):
        doc = _gate(model, "--context-length", "65536", prefix=("env", f"{name}=1"))
        assert doc["decision"] == "allow", (name, doc["reasons"])


def test_the_reader_reads_the_text_config() -> None:
    from stackcheck.launch.preflight.model import context_length_result

    config = {"architectures": ["X"], "text_config": {"max_position_embeddings": 4096}, "max_position_embeddings": 1}
    assert context_length_result(config, {"--context-length": 4096}, {}) is None
    got = context_length_result(config, {"--context-length": 4097}, {})
    assert got is not None and got.status == "unknown" and "4096" in got.message
    assert context_length_result({"max_position_embeddings": "x"}, {"--context-length": 10}, {}) is not None
    assert context_length_result({}, {}, {}) is None
