"""irev86: SGLang's own MoE runner pick for a checkpoint whose quantization the preflight saw but could not map (an
hf_quant_config.json quant_algo not in preflight.json's table, a quantization_config without quant_method). imoe6 read
Llama 4 / Gemma 4 overrides as making no pick for a checkpoint without quantization (`unquantized` false) and
--moe-a2a-backend deepep as leaving the runner auto for one; both took such a checkpoint for unquantized, so a Llama 4
with an unmapped ModelOpt algorithm on a B200 without the TRTLLM_GEN_BMM cubins passed (before imoe6: unknown). The
gate runs in this process; the model files are this test's own minimal ones in the shape of config.json and
hf_quant_config.json."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from stackcheck.cli import main

CASES = Path(__file__).resolve().parents[1] / "cases"
BASE = {"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
        "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024, "intermediate_size": 4096}  # fmt: skip
LLAMA4 = {"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text", "num_local_experts": 16,
          "num_experts_per_tok": 1, "intermediate_size_mlp": 8192, **BASE}  # fmt: skip
QWEN3MOE = {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_experts": 16,
            "moe_intermediate_size": 512, "norm_topk_prob": True, **BASE}  # fmt: skip


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irev86")
    models = {
        "llama4": (LLAMA4, None),
        "llama4-unmapped": (LLAMA4, {"quantization": {"quant_algo": "W9A9_NOT_A_FORMAT"}}),
        "llama4-no-method": ({**LLAMA4, "quantization_config": {"bits": 4}}, None),
        "qwen3moe-unmapped": (QWEN3MOE, {"quantization": {"quant_algo": "W9A9_NOT_A_FORMAT"}}),
    }
    for name, (cfg, hq) in models.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
        if hq is not None:
            (root / name / "hf_quant_config.json").write_text(json.dumps(hq), encoding="utf-8")
    # b200-cubins-offline: 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins
    doc = json.loads((CASES / "b200-cubins-offline" / "facts.json").read_text(encoding="utf-8"))
    doc.get("facts", doc)["packages"]["sglang"]["version"] = "0.5.23"
    (root / "b200.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def bmm_results(cwd: Path, model: str, *words: str) -> dict[str, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--facts", str(cwd / "b200.json"), "--dry-run", "--format", "json", "--", "python", "-m",
              "sglang.launch_server", "--model-path", str(cwd / model), "--attention-backend", "triton", "--tp", "8",
              *words])  # fmt: skip
    doc = json.loads(out.getvalue())
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"] if "auto" in str(r.get("rule"))}


def test_a_checkpoint_of_an_unmapped_quantization_is_not_read_as_unquantized(cwd: Path) -> None:
    # model_overrides/llama4.py (0.5.23 :38-40) picks flashinfer_trtllm for fp8 / modelopt_fp8: what SGLang makes of
    # an algorithm the gate cannot map is not known, so its pick is unread (unknown), never SGLang's auto (ok)
    unknown = {"unquantized-auto-unread": "unknown"}
    assert bmm_results(cwd, "llama4-unmapped") == unknown
    assert bmm_results(cwd, "llama4-no-method") == unknown
    assert bmm_results(cwd, "llama4") == {}  # a BF16 Llama 4 keeps auto (imoe6)


def test_deepep_leaves_auto_only_for_a_checkpoint_known_to_be_unquantized(cwd: Path) -> None:
    # arg_groups/moe_hook.py's deepep branch writes no runner, but an unmapped quantization's own pick is not read
    got = bmm_results(cwd, "qwen3moe-unmapped", "--moe-a2a-backend", "deepep")
    assert got == {"unquantized-auto-unread": "unknown"}
