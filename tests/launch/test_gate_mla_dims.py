"""The MLA dims the trtllm_mla and flashmla kernels take (features.json attention-trtllm-mla's mla-dims-* rules and
attention-flashmla's flashmla-mla-dims), a false pass the tenth fact-check found (tests/realworld/FACTCHECK.md):
a MiniCPM3 checkpoint (kv_lora_rank 256, qk_rope_head_dim 32) on either backend passed the gate and fails at its
first decode. FlashInfer's _check_trtllm_gen_mla_shape takes DeepSeek's dims only before 0.6.5 (qk_nope_head_dim
128 or 192 in 0.6.5), 512/64 or 256/64 from 0.6.6, and 512/0 as well from 0.6.17; FlashMLA's decode kernels take
a head of 576 and a V head of 512 (kv_lora_rank 512, qk_rope_head_dim 64). The gate reads the dims from
config.json (launch.mla_kv_rope, launch.mla_qk_nope_head_dim); where it names a model whose config.json it cannot
read and the command gives the backend, the rule is unknown."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json, mla_data_until_0_5_20, model_dir
from release_box import judge, rules

from stackcheck.knowledge.loader import Manifests, load
from stackcheck.launch.preflight.model import mla_dims

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"  # 8x B200 (SM100), SGLang 0.5.20, FlashInfer 0.6.18
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # 8x H200 (SM90), SGLang 0.5.23, sglang-kernel 0.4.10

# Written here in the shape of https://huggingface.co/openbmb/MiniCPM3-4B/blob/main/config.json (its attention
# keys; the values as the tenth fact-check's row a8 read them: kv_lora_rank 256, qk_rope_head_dim 32; not fetched
# from this box, which cannot reach huggingface.co)
MINICPM3 = {
    "architectures": ["MiniCPM3ForCausalLM"], "model_type": "minicpm3", "hidden_size": 2560,
    "num_attention_heads": 40, "num_key_value_heads": 40, "q_lora_rank": 768, "kv_lora_rank": 256,
    "qk_nope_head_dim": 64, "qk_rope_head_dim": 32,
}  # fmt: skip
# in the shape of https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (its attention keys)
DEEPSEEK_V3 = {
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3", "hidden_size": 7168,
    "num_attention_heads": 128, "num_key_value_heads": 128, "q_lora_rank": 1536, "kv_lora_rank": 512,
    "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
}  # fmt: skip
# a DeepseekV3ForCausalLM checkpoint with smaller MLA dims (synthetic): SGLang's own override picks trtllm_mla for
# the architecture on SM100, whatever its dims
SMALL_V3 = {**DEEPSEEK_V3, "kv_lora_rank": 256, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 64}


def _launch(kv_rope: str, nope: int, backend: str = "trtllm_mla") -> dict[str, Any]:
    return {"mla": True, "mla_kv_rope": kv_rope, "mla_qk_nope_head_dim": nope, "attention_backend": backend}


# (SGLang release, its FlashInfer pin): dims -> the mla-dims rule that fails (None: none)
TRTLLM = [
    ("0.5.5", "0.5.0", "512/64", 128, None),
    ("0.5.5", "0.5.0", "256/64", 64, "mla-dims-deepseek-only"),
    ("0.5.8", "0.6.1", "512/64", 192, "mla-dims-deepseek-only"),  # GLM-4.7-Flash's shape: nope 192
    ("0.5.9", "0.6.3", "256/32", 64, "mla-dims-deepseek-only"),
    ("0.5.10", "0.6.7.post2", "256/64", 64, None),
    ("0.5.10", "0.6.7.post2", "512/64", 192, None),
    ("0.5.12", "0.6.11.post1", "256/32", 64, "mla-dims-deepseek-or-smaller"),
    ("0.5.17", "0.6.15.post1", "512/0", 256, "mla-dims-deepseek-or-smaller"),
    ("0.5.20", "0.6.18", "512/0", 256, None),
    ("0.5.20", "0.6.18", "256/32", 64, "mla-dims-supported"),
    ("0.5.23", "0.7.2", "512/64", 128, None),
    ("0.5.23", "0.7.2", "256/32", 64, "mla-dims-supported"),
]


@pytest.mark.parametrize(("sglang", "flashinfer", "kv_rope", "nope", "fails"), TRTLLM)
def test_trtllm_mla_dims_follow_the_flashinfer_release(
    manifests: Manifests, sglang: str, flashinfer: str, kv_rope: str, nope: int, fails: str | None
) -> None:
    v = judge(manifests, "attention-trtllm-mla", "10.0", sglang, _launch(kv_rope, nope))
    failing = [r for r in rules(v) if r.startswith("mla-dims")]
    assert failing == ([fails] if fails else []), (sglang, flashinfer, kv_rope, nope, v.get("reasons"))
    assert not [r for r in rules(v, "unknown") if r.startswith("mla-dims")]
    if fails:
        assert v["status"] == "blocked" and v["effect"] == "crash"


def test_trtllm_mla_dims_are_not_judged_without_the_model_or_on_another_decode_side(manifests: Manifests) -> None:
    """The audit (no launch.mla) and a launch that decodes elsewhere are not judged on the dims."""
    for launch in (
        {"attention_backend": "trtllm_mla"},  # no model read (audit, recommend without a config)
        {**_launch("256/32", 64), "mla": False},  # not MLA: mla-models-only says it
        {**_launch("256/32", 64), "decode_attention_backend": "flashinfer", "prefill_attention_backend": "trtllm_mla"},
    ):
        v = judge(manifests, "attention-trtllm-mla", "10.0", "0.5.20", launch)
        assert not [r for r in (*rules(v), *rules(v, "unknown")) if r.startswith("mla-dims")], launch


def test_trtllm_mla_dims_unknown_where_the_config_does_not_state_them(manifests: Manifests) -> None:
    unread = {"attention_backend": "trtllm_mla", "model_config_read": False}
    unstated = {"attention_backend": "trtllm_mla", "mla": True}
    for launch in (unread, unstated):
        v = judge(manifests, "attention-trtllm-mla", "10.0", "0.5.20", launch)
        unknown = rules(v, "unknown")
        assert [r for r in unknown if r.startswith("mla-dims")] == ["mla-dims-supported"], launch
        # the heads per GPU and the prefill dims come from the same config.json: unknown too (imla2)
        assert {"mla-heads-per-gpu", "mla-prefill-dims-supported"} <= set(unknown), launch
        assert "not read" in json.dumps(v["reasons"])
    # read, and not MLA: the dims rules say nothing (mla-models-only judges the launch)
    v = judge(manifests, "attention-trtllm-mla", "10.0", "0.5.20", {**unread, "model_config_read": True})
    assert not [r for r in rules(v, "unknown") if r.startswith("mla-dims")]


@pytest.mark.parametrize(("kv_rope", "fails"), [("512/64", False), ("256/32", True), ("256/64", True), ("512/0", True)])
def test_flashmla_takes_deepseek_dims_only(manifests: Manifests, kv_rope: str, fails: bool) -> None:
    for sglang in ("0.5.9", "0.5.23"):
        v = judge(manifests, "attention-flashmla", "9.0", sglang, _launch(kv_rope, 128, "flashmla"))
        assert ("flashmla-mla-dims" in rules(v)) is fails, (sglang, kv_rope, v.get("reasons"))


def test_mla_dims_read_as_config_json_states_them() -> None:
    assert mla_dims(MINICPM3) == {"mla_kv_rope": "256/32", "mla_qk_nope_head_dim": 64}
    assert mla_dims(DEEPSEEK_V3) == {"mla_kv_rope": "512/64", "mla_qk_nope_head_dim": 128}
    nested = {"architectures": ["KimiK25ForConditionalGeneration"], "text_config": dict(DEEPSEEK_V3)}
    assert mla_dims(nested) == {"mla_kv_rope": "512/64", "mla_qk_nope_head_dim": 128}
    assert mla_dims({"kv_lora_rank": 512}) == {}  # rope not stated: not guessed
    assert mla_dims({"kv_lora_rank": "512", "qk_rope_head_dim": 64, "qk_nope_head_dim": True}) == {}
    assert mla_dims({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096}) == {}


def _dims_reasons(doc: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    return [
        (str(f.get("feature")), str(r.get("rule")), str(r.get("result")), r.get("observed"))
        for f in doc["reasons"]
        for r in f.get("reasons") or []
        if "mla-dims" in str(r.get("rule"))
    ]


def _gate(facts: Path, tmp_path: Path, name: str, config: dict[str, Any] | None, *flags: str) -> dict[str, Any]:
    model = model_dir(tmp_path, name, config)
    return gate_json(facts, "--model-path", str(model), "--tp", "8", *flags, dry_run=True)


def test_gate_refuses_minicpm3_on_trtllm_mla_on_sm100(tmp_path: Path) -> None:
    doc = _gate(B200, tmp_path, "minicpm3", MINICPM3, "--attention-backend", "trtllm_mla")
    assert doc["decision"] == "refuse"
    assert _dims_reasons(doc) == [("attention-trtllm-mla", "mla-dims-supported", "fail", "256/32")]
    text = json.dumps(doc["reasons"])
    assert "Unsupported MLA dimensions" in text and "flashinfer-python 0.6.17 wheel" in text


def test_gate_refuses_minicpm3_on_flashmla_on_sm90(tmp_path: Path) -> None:
    doc = _gate(H200, tmp_path, "minicpm3", MINICPM3, "--attention-backend", "flashmla")
    assert doc["decision"] == "refuse"
    assert _dims_reasons(doc) == [("attention-flashmla", "flashmla-mla-dims", "fail", "256/32")]


def test_gate_takes_deepseek_v3_dims_on_both_backends(tmp_path: Path) -> None:
    """(The case boxes are refused for other reasons: only the dims rules are asserted.)"""
    for facts, backend in ((B200, "trtllm_mla"), (H200, "flashmla")):
        doc = _gate(facts, tmp_path, f"dsv3-{backend}", DEEPSEEK_V3, "--attention-backend", backend)
        assert _dims_reasons(doc) == [], backend


def test_gate_judges_sglangs_own_pick_of_trtllm_mla(tmp_path: Path) -> None:
    """No attention flag: SGLang's override for DeepseekV3ForCausalLM picks trtllm_mla on SM100, and the dims rule
    applies to that pick; MiniCPM3 gets flashinfer there and the rule says nothing."""
    doc = _gate(B200, tmp_path, "small-v3", SMALL_V3)
    assert _dims_reasons(doc) == [("attention-trtllm-mla", "mla-dims-supported", "fail", "256/32")]
    kinds = [f.get("kind") for f in doc["reasons"] if f.get("feature") == "attention-trtllm-mla"]
    assert kinds == ["default"]
    assert _dims_reasons(_gate(B200, tmp_path, "minicpm3", MINICPM3)) == []
    assert _dims_reasons(_gate(B200, tmp_path, "dsv3", DEEPSEEK_V3)) == []


def test_gate_fails_closed_where_it_reads_no_config(tmp_path: Path) -> None:
    doc = _gate(B200, tmp_path, "no-config", None, "--attention-backend", "trtllm_mla")
    assert _dims_reasons(doc) == [("attention-trtllm-mla", "mla-dims-supported", "unknown", None)]
    assert doc["decision"] == "refuse"
    doc = _gate(H200, tmp_path, "no-config-h200", None, "--attention-backend", "flashmla")
    assert _dims_reasons(doc) == [("attention-flashmla", "flashmla-mla-dims", "unknown", None)]


def _gate_with(gate_options: list[str], facts: Path, *launch: str) -> dict[str, Any]:
    """`stackcheck gate --facts F OPTIONS --dry-run --format json -- python -m sglang.launch_server LAUNCH`."""
    return gate_json(facts, *launch, dry_run=True, options=gate_options)


def _allowing_unknown(facts: Path, model: Path, backend: str) -> str:
    """The decision with --allow-unknown (the case boxes' facts files hold no JIT facts, which is unknown)."""
    launch = ("--model-path", str(model), "--tp", "8", "--attention-backend", backend)
    return str(_gate_with(["--allow-unknown"], facts, *launch)["decision"])


def test_the_false_pass_is_closed_and_deepseek_still_passes(tmp_path: Path) -> None:
    """On the parent commit all four were allowed: MiniCPM3 on trtllm_mla (8x B200, FlashInfer 0.6.18) and on
    flashmla (8x H200, sglang-kernel 0.4.10) crash at the first decode; DeepSeek V3 runs on both."""
    minicpm3, dsv3 = model_dir(tmp_path, "minicpm3", MINICPM3), model_dir(tmp_path, "dsv3", DEEPSEEK_V3)
    for facts, backend in ((B200, "trtllm_mla"), (H200, "flashmla")):
        assert _allowing_unknown(facts, minicpm3, backend) == "refuse", backend
        assert _allowing_unknown(facts, dsv3, backend) == "allow", backend


def test_recommend_reads_the_dims_the_gate_reads(tmp_path: Path) -> None:
    """recommend's launch facts carry the same dims, so the gate's verdicts and recommend's agree on them."""
    from stackcheck.commands.recommend import model_facts

    data = load([]).preflight["model"]
    for name, config in (("minicpm3", MINICPM3), ("dsv3", DEEPSEEK_V3)):
        facts = model_facts(str(model_dir(tmp_path, name, config)), data, "0.5.20")[0]
        got = {k: facts[k] for k in ("mla_kv_rope", "mla_qk_nope_head_dim")}
        assert got == mla_dims(config), name


def test_an_mla_kind_not_known_leaves_bad_dims_unknown(tmp_path: Path) -> None:
    """SGLang newer than the MLA data (a --manifests copy whose table stops at 0.5.20, as in
    test_gate_mla_release): an architecture no release read names, with kv_lora_rank, may be MLA. Its dims are
    still read: MiniCPM3's on flashmla make the verdict unknown (never ok), DeepSeek's leave the dims rule out."""
    over = mla_data_until_0_5_20(tmp_path)
    foo = {"architectures": ["FooMLAForCausalLM"], "model_type": "foo"}
    small = model_dir(tmp_path, "foo-small", {**MINICPM3, **foo})
    doc = _gate_with(["--manifests", str(over)], H200, "--model-path", str(small), "--attention-backend", "flashmla")
    assert "model_mla" not in doc["derived"]["launch"]
    assert _dims_reasons(doc) == [("attention-flashmla", "flashmla-mla-dims", "unknown", "256/32")]
    assert "MLA not known" in json.dumps(doc["reasons"])
    big = model_dir(tmp_path, "foo-big", {**DEEPSEEK_V3, **foo})
    doc = _gate_with(["--manifests", str(over)], H200, "--model-path", str(big), "--attention-backend", "flashmla")
    assert _dims_reasons(doc) == []
