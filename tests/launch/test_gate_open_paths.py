"""Two gate paths stop 36 left open (issue 16, zero false passes), each read release by release in the real SGLang
wheels (the rules' sources in launch.json say where):

- `--attention-backend torch_native` or `flex_attention` with a DeepSeek-style MLA model (DeepSeek V2/V3/R1, Kimi
  K2 / K2.5 / Kimi-VL, GLM-4 MoE Lite): DeepSeek attention has no handler for these backends and takes triton's,
  which prefills a prompt without a cached prefix as MHA; the torch backends then read 576-wide keys from the MLA
  cache against 192-wide queries and raise at the first prefill (refusal torch-native-flex-attention-deepseek-mla);
- a DSA model (DeepSeek V3.2, GLM-5) on a GPU of major 8: on CUDA the DSA indexer computes each decode step's top-k
  with DeepGEMM's paged MQA logits, which DeepGEMM dispatches for majors 9 and 10 only, whatever the DSA prefill
  and decode backends are (refusal dsa-indexer-deepgemm-below-sm90; 0.5.22-0.5.23 take a torch fallback with
  SGLANG_FP8_PAGED_MQA_LOGITS_TORCH=1).

The model configs are written for the tests in the shape of the published ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, LLAMA3, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # 8x H200, SGLang 0.5.23, complete packages list
TORCH = "refusal torch-native-flex-attention-deepseek-mla"
INDEXER = "refusal dsa-indexer-deepgemm-below-sm90"
GLM_LITE: dict[str, Any] = {**DEEPSEEK_R1, "architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite"}
KIMI_K25: dict[str, Any] = {
    "architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25", "text_config": DEEPSEEK_R1,
}  # fmt: skip


def _facts(tmp_path: Path, sglang: str, cc: str) -> Path:
    doc = json.loads(H200.read_text())
    for gpu in doc["facts"]["gpus"]:
        gpu["compute_capability"] = cc
    doc["facts"]["packages"]["sglang"].update(version=sglang, dist_version=sglang)
    path = tmp_path / f"facts-{sglang}-{cc}.json"
    path.write_text(json.dumps(doc))
    return path


def _model(tmp_path: Path, name: str, config: dict[str, Any]) -> Path:
    path = tmp_path / name
    return path if path.is_dir() else model_dir(tmp_path, name, config)


def _gate(tmp_path: Path, sglang: str, cc: str, model: Path, *flags: str) -> dict[str, Any]:
    return gate_json(_facts(tmp_path, sglang, cc), "--model-path", str(model), *flags, dry_run=True)


def _status(doc: dict[str, Any], subject: str) -> str | None:
    hits = [r["status"] for r in doc["reasons"] if r.get("feature") == subject]
    return hits[0] if hits else None


# ---- torch_native / flex_attention with a DeepSeek-style MLA model ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "config", "sglang", "flags"),
    [
        ("r1", DEEPSEEK_R1, "0.5.23", ["--attention-backend", "torch_native"]),
        ("r1", DEEPSEEK_R1, "0.5.14", ["--attention-backend", "flex_attention"]),
        ("r1", DEEPSEEK_R1, "0.5.12", ["--attention-backend", "torch_native"]),  # inferred: a long prompt fails
        ("r1", DEEPSEEK_R1, "0.5.19", ["--prefill-attention-backend", "torch_native",
                                        "--decode-attention-backend", "fa3"]),
        ("glm", GLM_LITE, "0.5.23", ["--attention-backend", "flex_attention"]),
        ("kimi", KIMI_K25, "0.5.21", ["--attention-backend", "torch_native"]),
    ],
)  # fmt: skip
def test_torch_native_or_flex_with_a_deepseek_mla_model_is_refused(
    tmp_path: Path, name: str, config: dict[str, Any], sglang: str, flags: list[str]
) -> None:
    doc = _gate(tmp_path, sglang, "9.0", _model(tmp_path, name, config), *flags)
    assert doc["decision"] == "refuse"
    hit = next(r for r in doc["reasons"] if r.get("feature") == TORCH)
    assert hit["status"] == "blocked" and hit["effect"] == "crash"
    text = json.dumps(hit)
    assert config["architectures"][0] in text and "attention_backend_handler.py" in text


def test_torch_native_rule_holds_only_where_the_prefill_runs_on_it(tmp_path: Path) -> None:
    r1 = _model(tmp_path, "r1", DEEPSEEK_R1)
    # the prefill side named apart runs on fa3: the torch backend decodes only (the absorbed MLA path)
    split = ["--attention-backend", "torch_native", "--prefill-attention-backend", "fa3"]
    doc = _gate(tmp_path, "0.5.23", "9.0", r1, *split)
    assert _status(doc, TORCH) is None
    for backend in ("triton", "flashinfer"):  # DeepSeek attention's own backends
        assert _status(_gate(tmp_path, "0.5.23", "9.0", r1, "--attention-backend", backend), TORCH) is None
    llama = _model(tmp_path, "llama", LLAMA3)  # no MLA cache: the torch backends run it
    doc = _gate(tmp_path, "0.5.23", "9.0", llama, "--attention-backend", "torch_native")
    assert _status(doc, TORCH) is None and doc["decision"] == "allow", doc["reasons"]
    # the model not read: unknown, not ok
    unread = _gate(tmp_path, "0.5.23", "9.0", tmp_path / "absent", "--attention-backend", "torch_native")
    assert _status(unread, TORCH) == "unknown"


def test_before_0_5_3_the_mla_list_refuses_it_and_this_rule_does_not_hold(tmp_path: Path) -> None:
    r1 = _model(tmp_path, "r1", DEEPSEEK_R1)
    old = _gate(tmp_path, "0.5.2", "9.0", r1, "--attention-backend", "torch_native")
    assert _status(old, TORCH) is None and _status(old, "refusal mla-attention-backend") == "blocked"
    both = _gate(tmp_path, "0.5.4", "9.0", r1, "--attention-backend", "torch_native")
    assert _status(both, "refusal mla-attention-backend") == "blocked" and _status(both, TORCH) == "blocked"


# ---- a DSA model on major 8: the indexer's DeepGEMM kernels ------------------------------------------------------


@pytest.mark.parametrize(
    ("sglang", "cc", "flags"),
    [
        ("0.5.23", "8.0", ["--dsa-prefill-backend", "tilelang"]),
        ("0.5.23", "8.9", ["--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"]),
        ("0.5.16", "8.6", ["--dsa-prefill-backend", "tilelang", "--dsa-decode-backend", "tilelang"]),
        ("0.5.10", "8.0", ["--nsa-prefill-backend", "tilelang", "--nsa-decode-backend", "tilelang"]),
        ("0.5.3", "8.0", []),
    ],
)  # fmt: skip
def test_a_dsa_model_below_major_9_is_refused_for_its_indexer(
    tmp_path: Path, sglang: str, cc: str, flags: list[str]
) -> None:
    doc = _gate(tmp_path, sglang, cc, _model(tmp_path, "v32", DEEPSEEK_V32), *flags)
    assert doc["decision"] == "refuse"
    hit = next(r for r in doc["reasons"] if r.get("feature") == INDEXER)
    assert hit["status"] == "blocked" and hit["effect"] == "crash"
    text = json.dumps(hit)
    assert "Unsupported architecture" in text and "sgl-project/DeepGEMM" in text


@pytest.mark.parametrize(
    ("sglang", "cc", "name", "flags"),
    [
        ("0.5.23", "9.0", "v32", ["--dsa-prefill-backend", "tilelang"]),  # Hopper: DeepGEMM runs it
        ("0.5.23", "10.0", "v32", []),
        ("0.5.23", "8.0", "v32", ["--attention-backend", "triton"]),  # no DSA backend named: not this path
        ("0.5.23", "8.0", "r1", []),  # no index_topk: no indexer
        ("0.5.2", "8.0", "v32", []),  # no DSA models before 0.5.3
    ],
)  # fmt: skip
def test_the_indexer_rule_holds_only_for_a_dsa_backend_below_major_9(
    tmp_path: Path, sglang: str, cc: str, name: str, flags: list[str]
) -> None:
    config = DEEPSEEK_V32 if name == "v32" else DEEPSEEK_R1
    doc = _gate(tmp_path, sglang, cc, _model(tmp_path, name, config), *flags)
    assert _status(doc, INDEXER) is None, doc["reasons"]


def _gate_env(tmp_path: Path, sglang: str, assign: str, model: Path) -> dict[str, Any]:
    """The gate on a launch command with an `env NAME=VALUE` prefix (gate_json gives none)."""
    launch = ["env", assign, "python", "-m", "sglang.launch_server", "--model-path", str(model)]
    args = ["gate", "--facts", str(_facts(tmp_path, sglang, "8.0")), "--dry-run", "--format", "json", "--", *launch]
    return stackcheck_json(*args)


def test_the_torch_mqa_logits_variable_turns_the_rule_off_from_0_5_22_only(tmp_path: Path) -> None:
    v32 = _model(tmp_path, "v32", DEEPSEEK_V32)
    on = "SGLANG_FP8_PAGED_MQA_LOGITS_TORCH=1"
    assert _status(_gate_env(tmp_path, "0.5.23", on, v32), INDEXER) is None
    assert _status(_gate_env(tmp_path, "0.5.21", on, v32), INDEXER) == "blocked"  # that indexer never reads it
    assert _status(_gate_env(tmp_path, "0.5.23", "SGLANG_FP8_PAGED_MQA_LOGITS_TORCH=0", v32), INDEXER) == "blocked"
