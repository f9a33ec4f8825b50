"""SGLang's own per-model attention backend (launch.json refusals.auto.attention_backend.model_overrides, issue 16):
before its default picker, SGLang's GPT-OSS override sets the backend when the command names none (0.5.3: no
--attention-backend; 0.5.4+: none of the three attention flags): trtllm_mha on SM100 (torch CUDA >= 12.8), fa3 on
SM90 (CUDA >= 12.3), triton elsewhere. The gate judged the generic default (flashinfer, and fa3/trtllm_mha from
0.5.8 for MHA models) and so never required Triton for a GPT-OSS launch on a GB10, whose Triton 3.5.1 ptxas cannot
assemble sm_121a. It now takes the override's pick where it reads the model's architecture, and says unknown where it
cannot and that pick is not ok on the box."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import GPT_OSS, LLAMA3, LLAMA4, OLMO2, gate_json, model_dir, rule_status

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import auto_backend_features, auto_backend_unread

ROOT = Path(__file__).resolve().parent.parent.parent
GB10 = ROOT / "tests" / "cases" / "gb10-cu130-pypi-kernel" / "facts.json"  # SGLang 0.5.9, cc 12.1, Triton 3.5.1


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def features(mapping: dict[str, Any], version: str, majors: set[int], arch: str | None, *flags: str,
             cuda: str = "12.8") -> list[str]:  # fmt: skip
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    return sorted(f for f, _ in auto_backend_features(d, mapping, version, majors, cuda, False, arch))


def test_the_gpt_oss_override_per_gpu_and_release(mapping: dict[str, Any]) -> None:
    oss = "GptOssForCausalLM"
    # 0.5.3-0.5.7: the generic default has no fa3/trtllm_mha for MHA models, the override does
    assert features(mapping, "0.5.5", {9}, oss) == ["attention-fa3"]
    assert features(mapping, "0.5.5", {10}, oss) == ["attention-trtllm-mha"]
    assert features(mapping, "0.5.5", {9}, "LlamaForCausalLM") == []
    # elsewhere it picks triton, where the generic default picks nothing the gate requires beyond flashinfer
    assert features(mapping, "0.5.20", {12}, oss) == ["attention-triton"]
    assert features(mapping, "0.5.20", {8}, oss) == ["attention-triton"]
    assert features(mapping, "0.5.20", {12}, "LlamaForCausalLM") == []
    # an SM100 box with torch CUDA 12.6 is not is_sm100_supported: triton
    assert features(mapping, "0.5.20", {10}, oss, cuda="12.6") == ["attention-triton"]
    # 0.5.4+: any attention flag turns the override off; 0.5.3: only --attention-backend does
    assert "attention-triton" not in features(mapping, "0.5.20", {12}, oss, "--decode-attention-backend", "fa3")
    assert features(mapping, "0.5.3", {12}, oss, "--decode-attention-backend", "fa3") == ["attention-triton"]
    assert features(mapping, "0.5.3", {12}, oss, "--attention-backend", "fa3") == []


def test_an_unread_model_gets_the_overrides_picks_to_judge(mapping: dict[str, Any]) -> None:
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m"], mapping, {})
    got = auto_backend_unread(d, mapping, "0.5.9", {12}, "13.0", None)
    # GPT-OSS, Llama 4: triton; Olmo2: fa3; a DSA model (DeepSeek V3.2) on SM12x in 0.5.3-0.5.9: FlashMLA (ifc9)
    assert sorted({f for f, _ in got}) == ["attention-fa3", "attention-flashmla", "attention-triton"]
    assert len(got) == 3  # one entry per feature: the gate says each unknown once
    triton = " ".join(w for f, w in got if f == "attention-triton")
    assert "GptOssForCausalLM" in triton and "Llama4ForCausalLM" in triton
    assert "Olmo2ForCausalLM" in " ".join(w for f, w in got if f == "attention-fa3")
    assert auto_backend_unread(d, mapping, "0.5.9", {12}, "13.0", "LlamaForCausalLM") == []


def test_the_gate_on_a_gb10_needs_triton_for_gpt_oss(tmp_path: Path) -> None:
    oss = model_dir(tmp_path, "gpt-oss", GPT_OSS)
    doc = gate_json(GB10, "--model-path", str(oss), dry_run=True)
    need = next((r for r in doc["derived"]["required"] if r["feature"] == "attention-triton"), None)
    assert need is not None and "GptOssForCausalLM picks triton" in json.dumps(need)
    assert any(b["feature"] == "attention-triton" and b["status"] == "blocked" for b in doc["reasons"])
    llama = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(GB10, "--model-path", str(llama), dry_run=True)
    assert not any(r["feature"] == "attention-triton" for r in doc["derived"]["required"])
    assert not any(b["feature"] == "attention-triton" for b in doc["reasons"])
    # the model not found: whether the override applies is not known, and triton is not ok here: unknown
    doc = gate_json(GB10, "--model-path", str(tmp_path / "absent"), dry_run=True)
    got = [b for b in doc["reasons"] if b["feature"] == "attention-triton"]
    assert got and got[0]["status"] == "unknown" and "config.json" in json.dumps(got[0])


# ---- the backends SGLang lists for GPT-OSS (launch.json refusal gpt-oss-attention-backend) ----------------------


def gpt_oss_rule(mapping: dict[str, Any], version: str, arch: str | None, *flags: str) -> str:
    return rule_status(mapping, "gpt-oss-attention-backend", version, {9}, arch, {"model": None}, *flags)


def test_gpt_oss_on_a_backend_sglang_does_not_list_is_refused(mapping: dict[str, Any]) -> None:
    """GPT-OSS on flashinfer ends at argument parsing in every release 0.5.1-0.5.23 (AssertionError 'GptOssForCausalLM
    requires one of ...'); fa4 is listed from 0.5.4; split flags are asserted from 0.5.4."""
    oss = "GptOssForCausalLM"
    for version in ("0.5.3", "0.5.9", "0.5.16", "0.5.23"):
        assert gpt_oss_rule(mapping, version, oss, "--attention-backend", "flashinfer") == "blocked", version
        assert gpt_oss_rule(mapping, version, oss, "--attention-backend", "triton") == "ok", version
        assert gpt_oss_rule(mapping, version, oss) == "ok", version  # the override picks a listed one
        assert gpt_oss_rule(mapping, version, "LlamaForCausalLM", "--attention-backend", "flashinfer") == "ok"
    assert gpt_oss_rule(mapping, "0.5.3", oss, "--attention-backend", "fa4") == "blocked"
    assert gpt_oss_rule(mapping, "0.5.4", oss, "--attention-backend", "fa4") == "ok"
    split = ["--prefill-attention-backend", "fa3", "--decode-attention-backend", "flashinfer"]
    assert gpt_oss_rule(mapping, "0.5.3", oss, *split) == "ok"  # 0.5.3 asserts --attention-backend only
    assert gpt_oss_rule(mapping, "0.5.20", oss, *split) == "blocked"
    # a side left open while another attention flag is given: unknown, not ok
    assert gpt_oss_rule(mapping, "0.5.20", oss, "--decode-attention-backend", "triton") == "unknown"
    # the architecture not read: the model may be GPT-OSS, so a backend its list lacks is unknown (fail closed), one
    # it lists is not judged further (launch.json's note says why)
    assert gpt_oss_rule(mapping, "0.5.20", None, "--attention-backend", "flashinfer") == "unknown"
    assert gpt_oss_rule(mapping, "0.5.20", None, "--attention-backend", "triton") == "ok"
    assert gpt_oss_rule(mapping, "0.5.20", None) == "ok"  # no attention flag: the override picks a listed one
    assert gpt_oss_rule(mapping, "0.5.1", oss, "--attention-backend", "flashinfer") == "blocked"  # as 0.5.3
    assert gpt_oss_rule(mapping, "0.5.24", oss, "--attention-backend", "flashinfer") == "ok"  # not read: silent


# ---- Olmo2's override (0.5.4-0.5.23): fa3 on any GPU of SM >= 80 that is not SM100 with CUDA >= 12.8 ----------

RTXPRO6000_CASE = ROOT / "tests" / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json"  # SGLang 0.5.11, SM120


def rtxpro6000(tmp_path: Path) -> Path:
    """The case's facts with libnuma.so.1 found by the loader (its facts predate the cuda_libs probe, and its
    sgl-kernel links libnuma: kernel-runtime-libs would be unknown, which is not what these tests are about)."""
    doc = json.loads(RTXPRO6000_CASE.read_text())
    doc["facts"]["cuda_libs"] = {"libnuma.so.1": "/usr/lib/x86_64-linux-gnu/libnuma.so.1"}
    path = tmp_path / "rtxpro6000.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_olmo2_override_per_gpu_and_release(mapping: dict[str, Any]) -> None:
    """get_device_sm() >= 80 picks fa3 on Blackwell too (SM120, SM110, SM100 without torch CUDA 12.8): one pick each,
    the first that holds, and nothing else (no stray triton)."""
    olmo = "Olmo2ForCausalLM"
    for version in ("0.5.4", "0.5.9", "0.5.16", "0.5.23"):
        assert features(mapping, version, {12}, olmo) == ["attention-fa3"], version
        assert features(mapping, version, {11}, olmo) == ["attention-fa3"], version
        assert features(mapping, version, {8}, olmo) == ["attention-fa3"], version
        assert features(mapping, version, {10}, olmo) == ["attention-trtllm-mha"], version
        assert features(mapping, version, {10}, olmo, cuda="12.6") == ["attention-fa3"], version
        assert features(mapping, version, {7}, olmo) == ["attention-triton"], version
    assert features(mapping, "0.5.3", {12}, olmo) == []  # no Olmo2 branch before 0.5.4
    # only --attention-backend turns it off: one split flag leaves the other side to the override's pick
    assert features(mapping, "0.5.20", {12}, olmo, "--decode-attention-backend", "triton") == ["attention-fa3"]
    assert features(mapping, "0.5.20", {12}, olmo, "--attention-backend", "triton") == []
    both = ["--prefill-attention-backend", "triton", "--decode-attention-backend", "triton"]
    assert features(mapping, "0.5.20", {12}, olmo, *both) == []  # every side has its flag
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *both], mapping, {})
    assert auto_backend_unread(d, mapping, "0.5.20", {12}, "12.8", None) == []


def test_the_gate_refuses_a_default_olmo2_launch_on_sm120(tmp_path: Path) -> None:
    """The false pass: SGLang 0.5.11 on an RTX PRO 6000 (SM120) picks fa3 for Olmo2, whose backend asserts SM 8.0-9.0;
    the gate allowed the launch (it judged the generic default, flashinfer)."""
    olmo = model_dir(tmp_path, "olmo2", OLMO2)
    doc = gate_json(rtxpro6000(tmp_path), "--model-path", str(olmo), dry_run=True)
    need = next((r for r in doc["derived"]["required"] if r["feature"] == "attention-fa3"), None)
    assert need is not None and "Olmo2ForCausalLM picks fa3" in json.dumps(need)
    assert any(b["feature"] == "attention-fa3" and b["status"] == "blocked" for b in doc["reasons"])
    assert doc["decision"] == "refuse"
    llama = model_dir(tmp_path, "llama", LLAMA3)
    assert gate_json(rtxpro6000(tmp_path), "--model-path", str(llama), dry_run=True)["decision"] == "allow"
    doc = gate_json(rtxpro6000(tmp_path), "--model-path", str(olmo), "--attention-backend", "triton", dry_run=True)
    assert not any(b["feature"] == "attention-fa3" for b in doc["reasons"])


def olmo2_rule(mapping: dict[str, Any], version: str, arch: str | None, *flags: str) -> str:
    return rule_status(mapping, "olmo2-attention-backend", version, {12}, arch, {"model": None}, *flags)


def test_olmo2_on_flashinfer_is_refused(mapping: dict[str, Any]) -> None:
    """0.5.4-0.5.23 assert attention_backend != flashinfer for Olmo2ForCausalLM (after its own pick when none is
    given); the gate allowed `--attention-backend flashinfer`, which is what it recommended for the fa3 refusal."""
    olmo = "Olmo2ForCausalLM"
    for version in ("0.5.4", "0.5.9", "0.5.15", "0.5.19", "0.5.23"):
        assert olmo2_rule(mapping, version, olmo, "--attention-backend", "flashinfer") == "blocked", version
        assert olmo2_rule(mapping, version, olmo, "--attention-backend", "triton") == "ok", version
        assert olmo2_rule(mapping, version, olmo) == "ok", version  # the override picks fa3/trtllm_mha/triton
        # a split flag is not asserted: attention_backend is the override's pick
        assert olmo2_rule(mapping, version, olmo, "--decode-attention-backend", "flashinfer") == "ok", version
        assert olmo2_rule(mapping, version, "LlamaForCausalLM", "--attention-backend", "flashinfer") == "ok"
    assert olmo2_rule(mapping, "0.5.3", olmo, "--attention-backend", "flashinfer") == "ok"  # no branch yet
    # not read: the model may be Olmo2 (unknown, as its override's pick is), unless the backend is not flashinfer
    assert olmo2_rule(mapping, "0.5.20", None, "--attention-backend", "flashinfer") == "unknown"
    assert olmo2_rule(mapping, "0.5.20", None, "--attention-backend", "fa4") == "ok"


def test_the_gate_refuses_olmo2_on_flashinfer(tmp_path: Path) -> None:
    olmo = model_dir(tmp_path, "olmo2", OLMO2)
    doc = gate_json(rtxpro6000(tmp_path), "--model-path", str(olmo), "--attention-backend", "flashinfer", dry_run=True)
    assert doc["decision"] == "refuse"
    got = [b for b in doc["reasons"] if "olmo2-attention-backend" in json.dumps(b)]
    assert got and got[0]["status"] == "blocked"
    llama = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(rtxpro6000(tmp_path), "--model-path", str(llama), "--attention-backend", "flashinfer", dry_run=True)
    assert doc["decision"] == "allow"


# ---- Llama 4 from 0.5.6: its own pick, then an assertion of its list (launch.json llama4-listed-attention-backend) --


def llama4_rule(mapping: dict[str, Any], version: str, arch: str | None, *flags: str) -> str:
    return rule_status(mapping, "llama4-listed-attention-backend", version, {12}, arch, {"model": None}, *flags)


def test_the_llama4_override_and_its_list(mapping: dict[str, Any]) -> None:
    """0.5.6-0.5.23 pick trtllm_mha on SM100, fa3 on SM90 (0.5.6-0.5.7: before the generic default did for MHA
    models, so an aarch64 GH200 without FA3 was a false pass), triton elsewhere; then assert the backend is listed:
    flashinfer ends the launch (the gate allowed it)."""
    llama4 = "Llama4ForConditionalGeneration"
    assert features(mapping, "0.5.6", {9}, llama4) == ["attention-fa3"]
    assert features(mapping, "0.5.6", {9}, "LlamaForCausalLM") == []
    assert features(mapping, "0.5.20", {12}, llama4) == ["attention-triton"]
    assert features(mapping, "0.5.20", {10}, llama4) == ["attention-trtllm-mha"]
    assert features(mapping, "0.5.20", {12}, llama4, "--attention-backend", "fa4") == []
    for version in ("0.5.6", "0.5.9", "0.5.11", "0.5.16", "0.5.23"):
        assert llama4_rule(mapping, version, llama4, "--attention-backend", "flashinfer") == "blocked", version
        assert llama4_rule(mapping, version, "Llama4ForCausalLM", "--attention-backend", "fa4") == "blocked"
        assert llama4_rule(mapping, version, llama4, "--attention-backend", "triton") == "ok", version
        assert llama4_rule(mapping, version, llama4) == "ok", version  # its own pick is listed
        assert llama4_rule(mapping, version, llama4, "--decode-attention-backend", "flashinfer") == "ok", version
        assert llama4_rule(mapping, version, "LlamaForCausalLM", "--attention-backend", "flashinfer") == "ok"
    assert llama4_rule(mapping, "0.5.9", llama4, "--attention-backend", "ascend") == "blocked"  # listed from 0.5.10
    assert llama4_rule(mapping, "0.5.10", llama4, "--attention-backend", "ascend") == "ok"
    assert llama4_rule(mapping, "0.5.5", llama4, "--attention-backend", "flashinfer") == "ok"  # the older rule's
    # not read: the model may be a Llama 4, so a backend its list lacks is unknown, a listed one is not judged
    assert llama4_rule(mapping, "0.5.20", None, "--attention-backend", "flashinfer") == "unknown"
    assert llama4_rule(mapping, "0.5.20", None, "--attention-backend", "fa4") == "unknown"
    assert llama4_rule(mapping, "0.5.20", None, "--attention-backend", "triton") == "ok"


def test_the_gate_refuses_llama4_on_flashinfer(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama4", LLAMA4)
    doc = gate_json(rtxpro6000(tmp_path), "--model-path", str(model), "--attention-backend", "flashinfer", dry_run=True)
    assert doc["decision"] == "refuse"
    got = [b for b in doc["reasons"] if "llama4-listed-attention-backend" in json.dumps(b)]
    assert got and got[0]["status"] == "blocked"
    doc = gate_json(rtxpro6000(tmp_path), "--model-path", str(model), dry_run=True)
    assert doc["decision"] == "allow"  # SGLang 0.5.11 picks triton on SM120, which this box runs
