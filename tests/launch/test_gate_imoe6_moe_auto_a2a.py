"""imoe6: SGLang 0.5.20-0.5.23's own MoE runner pick where an override the gate does not model may set a FlashInfer
runner (DeepSeek-V4, Gemma 4, MiniMax, MiMo-V2, ...: launch.json refusals.auto.moe_runner `unmodelled`) or an
all-to-all backend is set. moe-trtllm-gen-cubins' unquantized-auto-unread gave unknown there on 0.5.9-0.5.19 only, so
a BF16 DeepSeek-V4 on an offline B200 without the TRTLLM_GEN_BMM cubins passed on 0.5.20-0.5.23 (its override sets
flashinfer_trtllm_routed under conditions not modelled). The rule was kept off there because --moe-a2a-backend deepep
also read as unread; the deepep hook is read now (arg_groups/moe_hook.py handle_a2a_moe writes no runner for it), so
a BF16 model whose override needs no all-to-all backend (Qwen3-MoE, DeepSeek, GLM-4.x MoE) or has none keeps auto
(Triton), and Nemotron-H's override picks flashinfer_cutlass there. GLM-4.x MoE and Nemotron-H (0.5.9-0.5.19),
Llama 4 (0.5.9-0.5.23) and Gemma 4 (0.5.13-0.5.23) are read for a BF16 checkpoint. The gate runs in this process;
the model configs are this test's own minimal files in the shape of config.json."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ

from stackcheck.cli import main

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
BASE = {"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
        "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024, "intermediate_size": 4096}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "llama4": {"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text", "num_local_experts": 16,
               "num_experts_per_tok": 1, "intermediate_size_mlp": 8192, **BASE},
    "dsv4": {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4", "n_routed_experts": 16,
             "moe_intermediate_size": 512, **BASE},
    "qwen3moe": {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_experts": 16,
                 "moe_intermediate_size": 512, "norm_topk_prob": True, **BASE},
    "mixtral": {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "num_local_experts": 8,
                "num_experts_per_tok": 2, **BASE},
    "gemma4": {"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text", "enable_moe_block": True,
               "num_experts": 16, "top_k_experts": 2, "moe_intermediate_size": 512, **BASE},
    "glm45": {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "n_routed_experts": 16,
              "moe_intermediate_size": 512, **BASE},
    "cohere2": {"architectures": ["Cohere2MoeForCausalLM"], "model_type": "cohere2_moe", "num_experts": 16,
                "num_experts_per_tok": 2, "norm_topk_prob": True, **BASE},
    "nemh": {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "n_routed_experts": 16,
             "num_experts_per_tok": 2, "moe_intermediate_size": 512, "hybrid_override_pattern": "MEM*EM",
             "mlp_hidden_act": "relu2", **BASE, "num_hidden_layers": 6},
}  # fmt: skip


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imoe6")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    # b200-cubins-offline: 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins; SGLang per box
    facts = json.loads((CASES / "b200-cubins-offline" / "facts.json").read_text(encoding="utf-8"))
    boxes = [("b200", v) for v in ("0.5.12", "0.5.17", "0.5.19", "0.5.20", "0.5.23")] + [("h100", "0.5.23")]
    for box, version in boxes:
        doc = json.loads(json.dumps(facts))
        body = doc.get("facts", doc)
        body["packages"]["sglang"]["version"] = version
        if box == "h100":
            for gpu in body["gpus"]:
                gpu["name"], gpu["compute_capability"] = "NVIDIA H100 80GB HBM3", "9.0"
        (root / f"{box}-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def bmm_results(cwd: Path, box: str, model: str, *words: str) -> dict[str, str]:
    """The gate's (dry run, in this process) results of moe-trtllm-gen-cubins' rules of SGLang's own pick."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--facts", str(cwd / f"{box}.json"), "--dry-run", "--format", "json", "--", "python", "-m",
              "sglang.launch_server", "--model-path", str(cwd / model), "--attention-backend", "triton", "--tp", "8",
              *words])  # fmt: skip
    doc = json.loads(out.getvalue())
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    return {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"] if "auto" in str(r.get("rule"))}


@pytest.mark.parametrize("box", ["b200-0.5.20", "b200-0.5.23"])
def test_a_bf16_model_of_an_unmodelled_override_is_unknown_not_ok(cwd: Path, box: str) -> None:
    # model_overrides/deepseek_v4.py sets flashinfer_trtllm_routed with the runner auto (not modelled): never ok
    assert bmm_results(cwd, box, "dsv4") == {"unquantized-auto-unread": "unknown"}


def test_the_triton_runner_and_an_h100_box_are_not_judged(cwd: Path) -> None:
    assert bmm_results(cwd, "b200-0.5.23", "dsv4", "--moe-runner-backend", "triton") == {}
    assert bmm_results(cwd, "h100-0.5.23", "dsv4") == {}


def test_deepep_keeps_the_runner_auto_where_no_override_picks_under_it(cwd: Path) -> None:
    # the Qwen3-MoE override needs --moe-a2a-backend none (model_overrides/qwen3_moe.py), Mixtral has none, and the
    # deepep hook writes no runner: SGLang's auto, the unquantized MoE method's Triton runner (no trtllm-gen)
    assert bmm_results(cwd, "b200-0.5.23", "qwen3moe", "--moe-a2a-backend", "deepep") == {}
    assert bmm_results(cwd, "b200-0.5.20", "mixtral", "--moe-a2a-backend", "deepep") == {}
    # Nemotron-H's override picks flashinfer_cutlass under deepep (its other branch), not trtllm-gen
    assert bmm_results(cwd, "b200-0.5.23", "nemh", "--moe-a2a-backend", "deepep") == {}


def test_an_all_to_all_backend_not_read_or_an_unmodelled_override_stays_unknown(cwd: Path) -> None:
    unknown = {"unquantized-auto-unread": "unknown"}
    assert bmm_results(cwd, "b200-0.5.23", "qwen3moe", "--moe-a2a-backend", "mooncake") == unknown
    assert bmm_results(cwd, "b200-0.5.23", "dsv4", "--moe-a2a-backend", "deepep") == unknown


def test_glm45_before_0_5_20_is_read_for_a_bf16_checkpoint(cwd: Path) -> None:
    # 0.5.9-0.5.14's GLM-4.x branch picks flashinfer_trtllm for modelopt_fp4 only (server_args.py 0.5.12 :2372-2376):
    # a BF16 checkpoint keeps auto (Triton); 0.5.15-0.5.19's _glm4_moe_overrides add `None` (0.5.17 overrides.py
    # :1335-1339): trtllm_bf16_moe, refused without the cubins. Both were unknown (unmodelled)
    assert bmm_results(cwd, "b200-0.5.12", "glm45") == {}
    assert bmm_results(cwd, "b200-0.5.17", "glm45").get("unquantized-auto") == "fail"
    assert bmm_results(cwd, "b200-0.5.17", "glm45", "--moe-runner-backend", "triton") == {}


def test_nemotron_h_before_0_5_20_is_read_for_a_bf16_checkpoint(cwd: Path) -> None:
    # 0.5.9-0.5.12 pick a runner for a ModelOpt Nemotron-H only (0.5.12 arg_groups/nemotron_h_hook.py:15-40): auto;
    # 0.5.13-0.5.19 add `model_config.quantization is None` (0.5.17 overrides.py :1205-1209): trtllm_bf16_moe
    assert bmm_results(cwd, "b200-0.5.12", "nemh") == {}
    assert bmm_results(cwd, "b200-0.5.17", "nemh").get("unquantized-auto") == "fail"


def test_llama4_and_gemma4_without_quantization_keep_auto(cwd: Path) -> None:
    # every release's Llama 4 branch picks flashinfer_trtllm for fp8 / modelopt_fp8 only (model_overrides/llama4.py
    # 0.5.23 :38-40, server_args.py 0.5.12 :2205-2206), Gemma 4's for modelopt_fp4 only (gemma4.py 0.5.23 :45-48,
    # overrides.py 0.5.17 :1020-1023): a BF16 one keeps auto (were unknown on 0.5.9-0.5.19)
    assert bmm_results(cwd, "b200-0.5.12", "llama4") == {}
    assert bmm_results(cwd, "b200-0.5.17", "gemma4") == {}
    assert bmm_results(cwd, "b200-0.5.23", "gemma4") == {}


def test_cohere2_moe_on_0_5_19_is_read(cwd: Path) -> None:
    # 0.5.19's model_overrides/cohere2_moe.py is 0.5.20's: flashinfer_trtllm for no quantization on SM100 (:37-48)
    assert bmm_results(cwd, "b200-0.5.19", "cohere2").get("unquantized-auto") == "fail"
