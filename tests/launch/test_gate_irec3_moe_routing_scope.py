"""irec3: iasan scoped jit-toolchain's asan-header rules (FlashInfer's memoryUtils.cu includes
<sanitizer/asan_interface.h>) to every launch of an MoE model, since which MoE models take SGLang's DeepSeek-V3 fused
routing (FlashInfer's fused_topk_deepseek, a JIT module compiling memoryUtils.cu) was not read from config.json; and
to every launch whose SGLang 0.5.20-0.5.23 pick of the MoE runner is flashinfer_trtllm, which SGLang makes on SM100
only (arg_groups/overrides.py is_sm100). So a Qwen3 MoE BF16 launch on an H200 whose gcc lacks the header was refused,
though its top-k is neither grouped nor biased (models/qwen3_moe.py TopK(use_grouped_topk=False), every wheel
0.5.1-0.5.23) and its runner on Hopper is SGLang's Triton MoE. Now the routing scope reads launch.model_dsv3_routing
(false only for the architectures read, refusals.NO_DSV3_ROUTING_ARCHITECTURES) and the runner scope reads the pick as
"auto" where the box has none of its majors. The box is tests/cases/h200-newest (SGLang 0.5.23, FlashInfer 0.7.2, no
flashinfer-jit-cache) with the header missing; the configs are this test's own minimal files."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ, stackcheck_json

from stackcheck.knowledge.loader import load
from stackcheck.launch.refusals import auto_pick_off_gpus, launch_model_dsv3_routing

__all__ = ["scrubbed_environ"]

CASES = Path(__file__).resolve().parents[1] / "cases"
RULE = "flashinfer-jit-asan-header"


def _config(arch: str, model_type: str, **extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"architectures": [arch], "model_type": model_type, "hidden_size": 2048,
                            "num_hidden_layers": 4, "num_attention_heads": 16, "num_key_value_heads": 4,
                            "head_dim": 128, "torch_dtype": "bfloat16", "vocab_size": 1024}  # fmt: skip
    base.update(extra)
    return base


QWEN3 = _config("Qwen3MoeForCausalLM", "qwen3_moe", num_experts=16, moe_intermediate_size=512, num_experts_per_tok=4)
DS3 = _config("DeepseekV3ForCausalLM", "deepseek_v3", n_routed_experts=16, moe_intermediate_size=2048, n_group=4,
              topk_group=2, num_experts_per_tok=4, topk_method="noaux_tc", scoring_func="sigmoid", moe_layer_freq=1,
              kv_lora_rank=512, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
              q_lora_rank=1536)  # fmt: skip
LLAMA = _config("LlamaForCausalLM", "llama", intermediate_size=8192)


@pytest.fixture(scope="module")
def cwd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("irec3-models")
    for name, cfg in {"qwen3moe": QWEN3, "ds3": DS3, "llama": LLAMA}.items():
        (root / name).mkdir()
        (root / name / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    return root


def _facts(tmp: Path, gpu: str = "H200") -> Path:
    doc = copy.deepcopy(json.loads((CASES / "h200-newest" / "facts.json").read_text()))
    doc["facts"]["jit"].update(flashinfer_host="nvcc-default", nvcc_host_found=True, nvcc_host="/usr/bin/gcc",
                               nvcc_host_gnu_major=13, nvcc_host_asan_header_found=False)  # fmt: skip
    if gpu == "B200":
        for g in doc["facts"]["gpus"]:
            g.update(name="NVIDIA B200", compute_capability="10.0", memory_bytes=191_000_000_000)
    path = tmp / f"facts-{gpu}.json"
    path.write_text(json.dumps(doc))
    return path


def _gate(facts: Path, cwd: Path, model: str, *flags: str) -> tuple[str, dict[str, str]]:
    doc = stackcheck_json("gate", "--facts", str(facts), "--cwd", str(cwd), "--dry-run", "--format", "json", "--",
                          "python", "-m", "sglang.launch_server", "--model-path", model, "--tp", "8",
                          *flags)  # fmt: skip
    rules = {
        str(x.get("rule")): str(x.get("result"))
        for r in doc.get("reasons") or []
        if r.get("feature") == "jit-toolchain"
        for x in r.get("reasons") or []
    }
    return str(doc["decision"]), rules


def test_qwen3_moe_bf16_on_hopper_is_allowed(tmp_path: Path, cwd: Path) -> None:
    # fails before the fix: refused for the header (model_moe true; moe_runner_auto flashinfer_trtllm off SM100)
    decision, rules = _gate(_facts(tmp_path), cwd, "qwen3moe")
    assert decision == "allow" and RULE not in rules, (decision, rules)


def test_qwen3_moe_bf16_on_sm100_takes_trtllm_gen_and_is_refused(tmp_path: Path, cwd: Path) -> None:
    # SGLang 0.5.20-0.5.23 pick flashinfer_trtllm for Qwen3 MoE on SM100: gen_trtllm_gen_fused_moe_sm100_module
    decision, rules = _gate(_facts(tmp_path, "B200"), cwd, "qwen3moe")
    assert decision == "refuse" and rules.get(RULE) == "fail", (decision, rules)


@pytest.mark.parametrize(("model", "flags"), [("ds3", ("--moe-runner-backend", "triton")), ("ds3", ())])
def test_deepseek_v3_routing_stays_refused(tmp_path: Path, cwd: Path, model: str, flags: tuple[str, ...]) -> None:
    decision, rules = _gate(_facts(tmp_path), cwd, model, *flags)
    assert decision == "refuse" and rules.get(RULE) == "fail", (decision, rules)


def test_a_qwen3_moe_with_a_flashinfer_runner_given_stays_refused(tmp_path: Path, cwd: Path) -> None:
    decision, rules = _gate(_facts(tmp_path), cwd, "qwen3moe", "--moe-runner-backend", "flashinfer_cutlass")
    assert decision == "refuse" and rules.get(RULE) == "fail", (decision, rules)


def test_a_model_not_read_stays_in_scope(tmp_path: Path, cwd: Path) -> None:
    # a hub id not in the cache: whether it is MoE, and its routing, are not known (fail closed)
    decision, rules = _gate(_facts(tmp_path), cwd, "Qwen/Qwen3-30B-A3B")
    assert decision == "refuse" and rules.get(RULE) == "fail", (decision, rules)


def test_the_routing_reading() -> None:
    assert launch_model_dsv3_routing({"model": QWEN3}, "0.5.23") is False
    assert launch_model_dsv3_routing({"model": LLAMA}, "0.5.23") is False
    assert launch_model_dsv3_routing({"model": DS3}, "0.5.23") is None  # (may take it: not known, in scope)
    assert launch_model_dsv3_routing({"model": QWEN3}, "0.5.24") is None  # a release not read
    assert launch_model_dsv3_routing({"model": QWEN3}, None) is None
    assert launch_model_dsv3_routing({"model": QWEN3, "draft model": None}, "0.5.23") is None  # draft not read
    assert launch_model_dsv3_routing({"model": QWEN3, "draft model": DS3}, "0.5.23") is None
    assert launch_model_dsv3_routing({"model": LLAMA, "draft model": QWEN3}, "0.5.20") is False
    assert launch_model_dsv3_routing({}, "0.5.23") is None


def test_the_pick_off_the_gpus() -> None:
    mapping = load([], env={}).launch
    assert auto_pick_off_gpus("flashinfer_trtllm", mapping, "0.5.23", {9}) is True
    assert auto_pick_off_gpus("flashinfer_trtllm", mapping, "0.5.23", {10}) is False
    assert auto_pick_off_gpus("flashinfer_trtllm", mapping, "0.5.23", {9, 10}) is False
    assert auto_pick_off_gpus("flashinfer_trtllm", mapping, "0.5.23", None) is False  # a GPU not read
    assert auto_pick_off_gpus("unread", mapping, "0.5.23", {9}) is False
    # no pick read there (0.5.8; imoe5 read the picks of 0.5.9-0.5.19, on major 10 alone: off an H200)
    assert auto_pick_off_gpus("flashinfer_trtllm", mapping, "0.5.8", {9}) is False
    assert auto_pick_off_gpus("flashinfer_trtllm", mapping, "0.5.9", {9}) is True
    assert auto_pick_off_gpus("flashinfer_trtllm", mapping, "0.5.19", {9}) is True


def test_recommend_proposes_the_qwen3_moe_line_the_gate_allows(tmp_path: Path, cwd: Path) -> None:
    facts = _facts(tmp_path)
    doc = stackcheck_json("recommend", "--facts", str(facts), "--model-path", str(cwd / "qwen3moe"), "--tp", "8",
                          "--no-plan", "--format", "json")  # fmt: skip
    line = [str(w) for w in doc.get("command") or []]
    assert line, doc.get("refused")
    gate = stackcheck_json("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line)
    assert gate["decision"] == "allow", gate["reasons"]
