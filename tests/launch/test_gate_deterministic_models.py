"""Deterministic inference's model check and its second switch (launch.json refusal deterministic-attention-backend,
read in every wheel 0.5.3-0.5.23: tests/launch/test_gate_deterministic_registry.py).

- From 0.5.5, after the list check, SGLang checks a model of its DeepSeek list (absorbed MLA: DeepSeek V2/V3/V3.2,
  then Mistral Large 3, GLM-5 DSA, GLM-4.7-Flash...) once more: fa3 or triton only (0.5.5-0.5.16); ascend, fa3, fa4
  or triton from 0.5.17, fa4 only on SM100/SM110. DeepSeek-V2-Lite with --attention-backend flashinfer and the flag
  passed the gate before and raised a ValueError at argument parsing;
- From 0.5.5, --rl-on-policy-target turns deterministic inference on by itself: the same checks and the same
  fallback hold without --enable-deterministic-inference."""

from __future__ import annotations

from typing import Any

import pytest
from gate_cli import DEEPSEEK_V2_LITE, LLAMA3, config_rule_status

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys

FLAG = "--enable-deterministic-inference"
RL = ("--rl-on-policy-target", "fsdp")
GLM_FLASH = {
    "architectures": ["Glm4MoeLiteForCausalLM"], "model_type": "glm4_moe_lite", "hidden_size": 2048,
    "num_attention_heads": 20, "num_key_value_heads": 20, "kv_lora_rank": 512, "v_head_dim": 256,
}  # fmt: skip


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def rule(
    mapping: dict[str, Any],
    version: str,
    majors: set[int] | None,
    config: dict[str, Any] | None,
    *flags: str,
    torch_cuda: str | None = "12.9",
) -> str:
    return config_rule_status(
        mapping, "deterministic-attention-backend", version, majors, config, *flags, torch_cuda=torch_cuda
    )


def test_a_deepseek_model_on_a_backend_outside_its_own_list_is_refused(mapping: dict[str, Any]) -> None:
    """flashinfer is in the deterministic list, but not in the DeepSeek one (0.5.5 on): ValueError; Llama 3 starts."""
    for version in ("0.5.5", "0.5.6", "0.5.9", "0.5.12", "0.5.15", "0.5.16", "0.5.17", "0.5.19", "0.5.23"):
        got = rule(mapping, version, {9}, DEEPSEEK_V2_LITE, FLAG, "--attention-backend", "flashinfer")
        assert got == "blocked", version
        assert rule(mapping, version, {9}, LLAMA3, FLAG, "--attention-backend", "flashinfer") == "ok", version
        assert rule(mapping, version, {9}, DEEPSEEK_V2_LITE, FLAG, "--attention-backend", "triton") == "ok", version
        # the model not read: it may be one of the list (never ok)
        assert rule(mapping, version, {9}, None, FLAG, "--attention-backend", "flashinfer") == "unknown", version
    # 0.5.3 and 0.5.4 have no DeepSeek check
    for version in ("0.5.3", "0.5.4"):
        assert rule(mapping, version, {9}, DEEPSEEK_V2_LITE, FLAG, "--attention-backend", "flashinfer") == "ok"


def test_fa4_for_a_deepseek_model_needs_0_5_17_and_sm100_or_sm110(mapping: dict[str, Any]) -> None:
    """fa4 is in the deterministic list from 0.5.16; the DeepSeek check takes it from 0.5.17, on SM100/SM110 only."""
    fa4 = (FLAG, "--attention-backend", "fa4")
    assert rule(mapping, "0.5.16", {10}, DEEPSEEK_V2_LITE, *fa4) == "blocked"
    for version in ("0.5.17", "0.5.18", "0.5.23"):
        assert rule(mapping, version, {10}, DEEPSEEK_V2_LITE, *fa4) == "ok", version
        assert rule(mapping, version, {11}, DEEPSEEK_V2_LITE, *fa4) == "ok", version
        assert rule(mapping, version, {12}, DEEPSEEK_V2_LITE, *fa4) == "blocked", version
        assert rule(mapping, version, {9, 10}, DEEPSEEK_V2_LITE, *fa4) == "blocked", version
        assert rule(mapping, version, None, DEEPSEEK_V2_LITE, *fa4) == "unknown", version
        assert rule(mapping, version, {12}, LLAMA3, *fa4) == "ok", version


def test_the_deepseek_list_grows_per_release(mapping: dict[str, Any]) -> None:
    """GLM-4.7-Flash (Glm4MoeLiteForCausalLM) joins the list in 0.5.18."""
    flashinfer = (FLAG, "--attention-backend", "flashinfer")
    assert rule(mapping, "0.5.17", {9}, GLM_FLASH, *flashinfer) == "ok"
    assert rule(mapping, "0.5.18", {9}, GLM_FLASH, *flashinfer) == "blocked"
    assert rule(mapping, "0.5.23", {9}, GLM_FLASH, *flashinfer) == "blocked"


def test_the_default_pick_of_a_deepseek_model_on_sm100_is_not_passed(mapping: dict[str, Any]) -> None:
    """0.5.5-0.5.11 run the default picker first: flashinfer for an MLA model on SM100 (launch.json defaults), which
    the DeepSeek check refuses: unknown (its torch CUDA minimum is not read here), never ok; Hopper's pick passes.
    From 0.5.12 the fallback picks triton on SM100 for these models: ok."""
    for version in ("0.5.5", "0.5.6", "0.5.9", "0.5.11"):
        assert rule(mapping, version, {10}, DEEPSEEK_V2_LITE, FLAG) == "unknown", version
        assert rule(mapping, version, {9}, DEEPSEEK_V2_LITE, FLAG) == "ok", version
    for version in ("0.5.12", "0.5.23"):
        assert rule(mapping, version, {10}, DEEPSEEK_V2_LITE, FLAG) == "ok", version


def test_rl_on_policy_target_turns_the_check_on(mapping: dict[str, Any]) -> None:
    """--rl-on-policy-target (0.5.5 on) sets enable_deterministic_inference before the check."""
    for version in ("0.5.5", "0.5.9", "0.5.12", "0.5.19", "0.5.23"):
        assert rule(mapping, version, {10}, LLAMA3, *RL, "--attention-backend", "trtllm_mha") == "blocked", version
        assert rule(mapping, version, {10}, LLAMA3, *RL, "--attention-backend", "triton") == "ok", version
        got = rule(mapping, version, {9}, DEEPSEEK_V2_LITE, *RL, "--attention-backend", "flashinfer")
        assert got == "blocked", version
    # the flag is not in 0.5.4 (judged elsewhere): this rule stays silent
    assert rule(mapping, "0.5.4", {10}, LLAMA3, *RL, "--attention-backend", "trtllm_mha") == "ok"


def picks(mapping: dict[str, Any], version: str, majors: set[int], *flags: str) -> list[str]:
    from stackcheck.launch.refusals import auto_backend_features

    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    keys = attention_keys(LLAMA3)
    arch = str(LLAMA3["architectures"][0])
    return sorted(f for f, _ in auto_backend_features(d, mapping, version, majors, "12.9", False, arch, keys))


def test_rl_on_policy_target_gets_the_fallback_pick(mapping: dict[str, Any]) -> None:
    """0.5.12 on: --rl-on-policy-target alone makes SGLang fall back to fa3 on SM110 (as the flag does)."""
    for version in ("0.5.12", "0.5.23"):
        assert picks(mapping, version, {11}, *RL) == picks(mapping, version, {11}, FLAG) == ["attention-fa3"]


MINICPM3 = {
    "architectures": ["MiniCPM3ForCausalLM"], "model_type": "minicpm3", "hidden_size": 2560,
    "num_attention_heads": 40, "num_key_value_heads": 40, "kv_lora_rank": 256, "v_head_dim": 64,
}  # fmt: skip
GLM5_NEXT = {"architectures": ["Glm5NextForConditionalGeneration"], "model_type": "glm5_next", "hidden_size": 4096}


def fallback(
    mapping: dict[str, Any], version: str, majors: set[int], config: dict[str, Any], cuda: str | None, *flags: str
) -> list[str]:
    from stackcheck.launch.refusals import auto_backend_features

    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    arch = str(config["architectures"][0])
    mla = "kv_lora_rank" in config
    got = auto_backend_features(d, mapping, version, majors, cuda, mla, arch, attention_keys(config))
    return sorted(f for f, _ in got)


def test_the_fallback_keys_on_sglangs_deepseek_list_not_on_mla(mapping: dict[str, Any]) -> None:
    """0.5.12 on, SM100/SM120: triton for a model of the fallback's DeepSeek list, flashinfer for every other model,
    an MLA one (MiniCPM3) included (before: triton required, which SGLang does not use there); GLM-4.7-Flash joins
    the fallback's list in 0.5.18."""
    for version in ("0.5.12", "0.5.17", "0.5.23"):
        assert fallback(mapping, version, {12}, MINICPM3, "12.9", FLAG) == ["attention-flashinfer"], version
        assert fallback(mapping, version, {10}, DEEPSEEK_V2_LITE, "12.9", FLAG) == ["attention-triton"], version
    assert fallback(mapping, "0.5.17", {12}, GLM_FLASH, "12.9", FLAG) == ["attention-flashinfer"]
    assert fallback(mapping, "0.5.18", {12}, GLM_FLASH, "12.9", FLAG) == ["attention-triton"]


def test_an_older_torch_cuda_on_sm100_or_sm120_gets_fa3(mapping: dict[str, Any]) -> None:
    """is_sm100_supported / is_sm120_supported need torch CUDA >= 12.8: below it the fallback gives fa3 there
    (0.5.4, 0.5.12 on), which the gate now requires (before: nothing); an unknown torch CUDA requires both picks."""
    for version in ("0.5.4", "0.5.12", "0.5.23"):
        assert fallback(mapping, version, {10}, LLAMA3, "12.6", FLAG) == ["attention-fa3"], version
        assert fallback(mapping, version, {12}, LLAMA3, "12.9", FLAG) == ["attention-flashinfer"], version
        both = fallback(mapping, version, {12}, LLAMA3, None, FLAG)
        assert {"attention-fa3", "attention-flashinfer"} <= set(both), version
    assert fallback(mapping, "0.5.23", {10}, LLAMA3, "12.6", *RL) == ["attention-fa3"]


def test_a_model_the_check_lists_but_the_fallback_does_not(mapping: dict[str, Any]) -> None:
    """0.5.20 on: Glm5NextForConditionalGeneration is in the check's DeepSeek list, not in the fallback's: on
    SM100/SM120 (torch CUDA >= 12.8) the fallback gives it flashinfer, which the check refuses: unknown (the rules do
    not read torch CUDA), never ok; Hopper's fa3 passes."""
    for version in ("0.5.20", "0.5.23"):
        assert rule(mapping, version, {10}, GLM5_NEXT, FLAG) == "unknown", version
        assert rule(mapping, version, {12}, GLM5_NEXT, FLAG) == "unknown", version
        assert rule(mapping, version, {9}, GLM5_NEXT, FLAG) == "ok", version
        assert rule(mapping, version, {10}, DEEPSEEK_V2_LITE, FLAG) == "ok", version


def test_fa4_for_a_deepseek_model_on_sm100_needs_a_torch_cuda_build_of_12_8(mapping: dict[str, Any]) -> None:
    """SGLang's SM100/SM110 test of the fa4 clause (is_sm100_or_sm110_supported, utils/common.py 0.5.17-0.5.23) also
    asks torch.version.cuda >= 12.8: with a CUDA 12.6 torch on a B200 it is False and the check raises ValueError.
    Before, only the majors were read and the gate passed that launch (ok); an unknown torch CUDA build passed too."""
    fa4 = (FLAG, "--attention-backend", "fa4")
    for version in ("0.5.17", "0.5.20", "0.5.23"):
        for majors in ({10}, {11}):
            assert rule(mapping, version, majors, DEEPSEEK_V2_LITE, *fa4, torch_cuda="12.6") == "blocked", version
            assert rule(mapping, version, majors, DEEPSEEK_V2_LITE, *fa4, torch_cuda="12.8") == "ok", version
            assert rule(mapping, version, majors, DEEPSEEK_V2_LITE, *fa4, torch_cuda="13.0") == "ok", version
            assert rule(mapping, version, majors, DEEPSEEK_V2_LITE, *fa4, torch_cuda=None) == "unknown", version
        # a model outside SGLang's DeepSeek list is not checked again: torch's build does not matter
        assert rule(mapping, version, {10}, LLAMA3, *fa4, torch_cuda="12.6") == "ok", version
        # another backend of the list is not tied to the GPU
        assert (
            rule(mapping, version, {10}, DEEPSEEK_V2_LITE, FLAG, "--attention-backend", "triton", torch_cuda="12.6")
            == "ok"
        )
    # the release before the clause: fa4 is refused for the model whatever torch is
    assert rule(mapping, "0.5.16", {10}, DEEPSEEK_V2_LITE, *fa4, torch_cuda="12.9") == "blocked"


def test_the_refusal_says_the_torch_cuda_build_and_leaves_fa4_out(mapping: dict[str, Any]) -> None:
    from gate_cli import LAUNCH

    from stackcheck.launch.refusals import refusal_problems

    d = gate.derive([*LAUNCH, "--model", "m", FLAG, "--attention-backend", "fa4"], mapping, {})
    models = {"model": attention_keys(DEEPSEEK_V2_LITE)}
    got = refusal_problems(d, mapping, "0.5.23", {10}, "DeepseekV2ForCausalLM", models, torch_cuda="12.6")
    problem = next(p for p in got if p.subject == "refusal deterministic-attention-backend")
    assert problem.status == "blocked" and problem.effect == "crash"
    assert "torch's CUDA build 12.6" in (problem.observed or "") and "12.8 or later" in (problem.observed or "")
    assert problem.required == "ascend, fa3, triton"  # fa4 does not hold with this torch
    assert any("utils/common.py" in str(s.get("title")) for s in problem.source)


def test_the_backends_named_hold_on_the_box(mapping: dict[str, Any]) -> None:
    """The refusal names what to give: for a DeepSeek-list model on SM120 fa4 is not among them (SM100/SM110 only)."""
    from gate_cli import LAUNCH

    from stackcheck.launch.refusals import refusal_problems

    cmd = [*LAUNCH, "--model", "m", FLAG, "--attention-backend", "flashinfer"]
    d = gate.derive(cmd, mapping, {})
    models = {"model": attention_keys(DEEPSEEK_V2_LITE)}
    for majors, want in (({12}, "ascend, fa3, triton"), ({10}, "ascend, fa3, fa4, triton")):
        got = refusal_problems(d, mapping, "0.5.23", majors, "DeepseekV2ForCausalLM", models)
        problem = next(p for p in got if p.subject == "refusal deterministic-attention-backend")
        assert problem.required == want, (majors, problem.required)


def test_the_gate_refuses_fa4_for_a_deepseek_model_with_an_older_torch_cuda_build(tmp_path: Any) -> None:
    """End to end: the b200 case (SGLang 0.5.20, cc 10.0) with its torch made a CUDA 12.6 build; DeepSeek-V2-Lite
    with deterministic inference on fa4. Before, the refusal was not raised (the majors alone were read)."""
    import json
    from pathlib import Path

    from gate_cli import ROOT, gate_json, model_dir

    facts = json.loads((ROOT / "tests" / "cases" / "b200" / "facts.json").read_text())
    torch = facts["facts"]["packages"]["torch"]
    torch.update({"version": "2.7.1+cu126", "dist_version": "2.7.1", "cuda": "12.6", "variant": "cu126"})
    path = Path(tmp_path) / "facts.json"
    path.write_text(json.dumps(facts))
    model = model_dir(Path(tmp_path), "dsv2", DEEPSEEK_V2_LITE)
    doc = gate_json(path, "--model-path", str(model), FLAG, "--attention-backend", "fa4", dry_run=True)
    refusals = [r for r in doc["reasons"] if "deterministic-attention-backend" in json.dumps(r)]
    assert doc["decision"] != "allow" and refusals, doc["decision"]
    assert "12.6" in json.dumps(refusals)
