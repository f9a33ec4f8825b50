"""imodel3: a DeepSeek-V2-style MoE (topk_method greedy / group_limited_greedy: softmax-scored top-k, no
e_score_correction_bias) on --moe-runner-backend flashinfer_trtllm. SGLang's deepseek_v2.py MoE hands the trtllm-gen
runner routing_method_type DeepSeekV3 (config.routing_method_type's default); SGLang 0.5.9-0.5.22 hand the runner
the router logits whatever the routing, and FlashInfer's DeepSeekV3 router scores them with a sigmoid plus a bias
(zero here): other experts, other weights, no error. With norm_topk_prob true the BF16 path's renormalize assertion
passes, and the gate allowed the launch on a B200 with the cubins present (a false pass). 0.5.23 keeps such a top-k
in SGLang (_can_bypass_trtllm_routing needs the bias): BF16 and FP8 right, FP4 an assertion. The configs are this
test's own minimal files in the shape of config.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
RULE = "refusal moe-trtllm-deepseek-softmax-routing"
BASE: dict[str, Any] = {
    "hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 16,
    "vocab_size": 1024, "kv_lora_rank": 512, "q_lora_rank": None, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128,
    "v_head_dim": 128, "n_routed_experts": 64, "num_experts_per_tok": 6, "moe_intermediate_size": 1408,
    "moe_layer_freq": 1, "first_k_dense_replace": 1, "torch_dtype": "bfloat16",
}  # fmt: skip
FP8 = {"quant_method": "fp8", "weight_block_size": [128, 128], "activation_scheme": "dynamic"}
MODELS: dict[str, dict[str, Any]] = {
    # V2-Lite's shape: greedy, one group; norm_topk_prob true passes the BF16 path's renormalize assertion
    "v2-lite": {
        **BASE,
        "architectures": ["DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v2",
        "topk_method": "greedy",
        "n_group": 1,
        "topk_group": 1,
        "norm_topk_prob": True,
        "scoring_func": "softmax",
    },
    # V2's shape: group_limited_greedy over 8 groups
    "v2": {
        **BASE,
        "architectures": ["DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v2",
        "topk_method": "group_limited_greedy",
        "n_group": 8,
        "topk_group": 3,
        "norm_topk_prob": True,
        "scoring_func": "softmax",
    },
    # no topk_method: transformers' DeepseekV2Config defaults it to greedy
    "v2-default": {
        **BASE,
        "architectures": ["DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v2",
        "norm_topk_prob": True,
        "scoring_func": "softmax",
    },
    "v2-fp8": {
        **BASE,
        "architectures": ["DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v2",
        "topk_method": "group_limited_greedy",
        "n_group": 8,
        "topk_group": 3,
        "norm_topk_prob": True,
        "scoring_func": "softmax",
        "quantization_config": FP8,
    },
    # a routing_method_type config.json names: not read here
    "v2-named": {
        **BASE,
        "architectures": ["DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v2",
        "topk_method": "greedy",
        "n_group": 1,
        "topk_group": 1,
        "norm_topk_prob": True,
        "routing_method_type": 1,
    },
    # V3's own routing: sigmoid with a correction bias, what the DeepSeekV3 router computes
    "v3": {
        **BASE,
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "topk_method": "noaux_tc",
        "n_group": 8,
        "topk_group": 4,
        "norm_topk_prob": True,
        "scoring_func": "sigmoid",
    },
    # a V3 architecture with V2's routing: SGLang may put it on the runner itself on SM100
    "v3-greedy": {
        **BASE,
        "architectures": ["DeepseekV3ForCausalLM"],
        "model_type": "deepseek_v3",
        "topk_method": "greedy",
        "n_group": 1,
        "topk_group": 1,
        "norm_topk_prob": True,
        "scoring_func": "softmax",
    },
}


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imodel3-dsv2")
    for name, cfg in MODELS.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    facts = json.loads((CASES / "b200-cubin-package" / "facts.json").read_text(encoding="utf-8"))
    for version in ("0.5.5", "0.5.8", "0.5.9", "0.5.14", "0.5.20", "0.5.22", "0.5.23"):
        doc = json.loads(json.dumps(facts))
        inner = doc.get("facts", doc)
        inner["packages"]["sglang"]["version"] = version
        (root / f"b200-{version}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def gate(cwd: Path, version: str, model: str, *words: str) -> dict[str, Any]:
    # b200-cubin-package: 8 x B200, torch cu130, the TRTLLM_GEN_BMM cubins present; SGLang set per test
    doc: dict[str, Any] = stackcheck_json(
        "gate", "--facts", str(cwd / f"b200-{version}.json"), "--cwd", str(cwd), "--dry-run", "--format", "json",
        "--", "python", "-m", "sglang.launch_server", "--model-path", model, "--attention-backend", "triton",
        "--tp", "8", *words,
    )  # fmt: skip
    return doc


def refusal(cwd: Path, version: str, model: str, *words: str) -> list[str]:
    return [str(f.get("status")) for f in gate(cwd, version, model, *words)["reasons"] if f["feature"] == RULE]


TRTLLM = ("--moe-runner-backend", "flashinfer_trtllm")


@pytest.mark.parametrize("version", ["0.5.9", "0.5.14", "0.5.20", "0.5.22"])
def test_v2_routing_on_the_trtllm_gen_runner_is_refused(cwd: Path, version: str) -> None:
    for model in ("v2-lite", "v2", "v2-default", "v2-fp8"):
        assert refusal(cwd, version, model, *TRTLLM) == ["blocked"], (version, model)


def test_the_reason_names_the_model_and_the_router(cwd: Path) -> None:
    found = [f for f in gate(cwd, "0.5.20", "v2", *TRTLLM)["reasons"] if f["feature"] == RULE]
    text = json.dumps(found)
    assert "DeepseekV2ForCausalLM" in text and "group_limited_greedy" in text and "DeepSeekV3 router" in text
    assert "sglang 0.5.9, 0.5.12, 0.5.16, 0.5.20 and 0.5.22 wheels" in text  # the release entry's source


def test_older_releases_by_what_was_read(cwd: Path) -> None:
    assert refusal(cwd, "0.5.8", "v2-lite", *TRTLLM) == ["blocked"]  # BF16 trtllm_bf16_moe, layer's DeepSeekV3
    assert refusal(cwd, "0.5.5", "v2-fp8", *TRTLLM) == ["blocked"]  # fp8.py's routing_method_type=2
    assert refusal(cwd, "0.5.5", "v2-fp8", *TRTLLM, "--quantization", "modelopt_fp4") == ["unknown"]  # not read


def test_sglang_0_5_23_keeps_the_top_k_itself(cwd: Path) -> None:
    assert refusal(cwd, "0.5.23", "v2-lite", *TRTLLM) == []  # BF16: SGLang's own top-k, routed kernel
    assert refusal(cwd, "0.5.23", "v2-fp8", *TRTLLM) == []  # FP8 block: the same
    assert refusal(cwd, "0.5.23", "v2", *TRTLLM, "--quantization", "modelopt_fp4") == ["blocked"]  # FP4 asserts
    assert refusal(cwd, "0.5.23", "v2", *TRTLLM, "--quantization", "w4afp8") == ["unknown"]  # path not read


def test_other_runners_models_and_unread_keys(cwd: Path) -> None:
    for version in ("0.5.20", "0.5.23"):
        assert refusal(cwd, version, "v3", *TRTLLM) == []  # noaux_tc: the router's own policy
        assert refusal(cwd, version, "v2", "--moe-runner-backend", "triton") == []
        assert refusal(cwd, version, "v2", "--moe-runner-backend", "flashinfer_trtllm_routed") == []
        assert refusal(cwd, version, "v2") == []  # SGLang never picks the runner for DeepseekV2ForCausalLM
    assert refusal(cwd, "0.5.20", "v2-named", *TRTLLM) == ["unknown"]
    assert refusal(cwd, "0.5.20", "/models/not-here", *TRTLLM) == ["unknown"]  # config.json not read
    # a V3 architecture with V2's routing and no runner given: SGLang's own pick on SM100 is not modelled for it
    assert refusal(cwd, "0.5.20", "v3-greedy") == ["unknown"]
    assert refusal(cwd, "0.5.23", "v3-greedy") == []  # BF16 on 0.5.23: right whichever runner


def test_recommend_agrees_with_the_gate(cwd: Path) -> None:
    # tests/recommend/b200: SGLang 0.5.20 on 8 x B200 with the JIT toolkit read (recommend proposes lines there)
    facts = Path(__file__).resolve().parents[1] / "recommend" / "b200" / "facts.json"
    v2 = stackcheck_json("recommend", "--facts", str(facts), "--model-path", str(cwd / "v2"), "--tp", "8",
                         "--no-plan", "--format", "json")  # fmt: skip
    line = [str(w) for w in v2.get("command") or []]
    assert line and "flashinfer_trtllm" not in line  # recommend never puts a V2 routing on the trtllm-gen runner
    gated = stackcheck_json("gate", "--facts", str(facts), "--cwd", str(cwd), "--dry-run", "--format", "json", "--",
                            *line)  # fmt: skip
    assert [f for f in gated["reasons"] if f["feature"] == RULE] == []
    # a V3 architecture with V2's routing: the gate is unknown (SGLang's own pick), so recommend proposes no line
    v3 = stackcheck_json("recommend", "--facts", str(facts), "--model-path", str(cwd / "v3-greedy"), "--tp", "8",
                         "--no-plan", "--format", "json")  # fmt: skip
    assert not v3.get("command")
    assert [r["status"] for r in v3["refused"] if r["subject"] == RULE] == ["unknown"]
