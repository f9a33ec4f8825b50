"""imoe5: SGLang 0.5.9-0.5.19 already pick FlashInfer's trtllm-gen MoE themselves on SM100 where
--moe-runner-backend is auto (or not given): the DeepSeek branch (server_args.py 0.5.12-0.5.14, then
arg_groups/overrides.py _deepseek_moe_quant_resolution) and the Qwen3-MoE family (server_args.py, then
_qwen3_moe_family_overrides, 0.5.19 model_overrides/qwen3_moe.py) set flashinfer_trtllm for an FP8 / ModelOpt
checkpoint or none at all (a BF16 model then runs trtllm_bf16_moe, which loads the TRTLLM_GEN_BMM cubins).
launch.moe_runner_auto was read for 0.5.20-0.5.23 only (and the Kimi INT4 pick before), so a B200 box whose FlashInfer
lacks those cubins and may not download them was allowed on those releases: a false pass. The gate runs in this
process; the model configs are this test's own minimal files in the shape of config.json."""

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
MLA = {"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": 1536}
BASE = {"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
        "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024, "moe_intermediate_size": 512}  # fmt: skip
MODELS: dict[str, dict[str, Any]] = {
    "qwen3moe": {"architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "num_experts": 16, **BASE},
    "ds3": {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "n_routed_experts": 16,
            "topk_method": "noaux_tc", **BASE, "num_key_value_heads": 16, **MLA},
    "glm45": {"architectures": ["Glm4MoeForCausalLM"], "model_type": "glm4_moe", "n_routed_experts": 16, **BASE},
}  # fmt: skip


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imoe5")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    # b200-cubins-offline: 8 x B200, torch cu130, FLASHINFER_NO_DOWNLOAD=1, no TRTLLM_GEN_BMM cubins; SGLang per test
    facts = json.loads((CASES / "b200-cubins-offline" / "facts.json").read_text(encoding="utf-8"))
    for version in ("0.5.8", "0.5.9", "0.5.12", "0.5.15", "0.5.19"):
        for box in ("b200", "h100"):
            doc = json.loads(json.dumps(facts))
            body = doc.get("facts", doc)
            body["packages"]["sglang"]["version"] = version
            if box == "h100":
                for gpu in body["gpus"]:
                    gpu["name"], gpu["compute_capability"] = "NVIDIA H100 80GB HBM3", "9.0"
            (root / f"{box}-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def bmm_results(cwd: Path, box: str, version: str, model: str, *words: str) -> dict[str, str]:
    """The gate's (dry run, in this process) results of moe-trtllm-gen-cubins' rules of SGLang's own pick, and its
    decision under the key "decision"."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--facts", str(cwd / f"{box}-{version}.json"), "--dry-run", "--format", "json", "--",
              "python", "-m", "sglang.launch_server", "--model-path", str(cwd / model), "--attention-backend",
              "triton", "--tp", "8", *words])  # fmt: skip
    doc = json.loads(out.getvalue())
    found = [f for f in doc["reasons"] if f["feature"] == "moe-trtllm-gen-cubins"]
    got = {str(r.get("rule")): str(r["result"]) for f in found for r in f["reasons"] if "auto" in str(r.get("rule"))}
    return {**got, "decision": str(doc["decision"])} if got else got


REFUSED = [("0.5.9", "qwen3moe"), ("0.5.12", "qwen3moe"), ("0.5.19", "ds3"), ("0.5.15", "ds3")]


@pytest.mark.parametrize(("version", "model"), REFUSED)
def test_unquantized_moe_on_b200_without_the_cubins_is_refused(cwd: Path, version: str, model: str) -> None:
    got = bmm_results(cwd, "b200", version, model)
    assert (got.get("unquantized-auto"), got.get("decision")) == ("fail", "refuse"), (version, model)


def test_the_triton_runner_an_h100_box_and_an_unread_release_are_not_refused(cwd: Path) -> None:
    assert bmm_results(cwd, "b200", "0.5.19", "qwen3moe").get("unquantized-auto") == "fail"  # the same launch, auto
    assert bmm_results(cwd, "b200", "0.5.19", "qwen3moe", "--moe-runner-backend", "triton") == {}
    assert bmm_results(cwd, "h100", "0.5.19", "qwen3moe") == {}
    assert bmm_results(cwd, "h100", "0.5.12", "ds3") == {}
    assert bmm_results(cwd, "b200", "0.5.8", "qwen3moe") == {}  # 0.5.8 not read: absent, as before


def test_an_override_not_modelled_is_unknown_not_ok(cwd: Path) -> None:
    # (imoe6 modelled GLM-4.x MoE's BF16 pick: 0.5.15's _glm4_moe_overrides picks flashinfer_trtllm for it)
    assert bmm_results(cwd, "b200", "0.5.15", "glm45").get("unquantized-auto") == "fail"
    assert bmm_results(cwd, "b200", "0.5.9", "ds3").get("unquantized-auto-unread") == "unknown"  # made fp8: unread


def test_a_qwen3_moe_top_k_without_renormalize_is_refused_on_0_5_9(cwd: Path) -> None:
    # this config states no norm_topk_prob (Qwen3MoeConfig's default: false); 0.5.9's FlashInferFusedMoE asserts it
    assert bmm_results(cwd, "b200", "0.5.9", "qwen3moe").get("unquantized-auto-renormalize") == "fail"
