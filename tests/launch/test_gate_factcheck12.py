"""What the twelfth fact-check sample found (tests/realworld/FACTCHECK.md, "Twelfth sample").

Row f1: `--attention-backend hpc_ops` with DeepSeek R1 on 8x H200 and SGLang 0.5.19 passed the gate. launch.json
mapped hpc_ops to no feature, and SGLang's creator for it raises ValueError 'hpc_ops backend can only be used with
non-MLA models.' for a model it runs as MLA (0.5.19 and 0.5.23 layers/attention/attention_registry.py,
create_hpc_ops_backend). The fix is ibackends' (feature attention-hpc-ops, rule hpc-ops-non-mla), not yet on this
branch: until launch.json maps hpc_ops to a feature the test is skipped, and once it does it must refuse the row.

Row a1 (right, a condition missing): SGLang turns FlashInfer's all-reduce fusion on by itself for some models
(GLM-4 MoE Lite there) and the gate never judged it. Following that, beside the draw: SGLang 0.5.5-0.5.7 turn it on
on SM12x too (GPT-OSS; 0.5.7 also DeepSeek-V3, GLM-4-MoE, Qwen3-MoE), where FlashInfer's comm module of those
releases' pins has no kernels (sgl-project/sglang#15650), and the gate allowed GPT-OSS at tp 2 on SM120 with no flag.
launch.json's model_features now requires flashinfer-allreduce-fusion there, with the launch conditions SGLang reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, GPT_OSS, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import model_kernel_features

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # SGLang 0.5.23, cc 9.0
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
FUSION = "flashinfer-allreduce-fusion"


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def _hpc_ops_mapped() -> bool:
    """Whether launch.json's --attention-backend choice map gives hpc_ops a feature."""
    for option in load([], env={}).launch.get("options") or []:
        if isinstance(option, dict) and option.get("flag") == "--attention-backend":
            return bool((option.get("choices") or {}).get("hpc_ops"))
    return False


def _box(tmp_path: Path, version: str, cc: str | None = None, flashinfer: str | None = None) -> Path:
    doc = json.loads(H200.read_text())
    doc["facts"]["packages"]["sglang"].update(version=version, dist_version=version)
    if flashinfer is not None:
        doc["facts"]["packages"]["flashinfer-python"].update(version=flashinfer, dist_version=flashinfer)
    for gpu in doc["facts"]["gpus"] if cc is not None else []:
        gpu.update(compute_capability=cc, name="NVIDIA RTX PRO 6000 Blackwell Server Edition")
    facts = tmp_path / f"box-{version}.json"
    facts.write_text(json.dumps(doc))
    return facts


@pytest.mark.skipif(not _hpc_ops_mapped(), reason="hpc_ops maps to no feature until ibackends' attention-hpc-ops")
@pytest.mark.parametrize("version", ["0.5.19", "0.5.23"])
def test_the_gate_does_not_allow_row_f1(tmp_path: Path, version: str) -> None:
    model = model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    args = ["--model-path", str(model), "--tp", "8", "--attention-backend", "hpc_ops"]
    got = gate_json(_box(tmp_path, version), *args, dry_run=True)
    assert got["decision"] != "allow", json.dumps(got.get("reasons"))[:800]


def _fusion(mapping: dict[str, Any], version: str, arch: str | None, majors: set[int] | None, *flags: str) -> bool:
    d = gate.derive([*LAUNCH, *flags], mapping, {})
    required, unread = model_kernel_features(mapping, version, arch, d, majors)
    return any(f == FUSION for f, _ in [*required, *unread])


def test_the_fusion_sglang_turns_on_is_required_where_it_does(mapping: dict[str, Any]) -> None:
    gpt = "GptOssForCausalLM"
    for version in ("0.5.5", "0.5.6", "0.5.7"):
        assert _fusion(mapping, version, gpt, {12}, "--tp", "2")
        assert _fusion(mapping, version, gpt, {10}, "--tp", "8")
        assert _fusion(mapping, version, None, {12}, "--tp", "2")  # the model not read: each entry may hold
        assert not _fusion(mapping, version, gpt, {12})  # tp 1: no all-reduce
        assert not _fusion(mapping, version, gpt, {12}, "--tp", "2", "--enable-dp-attention")
        assert not _fusion(mapping, version, "LlamaForCausalLM", {12}, "--tp", "2")
    assert not _fusion(mapping, "0.5.6", gpt, {12}, "--tp", "2", "--nnodes", "2")
    assert _fusion(mapping, "0.5.6", gpt, {12}, "--tp", "2", "--nnodes", "1")
    assert not _fusion(mapping, "0.5.6", gpt, {9}, "--tp", "2")  # 0.5.5-0.5.6: Blackwell only
    assert _fusion(mapping, "0.5.6", gpt, None, "--tp", "2")  # majors not known: fail closed
    assert _fusion(mapping, "0.5.7", "Qwen3MoeForCausalLM", {9}, "--tp", "4")
    assert not _fusion(mapping, "0.5.7", "Qwen3MoeForCausalLM", {9}, "--tp", "4", "--moe-a2a-backend", "deepep")
    assert _fusion(mapping, "0.5.7", "Qwen3MoeForCausalLM", {9}, "--tp", "4", "--moe-a2a-backend", "none")
    assert not _fusion(mapping, "0.5.7", "Qwen3MoeForCausalLM", {8}, "--tp", "4")
    assert not _fusion(mapping, "0.5.4", gpt, {12}, "--tp", "2")  # 0.5.4 turns it on on SM100 only
    # an entry with launch conditions is left out where the caller gives no launch (DeepSeek-V4's has none)
    assert model_kernel_features(mapping, "0.5.6", gpt) == ([], [])


@pytest.mark.parametrize("version", ["0.5.5", "0.5.6", "0.5.7"])
def test_the_gate_refuses_gpt_oss_at_tp_2_on_sm120_without_the_flag(tmp_path: Path, version: str) -> None:
    model = model_dir(tmp_path, "gpt-oss", GPT_OSS)
    facts = _box(tmp_path, version, cc="12.0", flashinfer="0.5.3")  # the comm module of FlashInfer 0.5.3: [9, 10]
    got = gate_json(facts, "--model-path", str(model), "--tp", "2", dry_run=True)
    mine = [r for r in got["reasons"] if r.get("feature") == FUSION]
    assert got["decision"] == "refuse" and mine and mine[0]["status"] == "blocked", json.dumps(got["reasons"])[:900]
    tp1 = gate_json(facts, "--model-path", str(model), dry_run=True)
    assert not [r for r in tp1["reasons"] if r.get("feature") == FUSION]


def test_from_0_5_8_the_fusion_is_required_on_sm90_and_sm100_only(mapping: dict[str, Any]) -> None:
    lite = "Glm4MoeLiteForCausalLM"  # rows a1, a6, a7 (0.5.14-0.5.17)
    assert _fusion(mapping, "0.5.15", lite, {9}, "--tp", "8")
    assert _fusion(mapping, "0.5.14", lite, {10}, "--tp", "8")
    assert not _fusion(mapping, "0.5.15", lite, {12}, "--tp", "8")  # SM12x: SGLang leaves it off
    assert not _fusion(mapping, "0.5.15", lite, {9}, "--tp", "8", "--rl-on-policy-target", "fsdp")  # row b1
    assert not _fusion(mapping, "0.5.15", lite, {9}, "--tp", "8", "--enforce-disable-flashinfer-allreduce-fusion")
    assert not _fusion(mapping, "0.5.7", lite, {9}, "--tp", "8")  # not listed before 0.5.8
    assert _fusion(mapping, "0.5.17", "Qwen3NextForCausalLM", {9}, "--tp", "8")  # row b6
    assert not _fusion(mapping, "0.5.10", "Qwen3NextForCausalLM", {9}, "--tp", "8")  # listed from 0.5.11
    assert _fusion(mapping, "0.5.16", "DeepseekV3ForCausalLM", {9}, "--tp", "8")  # row f3
    assert _fusion(mapping, "0.5.23", "DeepseekV3ForCausalLM", {10}, "--tp", "8")
    assert not _fusion(mapping, "0.5.23", "LlamaForCausalLM", {9}, "--tp", "8")
    assert not _fusion(mapping, "0.5.24", "DeepseekV3ForCausalLM", {9}, "--tp", "8")  # newer than the data


def test_row_f3_without_p2p_is_not_allowed(tmp_path: Path) -> None:
    """Row f3's launch (DeepSeek R1 on flashinfer, tp 8, 0.5.16) judges the fusion SGLang turns on: on a box whose
    GPU pairs lack P2P, whether it runs is not known (ipc-peer-access), so the gate no longer allows it."""
    model = model_dir(tmp_path, "deepseek-r1", DEEPSEEK_R1)
    facts = _box(tmp_path, "0.5.16")
    args = ["--model-path", str(model), "--tp", "8", "--attention-backend", "flashinfer"]
    ok = gate_json(facts, *args, dry_run=True)
    assert [r for r in ok["features"] if r.get("feature") == FUSION] and ok["decision"] == "allow"
    doc = json.loads(facts.read_text())
    doc["facts"]["topology"]["p2p"] = "none"
    facts.write_text(json.dumps(doc))
    got = gate_json(facts, *args, dry_run=True)
    mine = [r for r in got["reasons"] if r.get("feature") == FUSION]
    assert got["decision"] != "allow" and mine and mine[0]["status"] == "unknown", json.dumps(got["reasons"])[:900]
