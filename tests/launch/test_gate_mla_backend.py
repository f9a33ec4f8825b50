"""SGLang's own attention backend for MLA models (DeepSeek V2/V3/R1, V3.2, and the others SGLang counts as MLA),
issue 16: launch.json refusals.auto.attention_backend.model_overrides' DeepSeek entries and the defaults' MLA
entries, each read in the wheels (tests/launch/test_gate_mla_registry.py).

- DeepSeek V3/R1 and the architectures SGLang groups with them (0.5.4-0.5.23): trtllm_mla on SM100 (major 10 with
  torch CUDA >= 12.8, B200/B300 and SM107 alike) when none of the three attention flags is given; elsewhere the
  default picker decides.
- A DSA model (config.json has index_topk: DeepSeek V3.2, GLM-5): nsa (0.5.3-0.5.12) / dsa (0.5.13-0.5.23).
- Any other MLA model (DeepSeek V2, Kimi-VL, MiniCPM3, GLM-4.7-Flash ...): fa3 on Hopper, flashinfer on SM100,
  triton elsewhere (SM110, SM120, SM121, Ampere, Ada).

The gate judged none of these before (no default for MLA beyond fa3 on Hopper from 0.5.5): a DeepSeek R1 launch on
an SM107 box whose FlashInfer's trtllm-gen runner refuses SM107 was let through, as was an MLA model on a GB10
whose Triton cannot assemble sm_121a. The config.json documents here are written for the tests with the keys the
published checkpoints carry (architectures, model_type, the attention keys, index_topk)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V32, DSA_AS_V3, EXAONE4, LLAMA3, gate_json, model_dir, rule_status

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import auto_backend_features, auto_backend_unread

ROOT = Path(__file__).resolve().parent.parent.parent
RUBIN = ROOT / "tests" / "cases" / "rubin-sm107-sglang0523" / "facts.json"  # SM 10.7, SGLang 0.5.23
GB10 = ROOT / "tests" / "cases" / "gb10-cu130-pypi-kernel" / "facts.json"  # SGLang 0.5.9, cc 12.1, Triton 3.5.1

DEEPSEEK_V2_LITE = {
    "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2", "hidden_size": 2048,
    "num_attention_heads": 16, "num_key_value_heads": 16, "kv_lora_rank": 512, "v_head_dim": 128,
}  # fmt: skip
V3 = "DeepseekV3ForCausalLM"


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def picks(mapping: dict[str, Any], version: str, majors: set[int], config: dict[str, Any] | None, *flags: str,
          cuda: str = "12.8", mla: bool | None = True) -> list[str]:  # fmt: skip
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    arch = str(config["architectures"][0]) if config else None
    keys = attention_keys(config) if config else None
    return sorted(f for f, _ in auto_backend_features(d, mapping, version, majors, cuda, mla, arch, keys))


def test_deepseek_v3_per_gpu_and_release(mapping: dict[str, Any]) -> None:
    for version in ("0.5.4", "0.5.9", "0.5.16", "0.5.23"):
        assert picks(mapping, version, {10}, DEEPSEEK_R1) == ["attention-trtllm-mla"], version
        assert picks(mapping, version, {9}, DEEPSEEK_R1) == ["attention-fa3"], version
        for major in (8, 11, 12):
            assert picks(mapping, version, {major}, DEEPSEEK_R1) == ["attention-triton"], (version, major)
    # 0.5.1-0.5.3 have no DeepSeek override: the MLA default (flashinfer on SM100; fa3 on Hopper from ModelRunner)
    assert picks(mapping, "0.5.3", {10}, DEEPSEEK_R1) == ["attention-flashinfer"]
    assert picks(mapping, "0.5.1", {9}, DEEPSEEK_R1) == ["attention-fa3"]
    # major 10 without torch CUDA 12.8 is not is_sm100_supported: neither trtllm_mla nor flashinfer
    assert picks(mapping, "0.5.9", {10}, DEEPSEEK_R1, cuda="12.6") == []
    # any one attention flag turns the override off; the open side is the MLA default (flashinfer on SM100)
    got = picks(mapping, "0.5.9", {10}, DEEPSEEK_R1, "--decode-attention-backend", "flashinfer")
    assert got == ["attention-flashinfer"]
    assert picks(mapping, "0.5.9", {10}, DEEPSEEK_R1, "--attention-backend", "flashinfer") == []
    # an MHA model on SM100 keeps trtllm_mha; unknown CUDA: the pick and the defaults both count
    assert picks(mapping, "0.5.9", {10}, LLAMA3, mla=False) == ["attention-trtllm-mha"]
    assert "attention-trtllm-mla" in picks(mapping, "0.5.9", {10}, DEEPSEEK_R1, cuda="")


def test_the_architectures_the_override_lists_grow_by_release(mapping: dict[str, Any]) -> None:
    kimi = {"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25"}
    assert picks(mapping, "0.5.8", {10}, kimi) == ["attention-flashinfer"]  # listed from 0.5.9
    assert picks(mapping, "0.5.9", {10}, kimi) == ["attention-trtllm-mla"]
    longcat = {"architectures": ["LongcatFlashForCausalLM"], "model_type": "longcat_flash"}
    assert picks(mapping, "0.5.15", {10}, longcat) == ["attention-flashinfer"]
    assert picks(mapping, "0.5.16", {10}, longcat) == ["attention-trtllm-mla"]
    # DeepSeek V2 is MLA but not in the override's list: the default picker's flashinfer on SM100
    for version in ("0.5.1", "0.5.9", "0.5.23"):
        assert picks(mapping, version, {10}, DEEPSEEK_V2_LITE) == ["attention-flashinfer"], version
        assert picks(mapping, version, {12}, DEEPSEEK_V2_LITE) == ["attention-triton"], version


def attn(
    mapping: dict[str, Any], version: str, majors: set[int], config: dict[str, Any] | None, *flags: str
) -> list[str]:
    """The attention backend's features alone (without the DSA kernel SGLang picks for a DSA model)."""
    return [f for f in picks(mapping, version, majors, config, *flags) if f not in DSA_KERNELS]


#: the features of the DSA kernels SGLang picks itself (launch.json dsa_defaults), checked below and in
#: tests/verdicts/test_factcheck9.py: FlashMLA's on SM11x/SM12x with 0.5.3-0.5.9, trtllm's from 0.5.9
DSA_KERNELS = ("attention-dsa-trtllm", "attention-flashmla")


def test_a_dsa_model_takes_sglangs_sparse_backend(mapping: dict[str, Any]) -> None:
    """index_topk makes a DeepSeek-family architecture a DSA model: nsa/dsa, whose launch.json choices name no
    feature (its own prefill/decode kernels are not modelled): neither trtllm_mla nor the MLA defaults are required.
    DeepSeek V3.2's config names DeepseekV32ForCausalLM with model_type deepseek_v32, which the transformers
    0.5.3-0.5.11 pin do not register: SGLang reloads it as DeepseekV3ForCausalLM (launch.json
    architecture_aliases), the architecture 0.5.6-0.5.11 list in their DeepSeek block; from 0.5.12 it keeps
    DeepseekV32ForCausalLM and lists it. (The DSA kernels, dsa_defaults, are checked below.)"""
    for version in ("0.5.3", "0.5.5", "0.5.9", "0.5.13", "0.5.23"):
        for major in (9, 10, 12):
            assert attn(mapping, version, {major}, DSA_AS_V3) == [], (version, major)
    for version in ("0.5.3", "0.5.4", "0.5.5", "0.5.6", "0.5.9", "0.5.11", "0.5.12", "0.5.13", "0.5.23"):
        assert attn(mapping, version, {10}, DEEPSEEK_V32) == [], version
    # the same architecture with another model_type is not reloaded: 0.5.11 does not list it, the default decides
    other = {**DEEPSEEK_V32, "model_type": "deepseek_v3"}
    assert attn(mapping, "0.5.11", {10}, other) == ["attention-flashinfer"]
    # without index_topk a DeepseekV3ForCausalLM is V3/R1: trtllm_mla on SM100
    assert attn(mapping, "0.5.9", {10}, DEEPSEEK_R1) == ["attention-trtllm-mla"]
    # a flag turns the DSA pick off too: the open side is the MLA default
    assert attn(mapping, "0.5.9", {10}, DSA_AS_V3, "--prefill-attention-backend", "nsa") == ["attention-flashinfer"]


def test_an_unread_model_is_unknown_where_an_mla_pick_is_not_ok(mapping: dict[str, Any]) -> None:
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m"], mapping, {})
    got = dict(auto_backend_unread(d, mapping, "0.5.9", {10}, "12.8", None))
    assert {"attention-trtllm-mla", "attention-flashinfer"} <= set(got)
    assert "DeepseekV3ForCausalLM" in got["attention-trtllm-mla"] and "MLA model" in got["attention-flashinfer"]
    got = dict(auto_backend_unread(d, mapping, "0.5.9", {12}, "13.0", None))
    assert "MLA model" in got["attention-triton"]
    # not a requirement when the model is not read (an MHA model gets flashinfer on SM120)
    assert "attention-triton" not in picks(mapping, "0.5.9", {12}, None, mla=None)
    assert auto_backend_unread(d, mapping, "0.5.9", {10}, "12.8", V3) == []
    flag = gate.derive(["python", "-m", "sglang.launch_server", "--attention-backend", "triton"], mapping, {})
    assert auto_backend_unread(flag, mapping, "0.5.9", {12}, "13.0", None) == []


def _rubin_with(tmp_path: Path, pins: dict[str, str]) -> Path:
    doc = json.loads(RUBIN.read_text())
    pkgs = doc["facts"]["packages"]
    for name, version in pins.items():
        pkgs[name].update(version=version, dist_version=version.split("+")[0])
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_gate_needs_trtllm_mla_for_deepseek_r1_on_sm107(tmp_path: Path) -> None:
    """SGLang 0.5.17's pins (FlashInfer 0.6.15.post1, whose TllmGenFmhaRunner accepts SM100 and SM103 only) on an
    SM107 box: the R1 launch without an attention flag runs trtllm_mla and fails at the first prefill. The gate
    did not require attention-trtllm-mla before (the box is refused for other reasons too, see the report)."""
    facts = _rubin_with(tmp_path, {"sglang": "0.5.17", "torch": "2.11.0+cu130", "sglang-kernel": "0.4.5",
                                   "flashinfer-python": "0.6.15.post1"})  # fmt: skip
    r1 = model_dir(tmp_path, "DeepSeek-R1", DEEPSEEK_R1)
    doc = gate_json(facts, "--model-path", str(r1), "--tp", "8", dry_run=True)
    need = next((r for r in doc["derived"]["required"] if r["feature"] == "attention-trtllm-mla"), None)
    assert need is not None and "DeepseekV3ForCausalLM picks trtllm_mla" in json.dumps(need)
    assert any(b["feature"] == "attention-trtllm-mla" and b["status"] == "blocked" for b in doc["reasons"])
    # the documented way out: another backend named
    doc = gate_json(facts, "--model-path", str(r1), "--tp", "8", "--attention-backend", "flashinfer", dry_run=True)
    assert not any(b["feature"] == "attention-trtllm-mla" for b in doc["reasons"])
    # V3.2 (DSA) and V2 are not sent to trtllm_mla
    for name, config in (("DeepSeek-V3.2", DEEPSEEK_V32), ("DeepSeek-V2-Lite", DEEPSEEK_V2_LITE)):
        doc = gate_json(facts, "--model-path", str(model_dir(tmp_path, name, config)), "--tp", "8", dry_run=True)
        assert not any(b["feature"] == "attention-trtllm-mla" for b in doc["reasons"]), name
    # the model not read: unknown (it could be a DeepSeek V3), never allowed on that account
    doc = gate_json(facts, "--model-path", str(tmp_path / "absent"), "--tp", "8", dry_run=True)
    got = [b for b in doc["reasons"] if b["feature"] == "attention-trtllm-mla"]
    assert got and got[0]["status"] == "unknown"
    # SGLang 0.5.23's pins (FlashInfer 0.7.2 admits SM107): trtllm_mla is required and ok (icubin1: with its
    # trtllm-gen FMHA cubins known to be on the box; not read, the first kernel's download is unknown)
    rubin = json.loads(RUBIN.read_text())
    rubin["facts"]["flashinfer_cubins"] = {"release": "0.7.2", "ready": {"TRTLLM_GEN_FMHA": True}}
    (tmp_path / "rubin-cubins.json").write_text(json.dumps(rubin))
    doc = gate_json(tmp_path / "rubin-cubins.json", "--model-path", str(r1), "--tp", "8", dry_run=True)
    assert any(r["feature"] == "attention-trtllm-mla" for r in doc["derived"]["required"])
    assert not any(b["feature"] == "attention-trtllm-mla" for b in doc["reasons"])


def test_the_gate_needs_triton_for_an_mla_model_on_a_gb10(tmp_path: Path) -> None:
    """SGLang 0.5.9 on a GB10 (SM121) picks triton for DeepSeek V2-Lite; that box's Triton 3.5.1 cannot assemble
    sm_121a (attention-triton blocked). A Llama launch there gets flashinfer and no triton requirement."""
    lite = model_dir(tmp_path, "DeepSeek-V2-Lite", DEEPSEEK_V2_LITE)
    doc = gate_json(GB10, "--model-path", str(lite), dry_run=True)
    need = next((r for r in doc["derived"]["required"] if r["feature"] == "attention-triton"), None)
    assert need is not None and "MLA model" in json.dumps(need)
    assert any(b["feature"] == "attention-triton" and b["status"] == "blocked" for b in doc["reasons"])
    llama = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(GB10, "--model-path", str(llama), dry_run=True)
    assert not any(r["feature"] == "attention-triton" for r in doc["derived"]["required"])
    doc = gate_json(GB10, "--model-path", str(lite), "--attention-backend", "flashinfer", dry_run=True)
    assert not any(r["feature"] == "attention-triton" for r in doc["derived"]["required"])


# ---- the DSA kernel SGLang picks itself for DeepSeek V3.2 / GLM-5 (launch.json dsa_defaults) -------------------------


def dsa(mapping: dict[str, Any], version: str, majors: set[int], config: dict[str, Any] | None, *flags: str) -> bool:
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    arch = str(config["architectures"][0]) if config else None
    keys = attention_keys(config) if config else None
    got = [f for f, _ in auto_backend_features(d, mapping, version, majors, "12.9", True, arch, keys)]
    return "attention-dsa-trtllm" in got


def test_a_dsa_model_gets_the_trtllm_kernel_on_major_10_and_later(mapping: dict[str, Any]) -> None:
    """From 0.5.10 SGLang sends a DSA model's prefill and decode to trtllm on any GPU of major >= 10 with the FP8 KV
    cache it defaults to there (decode alone with bfloat16), whose TllmGenFmhaRunner runs only on the SM100 family:
    DeepSeek V3.2 on an RTX PRO 6000 (SM120) or a Thor (SM110) fails at the first forward pass."""
    for version in ("0.5.10", "0.5.11", "0.5.14", "0.5.16", "0.5.19", "0.5.23"):
        for major in (10, 11, 12):
            assert dsa(mapping, version, {major}, DEEPSEEK_V32), (version, major)
        assert not dsa(mapping, version, {9}, DEEPSEEK_V32), version  # Hopper: flashmla_kv / fa3
        assert not dsa(mapping, version, {12}, DEEPSEEK_R1), version  # not a DSA model
        assert not dsa(mapping, version, {12}, DEEPSEEK_V32, "--enable-hisparse"), version  # flashmla
    assert dsa(mapping, "0.5.23", {12}, DEEPSEEK_V32, "--attention-backend", "dsa")  # whatever the attention flag
    # 0.5.9: the default FP8 KV cache goes to flashmla; a bfloat16 one sends decode to trtllm
    assert not dsa(mapping, "0.5.9", {12}, DSA_AS_V3)
    assert dsa(mapping, "0.5.9", {12}, DSA_AS_V3, "--kv-cache-dtype", "bf16")
    assert not dsa(mapping, "0.5.9", {12}, DSA_AS_V3, "--kv-cache-dtype", "bf16", "--nsa-decode-backend", "fa3")
    assert not dsa(mapping, "0.5.8", {12}, DSA_AS_V3, "--kv-cache-dtype", "bf16")


def test_the_dsa_flags_that_keep_trtllm_off(mapping: dict[str, Any]) -> None:
    both = ["--dsa-prefill-backend", "flashmla_sparse", "--dsa-decode-backend", "flashmla_sparse"]
    assert not dsa(mapping, "0.5.23", {12}, DEEPSEEK_V32, *both)
    # with the FP8 KV cache each side takes trtllm unless its own flag is given
    assert dsa(mapping, "0.5.23", {12}, DEEPSEEK_V32, "--dsa-decode-backend", "flashmla_sparse")
    # with bfloat16 prefill is flashmla_sparse: the decode flag alone is enough
    assert not dsa(mapping, "0.5.23", {12}, DEEPSEEK_V32, "--kv-cache-dtype", "bf16", "--dsa-decode-backend", "fa3")
    # 0.5.10 puts both sides on trtllm with an FP8 KV cache whatever --nsa-*-backend says
    nsa = ["--nsa-prefill-backend", "flashmla_sparse", "--nsa-decode-backend", "flashmla_sparse"]
    assert dsa(mapping, "0.5.10", {12}, DSA_AS_V3, *nsa)
    assert not dsa(mapping, "0.5.11", {12}, DSA_AS_V3, *nsa)
    # GLM-5 on SM120 with the FP8 KV cache: flashinfer_sparse_mla from 0.5.17; bfloat16 still trtllm decode
    glm5 = {"architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa", "index_topk": 2048}
    assert dsa(mapping, "0.5.16", {12}, glm5)
    assert not dsa(mapping, "0.5.17", {12}, glm5)
    assert dsa(mapping, "0.5.17", {12}, glm5, "--kv-cache-dtype", "bfloat16")
    assert dsa(mapping, "0.5.17", {10}, glm5)
    # a learnable attention sink (0.5.20 on): flashmla_sparse for both sides
    assert not dsa(mapping, "0.5.20", {12}, {**DEEPSEEK_V32, "learnable_sink": True})
    assert dsa(mapping, "0.5.19", {12}, {**DEEPSEEK_V32, "learnable_sink": True})


def test_an_unread_model_is_unknown_where_the_dsa_kernel_is_not_ok(tmp_path: Path) -> None:
    """The RTX PRO 6000 box (SM120, SGLang 0.5.11): DeepSeek V3.2 without DSA flags is refused for
    attention-dsa-trtllm (blocked there); the model not read: unknown; the flags that keep trtllm off: no reason."""
    rtx = ROOT / "tests" / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json"
    v32 = model_dir(tmp_path, "DeepSeek-V3.2", DEEPSEEK_V32)
    doc = gate_json(rtx, "--model-path", str(v32), "--tp", "8", dry_run=True)
    got = [b for b in doc["reasons"] if b["feature"] == "attention-dsa-trtllm"]
    assert got and got[0]["status"] == "blocked", doc["reasons"]
    doc = gate_json(rtx, "--model-path", str(tmp_path / "absent"), "--tp", "8", dry_run=True)
    got = [b for b in doc["reasons"] if b["feature"] == "attention-dsa-trtllm"]
    assert got and got[0]["status"] == "unknown" and "DSA one" in json.dumps(got[0])
    # as for the overrides, an attention backend named leaves an unread model's DSA kernel unjudged (see launch.json)
    doc = gate_json(rtx, "--model-path", str(tmp_path / "absent"), "--attention-backend", "triton", dry_run=True)
    assert not any(b["feature"] == "attention-dsa-trtllm" for b in doc["reasons"])
    flags = ["--nsa-prefill-backend", "flashmla_sparse", "--nsa-decode-backend", "flashmla_sparse"]
    doc = gate_json(rtx, "--model-path", str(v32), "--tp", "8", *flags, dry_run=True)
    assert not any(b["feature"] == "attention-dsa-trtllm" for b in doc["reasons"])
    r1 = model_dir(tmp_path, "DeepSeek-R1", DEEPSEEK_R1)
    doc = gate_json(rtx, "--model-path", str(r1), "--tp", "8", dry_run=True)
    assert not any(b["feature"] == "attention-dsa-trtllm" for b in doc["reasons"])


# ---- the MLA backend list 0.5.1-0.5.4 check as the model runner starts (launch.json mla-attention-backend) -------


def mla_rule(mapping: dict[str, Any], version: str, config: dict[str, Any] | None, *flags: str) -> str:
    arch = str(config["architectures"][0]) if config else None
    models = {"model": attention_keys(config) if config is not None else None}
    return rule_status(mapping, "mla-attention-backend", version, {10}, arch, models, *flags)


def test_an_mla_model_on_a_backend_outside_the_mla_list_is_refused_in_0_5_1_to_0_5_4(mapping: dict[str, Any]) -> None:
    """A Blackwell command line carried over to DeepSeek R1 (--attention-backend trtllm_mha) ends in ModelRunner's
    ValueError 'Invalid attention backend for MLA' with 0.5.1-0.5.4; fa4 is listed from 0.5.3; 0.5.5 on no longer
    check."""
    for version in ("0.5.1", "0.5.2", "0.5.3", "0.5.4"):
        assert mla_rule(mapping, version, DEEPSEEK_R1, "--attention-backend", "trtllm_mha") == "blocked", version
        assert mla_rule(mapping, version, DEEPSEEK_V2_LITE, "--attention-backend", "flex_attention") == "blocked"
        assert mla_rule(mapping, version, DEEPSEEK_R1, "--attention-backend", "trtllm_mla") == "ok", version
        assert mla_rule(mapping, version, DEEPSEEK_R1) == "ok", version  # SGLang's own pick is listed
        assert mla_rule(mapping, version, LLAMA3, "--attention-backend", "trtllm_mha") == "ok", version
    assert mla_rule(mapping, "0.5.2", DEEPSEEK_R1, "--attention-backend", "fa4") == "blocked"
    assert mla_rule(mapping, "0.5.3", DEEPSEEK_R1, "--attention-backend", "fa4") == "ok"
    assert mla_rule(mapping, "0.5.5", DEEPSEEK_R1, "--attention-backend", "trtllm_mha") == "ok"
    # the split flags are not checked; an unread model is unknown on a backend outside the list, not ok (it may be
    # MLA: fail closed, as the GPT-OSS, Olmo2 and Llama 4 assertion rules), and not judged on a listed one
    split = ["--prefill-attention-backend", "torch_native", "--decode-attention-backend", "torch_native"]
    assert mla_rule(mapping, "0.5.4", DEEPSEEK_R1, *split) == "ok"
    assert mla_rule(mapping, "0.5.4", None, "--attention-backend", "trtllm_mha") == "unknown"
    assert mla_rule(mapping, "0.5.4", None, "--attention-backend", "triton") == "ok"
    kimi_vl = {"architectures": ["KimiVLForConditionalGeneration"], "model_type": "kimi_vl"}
    assert mla_rule(mapping, "0.5.3", kimi_vl, "--attention-backend", "torch_native") == "blocked"


# ---- Exaone 4 / Exaone MoE (0.5.22-0.5.23): Olmo2's picks, fa3 on Blackwell SM120/SM110 included ------------------


def test_the_exaone_override_per_gpu_and_release(mapping: dict[str, Any]) -> None:
    for version in ("0.5.22", "0.5.23"):
        assert picks(mapping, version, {12}, EXAONE4, mla=False) == ["attention-fa3"], version
        assert picks(mapping, version, {11}, EXAONE4, mla=False) == ["attention-fa3"], version
        assert picks(mapping, version, {10}, EXAONE4, mla=False) == ["attention-trtllm-mha"], version
        assert picks(mapping, version, {7}, EXAONE4, mla=False) == ["attention-triton"], version
    assert picks(mapping, "0.5.21", {12}, EXAONE4, mla=False) == []  # no pick before 0.5.22
    assert picks(mapping, "0.5.23", {12}, EXAONE4, "--attention-backend", "flashinfer", mla=False) == []
    # only --attention-backend turns it off (resolving_view(...).attention_backend)
    assert picks(mapping, "0.5.23", {12}, EXAONE4, "--decode-attention-backend", "triton", mla=False) == [
        "attention-fa3"
    ]


def test_the_gate_refuses_a_default_exaone4_launch_on_sm120(tmp_path: Path) -> None:
    """SGLang 0.5.23 on an SM120 box picks fa3 for Exaone 4 (device_sm >= 80), whose backend asserts SM 8.0-9.0."""
    seed = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # SGLang 0.5.23, SM120
    model = model_dir(tmp_path, "EXAONE-4.0", EXAONE4)
    doc = gate_json(seed, "--model-path", str(model), dry_run=True)
    need = next((r for r in doc["derived"]["required"] if r["feature"] == "attention-fa3"), None)
    assert need is not None and "Exaone4ForCausalLM picks fa3" in json.dumps(need)
    assert any(b["feature"] == "attention-fa3" and b["status"] == "blocked" for b in doc["reasons"])
    doc = gate_json(seed, "--model-path", str(model), "--attention-backend", "flashinfer", dry_run=True)
    assert not any(b["feature"] == "attention-fa3" for b in doc["reasons"])


def test_the_gate_refuses_a_default_deepseek_v32_launch_on_sm120(tmp_path: Path) -> None:
    """The seed-after box (SM120, SGLang 0.5.23), which the gate allowed DeepSeek V3.2 on: SGLang sends the DSA
    model's prefill and decode to trtllm there (FP8 KV cache by default on major >= 10), whose runner refuses
    sm_120. With both DSA backend flags naming flashmla_sparse the launch is allowed again."""
    seed = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"
    v32 = model_dir(tmp_path, "DeepSeek-V3.2", DEEPSEEK_V32)
    doc = gate_json(seed, "--model-path", str(v32), dry_run=True)
    assert doc["decision"] == "refuse"
    assert any(b["feature"] == "attention-dsa-trtllm" and b["status"] == "blocked" for b in doc["reasons"])
    flags = ["--dsa-prefill-backend", "flashmla_sparse", "--dsa-decode-backend", "flashmla_sparse"]
    doc = gate_json(seed, "--model-path", str(v32), *flags, dry_run=True)
    assert not any(b["feature"] == "attention-dsa-trtllm" for b in doc["reasons"]), doc["reasons"]


def test_0_5_6_post1_and_post2_pick_trtllm_mha_on_any_blackwell(mapping: dict[str, Any]) -> None:
    """sglang 0.5.6.post1 and 0.5.6.post2 (wheels read, server_args.py 1352 / 1382) pick trtllm_mha for an MHA model
    when is_blackwell() (majors 10 and 12), then refuse it off SM100 (sglang#14814, RTX 5090); 0.5.6 has no such
    default and 0.5.7 asks is_sm100_supported() (major 10 only)."""
    for version in ("0.5.6.post1", "0.5.6.post2"):
        assert picks(mapping, version, {12}, LLAMA3, mla=False) == ["attention-trtllm-mha"], version
        assert "attention-trtllm-mha" in picks(mapping, version, {10}, LLAMA3, mla=False), version
        assert "attention-trtllm-mha" not in picks(mapping, version, {12}, DEEPSEEK_R1), version  # MLA: triton
    for version in ("0.5.6", "0.5.7"):
        assert "attention-trtllm-mha" not in picks(mapping, version, {12}, LLAMA3, mla=False), version
