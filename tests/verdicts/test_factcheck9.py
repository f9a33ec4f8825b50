"""The ninth fact-check sample (tests/realworld/FACTCHECK.md).

Row c1 (the gate's advice for GPT-OSS with --enable-deterministic-inference on 8x B200, SGLang 0.5.7) advised
`--attention-backend trtllm_mha`, a backend outside SGLang's list for deterministic inference: the advised line
fails at argument parsing (ValueError), and the gate's own rule deterministic-attention-backend refuses it. The
advice now judges its attention choice by that rule too.

Found on the way (a false pass): SGLang 0.5.5-0.5.23 check a DeepSeek-family (absorbed-MLA) model's attention
backend against a shorter list for deterministic inference (fa3/triton; 0.5.17 on ascend/fa3/fa4/triton) and raise
ValueError outside it; the gate allowed DeepSeek R1 with --attention-backend flashinfer there. Judged by rule
deterministic-attention-backend (igate5 closed the same gap there; this sample's own rule was folded into it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, EXAONE4, GPT_OSS, LLAMA3, config_rule_status, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.model import attention_keys

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # 8x H200, SGLang 0.5.23
B200 = ROOT / "tests" / "cases" / "b200-deepgemm-nvcc128" / "facts.json"  # 8x B200, SGLang 0.5.20
FLAG = "--enable-deterministic-inference"
RULE = "deterministic-attention-backend"  # (igate5's rule: ifc9's own duplicate was folded into it)
RELEASES = [f"0.5.{n}" for n in range(1, 24)]


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def status(mapping: dict[str, Any], version: str, majors: set[int], config: dict[str, Any] | None, *flags: str) -> str:
    return config_rule_status(mapping, RULE, version, majors, config, *flags)


def test_a_deepseek_model_off_fa3_and_triton_is_refused_from_0_5_5(mapping: dict[str, Any]) -> None:
    """flashinfer (in the general deterministic list) is refused for DeepSeek R1 and V3.2 in 0.5.5-0.5.23 and not
    judged before; fa3 and triton pass everywhere; fa4 joins the list in 0.5.17."""
    for version in RELEASES:
        for config in (DEEPSEEK_R1, DEEPSEEK_V32):
            got = status(mapping, version, {9}, config, FLAG, "--attention-backend", "flashinfer")
            assert got == ("blocked" if int(version.split(".")[2]) >= 5 else "ok"), (version, got)
            for backend in ("fa3", "triton"):
                assert status(mapping, version, {9}, config, FLAG, "--attention-backend", backend) == "ok"
    assert status(mapping, "0.5.16", {10}, DEEPSEEK_R1, FLAG, "--attention-backend", "fa4") == "blocked"
    assert status(mapping, "0.5.17", {10}, DEEPSEEK_R1, FLAG, "--attention-backend", "fa4") == "ok"


def test_other_models_no_flag_and_no_backend_are_not_judged(mapping: dict[str, Any]) -> None:
    assert status(mapping, "0.5.9", {9}, LLAMA3, FLAG, "--attention-backend", "flashinfer") == "ok"
    assert status(mapping, "0.5.9", {9}, GPT_OSS, FLAG, "--attention-backend", "triton") == "ok"
    assert status(mapping, "0.5.9", {9}, DEEPSEEK_R1, "--attention-backend", "flashinfer") == "ok"  # no flag
    assert status(mapping, "0.5.9", {9}, DEEPSEEK_R1, FLAG) == "ok"  # the fallback picks fa3 (triton on SM100)
    # an unread model may be DeepSeek: a backend the check would refuse is unknown, not ok
    assert status(mapping, "0.5.9", {9}, None, FLAG, "--attention-backend", "flashinfer") == "unknown"


def test_the_gate_refuses_deterministic_deepseek_r1_on_flashinfer(tmp_path: Path) -> None:
    """End to end on 8x H200 (0.5.23): allowed before this rule, now refused; fa3 is allowed."""
    model = model_dir(tmp_path, "r1", DEEPSEEK_R1)
    bad = gate_json(
        H200, "--model-path", str(model), "--tp", "8", FLAG, "--attention-backend", "flashinfer", dry_run=True
    )
    assert bad["decision"] == "refuse"
    assert f"refusal {RULE}" in [r["feature"] for r in bad["reasons"]]
    good = gate_json(H200, "--model-path", str(model), "--tp", "8", FLAG, "--attention-backend", "fa3", dry_run=True)
    assert good["decision"] == "allow", json.dumps(good["reasons"])[:500]


def test_the_advice_never_recommends_a_backend_deterministic_inference_refuses(tmp_path: Path) -> None:
    """Row c1's shape on the 8x B200 case (0.5.20): the advice said `add --attention-backend trtllm_mha` for
    GPT-OSS and `change --attention-backend flashinfer -> trtllm_mha` for Llama 3, both refused by
    deterministic-attention-backend (SGLang: ValueError at argument parsing)."""
    for name, config, extra in (("gpt-oss", GPT_OSS, []), ("llama3", LLAMA3, ["--attention-backend", "flashinfer"])):
        model = model_dir(tmp_path, name, config)
        doc = gate_json(B200, "--model-path", str(model), "--tp", "8", FLAG, *extra, dry_run=True)
        advice = " ".join(doc.get("advice") or [])
        assert "--attention-backend trtllm_mha" not in advice and "-> trtllm_mha" not in advice, advice


EXAONE = "exaone4-attention-backend"


def exaone(mapping: dict[str, Any], version: str, config: dict[str, Any] | None, *flags: str) -> str:
    return config_rule_status(mapping, EXAONE, version, {9}, config, *flags)


def test_exaone4_asserts_its_backends_from_0_5_9(mapping: dict[str, Any]) -> None:
    """Found on the way (population a: Exaone 4 with --attention-backend flashinfer was allowed in every release):
    SGLang 0.5.9-0.5.23 assert fa3, triton or trtllm_mha for Exaone 4; 0.5.9-0.5.21 assert before any pick, so no
    --attention-backend fails too; 0.5.22-0.5.23 pick one first."""
    for n in range(1, 24):
        version = f"0.5.{n}"
        flashinfer = exaone(mapping, version, EXAONE4, "--attention-backend", "flashinfer")
        assert flashinfer == ("blocked" if n >= 9 else "ok"), (version, flashinfer)
        default = exaone(mapping, version, EXAONE4)
        assert default == ("blocked" if 9 <= n <= 21 else "ok"), (version, default)
        for backend in ("fa3", "triton", "trtllm_mha"):
            assert exaone(mapping, version, EXAONE4, "--attention-backend", backend) == "ok"
    # equal split flags do not help: the assertion runs before they set attention_backend
    split = ("--prefill-attention-backend", "fa3", "--decode-attention-backend", "fa3")
    assert exaone(mapping, "0.5.12", EXAONE4, *split) == "blocked"
    assert exaone(mapping, "0.5.12", LLAMA3, "--attention-backend", "flashinfer") == "ok"
    assert exaone(mapping, "0.5.12", None, "--attention-backend", "flashinfer") == "unknown"  # fail closed
    assert exaone(mapping, "0.5.12", None) == "ok"  # unread, no flag: not judged (the rule's note says why)


def test_the_gate_and_its_advice_follow_the_exaone4_assertion(tmp_path: Path) -> None:
    """Row c2 (the advice for Exaone 4 on the RTX PRO 6000 with 0.5.23 said `add --attention-backend flashinfer`,
    which SGLang asserts against; the case's own 0.5.11 advised the same) and the gate on 8x H200 (0.5.23:
    flashinfer allowed before)."""
    model = model_dir(tmp_path, "exaone4", EXAONE4)
    bad = gate_json(H200, "--model-path", str(model), "--tp", "8", "--attention-backend", "flashinfer", dry_run=True)
    assert bad["decision"] == "refuse"
    assert f"refusal {EXAONE}" in [r["feature"] for r in bad["reasons"]]
    good = gate_json(H200, "--model-path", str(model), "--tp", "8", "--attention-backend", "fa3", dry_run=True)
    assert good["decision"] == "allow", json.dumps(good["reasons"])[:500]
    rtx = ROOT / "tests" / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json"
    advice = " ".join(gate_json(rtx, "--model-path", str(model), "--tp", "1", dry_run=True).get("advice") or [])
    assert "--attention-backend flashinfer" not in advice, advice


def test_the_dsa_kernels_are_required_only_under_the_dsa_backend(mapping: dict[str, Any]) -> None:
    """Row a3's false block: with --attention-backend triton SGLang keeps DeepSeek V3.2 on triton (the DSA pick
    only fills an unset backend) and its DSA indexer returns None for a non-DSA backend (dense MLA), so the trtllm
    DSA kernels (SM100 family only) are not needed; the gate required them, refusing the line on SM12x."""
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import auto_backend_features

    def needs(version: str, major: int, *flags: str) -> bool:
        d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
        keys = attention_keys(DEEPSEEK_V32)
        got = auto_backend_features(d, mapping, version, {major}, "12.9", True, "DeepseekV32ForCausalLM", keys)
        return "attention-dsa-trtllm" in [f for f, _ in got]

    for version in ("0.5.10", "0.5.11", "0.5.14", "0.5.23"):
        assert needs(version, 12)  # SGLang's own pick: dsa, whose decode/prefill kernel is trtllm there
        assert not needs(version, 12, "--attention-backend", "triton"), version
        assert not needs(version, 12, "--decode-attention-backend", "triton"), version
    assert needs("0.5.23", 12, "--attention-backend", "dsa")
    assert needs("0.5.23", 12, "--decode-attention-backend", "dsa")


def test_a_dsa_model_on_sm12x_needs_flashmla_in_0_5_3_to_0_5_9(mapping: dict[str, Any]) -> None:
    """Found on the way (population a: DeepSeek V3.2 with no attention flag allowed on the RTX PRO 6000 with
    0.5.5-0.5.9): SGLang sends a DSA model to FlashMLA's sparse kernels itself on majors >= 10 there (FP8 KV cache),
    and no kernel wheel has FlashMLA code for majors 11 or 12 (flashmla_ops: sm_90a, sm_100a)."""
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import auto_backend_features

    def needs(version: str, major: int, *flags: str) -> bool:
        d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
        keys = attention_keys(DEEPSEEK_V32)
        got = auto_backend_features(d, mapping, version, {major}, "12.9", True, "DeepseekV32ForCausalLM", keys)
        return "attention-flashmla" in [f for f, _ in got]

    for version in ("0.5.3", "0.5.5", "0.5.8", "0.5.9"):
        assert needs(version, 12) and needs(version, 11), version
        assert not needs(version, 10) and not needs(version, 9), version  # FlashMLA has SM90/SM100 code
    assert not needs("0.5.10", 12)  # trtllm from 0.5.10 (attention-dsa-trtllm)
    assert not needs("0.5.9", 12, "--nsa-prefill-backend", "tilelang", "--nsa-decode-backend", "tilelang")
    assert needs("0.5.5", 12, "--nsa-prefill-backend", "tilelang")  # 0.5.5-0.5.8 set them over the flags
    assert needs("0.5.5", 12, "--attention-backend", "triton")  # FlashMLA's KV layout still: not passed
