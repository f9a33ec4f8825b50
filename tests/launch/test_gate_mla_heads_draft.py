"""Three gaps imladim left open on trtllm_mla (features.json attention-trtllm-mla), each a false pass:

- heads per GPU (mla-heads-per-gpu): from FlashInfer 0.6.16 the trtllm-gen MLA decode (backend 'auto', major 10)
  refuses 64 < query heads per GPU < 128, and SGLang 0.5.17+ always passes multi_ctas_kv_counter_buffer, which then
  raises ValueError at the first decode. The gate reads num_attention_heads from config.json and splits it by the
  attention TP size (tp // dp with DP attention);
- the ragged prefill's head dims (mla-prefill-dims-*): trtllm_ragged_attention_deepseek asserts (QK, K, V) in
  {(192, 192, 128)} before 0.6.6, + (128, 128, 128) from 0.6.6, + (256, 256, 256) from 0.6.12 (a GLM-4.7-Flash
  shape, nope 192 + rope 64 / V 256, fails on the 0.6.12 pin's predecessors);
- the speculative draft model (draft-mla-*): SGLang's draft worker builds trtllm_mla (or flashmla) on the draft
  model's own config, so its dims and heads go through the same checks.
Read in the wheels (flashinfer-python 0.5.0-0.7.4, sglang 0.5.5-0.5.23); the model configs below are written here
in the DeepSeek shape, not copied from a published checkpoint."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import stackcheck_json
from gate_cli import DEEPSEEK_R1, gate_json, model_dir
from release_box import rules

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import Manifests
from stackcheck.launch.preflight.model import mla_prefill_dims, query_heads
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature

ROOT = Path(__file__).resolve().parent.parent.parent
# 8x B200 (SM100), SGLang 0.5.20, FlashInfer 0.6.18 (icubin1: with flashinfer-cubin, so the cubins are known there)
B200 = ROOT / "tests" / "cases" / "b200-cubin-package" / "facts.json"
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"  # 8x H200 (SM90), SGLang 0.5.23

# a DeepSeek-shaped MLA model with 96 query heads (synthetic): 96 per GPU at TP 1, 48 at TP 2
HEADS_96 = {**DEEPSEEK_R1, "num_attention_heads": 96, "num_key_value_heads": 96}
# DeepSeek's decode dims, GLM-4.7-Flash's prefill shape (nope 192, rope 64, V 256: QK 256 / V 256)
GLM_FLASH_SHAPE = {**DEEPSEEK_R1, "qk_nope_head_dim": 192, "v_head_dim": 256, "num_attention_heads": 20}
# smaller MLA dims than FlashInfer's decode takes (kv_lora_rank 256, rope 32) in an architecture SGLang runs as MLA
SMALL_DRAFT = {**DEEPSEEK_R1, "kv_lora_rank": 256, "qk_rope_head_dim": 32, "qk_nope_head_dim": 64, "v_head_dim": 64}


def _judge(
    manifests: Manifests, feature: str, cc: str, sglang: str, flashinfer: str | None, launch: dict[str, Any]
) -> Any:
    """The verdict on eight GPUs of `cc` with SGLang `sglang`'s pins, FlashInfer `flashinfer` in place of its pin."""
    base: dict[str, Any] = {"gpus": assumed_gpus(manifests, f"{cc}x8"), "system": {"machine": "x86_64"},
                            "topology": {"interconnect": "nvlink", "nvswitch": True}}  # fmt: skip
    facts = release_facts(base, manifests, sglang, None, None)
    if flashinfer is not None:
        facts["packages"]["flashinfer-python"]["version"] = flashinfer
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 8, **launch})  # type: ignore[arg-type]
    return evaluate_feature(next(f for f in manifests.features if f["id"] == feature), ctx)


def _heads(per_gpu: int) -> dict[str, Any]:
    dims = {"mla": True, "mla_kv_rope": "512/64", "mla_qk_nope_head_dim": 128, "mla_prefill_dims": "192/128"}
    return {**dims, "mla_heads_per_gpu": per_gpu, "attention_backend": "trtllm_mla"}


# (SGLang, FlashInfer, heads per GPU) -> whether mla-heads-per-gpu fails
HEADS = [
    ("0.5.17", "0.6.15.post1", 96, False),  # no heads check before FlashInfer 0.6.16
    ("0.5.17", "0.6.16", 96, True),
    ("0.5.18", "0.6.17", 65, True),
    ("0.5.20", "0.6.18", 127, True),
    ("0.5.20", "0.6.18", 64, False),
    ("0.5.20", "0.6.18", 128, False),
    ("0.5.23", "0.7.2", 96, True),
    ("0.5.23", "0.7.4", 80, True),
    ("0.5.16", "0.6.16", 96, False),  # SGLang before 0.5.17 passes no counter buffer: FlashInfer may fall back
]


@pytest.mark.parametrize(("sglang", "flashinfer", "per_gpu", "fails"), HEADS)
def test_trtllm_gen_heads_gap_follows_the_releases(
    manifests: Manifests, sglang: str, flashinfer: str, per_gpu: int, fails: bool
) -> None:
    v = _judge(manifests, "attention-trtllm-mla", "10.0", sglang, flashinfer, _heads(per_gpu))
    assert ("mla-heads-per-gpu" in rules(v)) is fails, (sglang, flashinfer, per_gpu, v.get("reasons"))
    if fails:
        reason = next(r for r in v["reasons"] if r.get("rule") == "mla-heads-per-gpu")
        assert reason["observed"] == f"launch.mla_heads_per_gpu = {per_gpu}" and v["status"] == "blocked"
        assert "flashinfer-python 0.6.16 wheel" in json.dumps(reason)


def test_heads_gap_is_not_judged_off_sm100_and_unknown_unread(manifests: Manifests) -> None:
    """On SM120 FlashInfer's 'auto' decodes with XQA MLA, which has no heads check; where the count was not read
    (no num_attention_heads, or a split flag leaves it open) the rule is unknown, never ok."""
    v = _judge(manifests, "attention-trtllm-mla", "12.0", "0.5.23", "0.7.2", _heads(96))
    assert "mla-heads-per-gpu" not in rules(v) + rules(v, "unknown")
    unread = {k: v for k, v in _heads(96).items() if k != "mla_heads_per_gpu"}
    v = _judge(manifests, "attention-trtllm-mla", "10.0", "0.5.23", "0.7.2", unread)
    assert "mla-heads-per-gpu" in rules(v, "unknown")
    assert "heads per GPU were not read" in json.dumps(v["reasons"])


# (FlashInfer, QK/V) -> the prefill rule that fails (None: none)
PREFILL = [
    ("0.6.5", "192/128", None),
    ("0.6.5", "128/128", "mla-prefill-dims-deepseek-only"),
    ("0.6.11.post1", "128/128", None),
    ("0.6.11.post1", "256/256", "mla-prefill-dims-deepseek-or-128"),
    ("0.6.12", "256/256", None),
    ("0.7.2", "96/64", "mla-prefill-dims-supported"),
]


@pytest.mark.parametrize(("flashinfer", "dims", "fails"), PREFILL)
def test_ragged_prefill_dims_follow_the_flashinfer_release(
    manifests: Manifests, flashinfer: str, dims: str, fails: str | None
) -> None:
    launch = {**_heads(16), "mla_prefill_dims": dims}
    v = _judge(manifests, "attention-trtllm-mla", "10.0", "0.5.14", flashinfer, launch)
    failing = [r for r in rules(v) if r.startswith("mla-prefill-dims")]
    assert failing == ([fails] if fails else []), (flashinfer, dims, v.get("reasons"))
    # a prefill side on another backend is not judged
    split = {**launch, "prefill_attention_backend": "flashinfer", "decode_attention_backend": "trtllm_mla"}
    v = _judge(manifests, "attention-trtllm-mla", "10.0", "0.5.14", flashinfer, split)
    assert not [r for r in rules(v) + rules(v, "unknown") if r.startswith("mla-prefill-dims")]


def test_config_readers() -> None:
    assert mla_prefill_dims(DEEPSEEK_R1) == {"mla_prefill_dims": "192/128"}
    assert mla_prefill_dims(GLM_FLASH_SHAPE) == {"mla_prefill_dims": "256/256"}
    assert mla_prefill_dims({k: v for k, v in DEEPSEEK_R1.items() if k != "v_head_dim"}) == {}  # not guessed
    assert query_heads({"text_config": HEADS_96, "num_attention_heads": 8}) == 96  # hf_text_config first
    assert query_heads({"num_attention_heads": True}) is None and query_heads({}) is None


def _reasons(doc: dict[str, Any], prefix: str) -> list[tuple[str, str, Any]]:
    return [
        (str(r.get("rule")), str(r.get("result")), r.get("observed"))
        for f in doc["reasons"]
        if f.get("feature") in ("attention-trtllm-mla", "attention-flashmla")
        for r in f.get("reasons") or []
        if str(r.get("rule")).startswith(prefix)
    ]


def test_gate_refuses_96_heads_per_gpu_on_b200(tmp_path: Path) -> None:
    """8x B200, SGLang 0.5.20, FlashInfer 0.6.18: 96 heads at TP 1 (or TP 2 with DP attention over 2) fail; at TP
    2 (48 per GPU) and TP 8 (12) they pass; DeepSeek's 128 at TP 1 passes."""
    model = model_dir(tmp_path, "h96", HEADS_96)
    launch = ("--model-path", str(model), "--attention-backend", "trtllm_mla")
    doc = gate_json(B200, *launch, "--tp", "1", dry_run=True)
    assert _reasons(doc, "mla-heads") == [("mla-heads-per-gpu", "fail", "launch.mla_heads_per_gpu = 96")]
    assert doc["decision"] == "refuse"
    assert "multi_ctas_kv_counter_buffer" in json.dumps(doc["reasons"])
    dp = gate_json(B200, *launch, "--tp", "2", "--dp", "2", "--enable-dp-attention", dry_run=True)
    assert _reasons(dp, "mla-heads") == [("mla-heads-per-gpu", "fail", "launch.mla_heads_per_gpu = 96")]
    for tp in ("2", "8"):
        assert _reasons(gate_json(B200, *launch, "--tp", tp, dry_run=True), "mla-heads") == [], tp
    dsv3 = model_dir(tmp_path, "dsv3", DEEPSEEK_R1)
    doc = gate_json(B200, "--model-path", str(dsv3), "--attention-backend", "trtllm_mla", "--tp", "1", dry_run=True)
    assert _reasons(doc, "mla-heads") == []


def test_gate_heads_with_a_split_flag_and_unread(tmp_path: Path) -> None:
    """A flag that splits attention further (--attn-cp-size) leaves 96 heads open (unknown) and DeepSeek's 128 at
    TP 8 outside the gap on every split (its count at tp // dp is given); no config.json: unknown."""
    model = model_dir(tmp_path, "h96", HEADS_96)
    launch = ("--attention-backend", "trtllm_mla", "--tp", "8", "--attn-cp-size", "2")
    doc = gate_json(B200, "--model-path", str(model), *launch, dry_run=True)
    assert _reasons(doc, "mla-heads") == [("mla-heads-per-gpu", "unknown", None)]
    dsv3 = model_dir(tmp_path, "dsv3", DEEPSEEK_R1)
    assert _reasons(gate_json(B200, "--model-path", str(dsv3), *launch, dry_run=True), "mla-heads") == []
    empty = model_dir(tmp_path, "none", None)
    doc = gate_json(B200, "--model-path", str(empty), "--attention-backend", "trtllm_mla", dry_run=True)
    assert _reasons(doc, "mla-heads") == [("mla-heads-per-gpu", "unknown", None)]


def test_gate_judges_the_draft_models_dims_and_heads(tmp_path: Path) -> None:
    """The target passes; the EAGLE draft's own config (smaller dims; 96 heads at TP 1) fails on trtllm_mla, by the
    flag or SGLang's own pick (no attention flag: DeepseekV3ForCausalLM's override on SM100); a draft on another
    backend (--speculative-draft-attention-backend flashinfer) is not judged; an unread draft is unknown."""
    target = model_dir(tmp_path, "target", DEEPSEEK_R1)
    small = model_dir(tmp_path, "small-draft", SMALL_DRAFT)
    spec = ("--model-path", str(target), "--speculative-algorithm", "EAGLE", "--tp", "8")
    doc = gate_json(B200, *spec, "--speculative-draft-model-path", str(small), "--attention-backend", "trtllm_mla",
                    dry_run=True)  # fmt: skip
    assert _reasons(doc, "draft-mla") == [("draft-mla-dims-supported", "fail", "256/32")]
    assert _reasons(doc, "mla-dims") == []  # the target's own dims pass
    assert "speculative draft model has" in json.dumps(doc["reasons"])
    own = gate_json(B200, *spec, "--speculative-draft-model-path", str(small), dry_run=True)
    assert _reasons(own, "draft-mla") == [("draft-mla-dims-supported", "fail", "256/32")]
    off = gate_json(B200, *spec, "--speculative-draft-model-path", str(small), "--attention-backend", "trtllm_mla",
                    "--speculative-draft-attention-backend", "flashinfer", dry_run=True)  # fmt: skip
    assert _reasons(off, "draft-mla") == []
    # the draft alone on trtllm_mla (the target on flashinfer): the draft's backend is required and judged
    alone = gate_json(B200, *spec, "--speculative-draft-model-path", str(small), "--attention-backend", "flashinfer",
                      "--speculative-draft-attention-backend", "trtllm_mla", dry_run=True)  # fmt: skip
    assert _reasons(alone, "draft-mla") == [("draft-mla-dims-supported", "fail", "256/32")]
    assert _reasons(alone, "mla-dims") == []
    heads = model_dir(tmp_path, "h96-draft", HEADS_96)
    one = ("--model-path", str(target), "--speculative-algorithm", "EAGLE", "--tp", "1")
    doc = gate_json(B200, *one, "--speculative-draft-model-path", str(heads), "--attention-backend", "trtllm_mla",
                    dry_run=True)  # fmt: skip
    assert _reasons(doc, "draft-mla") == [("draft-mla-heads-per-gpu", "fail", "launch.draft_mla_heads_per_gpu = 96")]
    unread = model_dir(tmp_path, "unread-draft", None)
    doc = gate_json(B200, *spec, "--speculative-draft-model-path", str(unread), "--attention-backend", "trtllm_mla",
                    dry_run=True)  # fmt: skip
    assert ("draft-mla-dims-supported", "unknown", None) in _reasons(doc, "draft-mla")


def test_gate_judges_the_draft_on_flashmla(tmp_path: Path) -> None:
    target = model_dir(tmp_path, "target", DEEPSEEK_R1)
    small = model_dir(tmp_path, "small-draft", SMALL_DRAFT)
    spec = ("--model-path", str(target), "--speculative-algorithm", "EAGLE", "--tp", "8")
    doc = gate_json(H200, *spec, "--speculative-draft-model-path", str(small), "--attention-backend", "flashmla",
                    dry_run=True)  # fmt: skip
    assert _reasons(doc, "draft-flashmla") == [("draft-flashmla-mla-dims", "fail", "256/32")]
    assert _reasons(doc, "flashmla-mla-dims") == []


def test_recommend_reads_the_heads_and_prefill_dims_the_gate_reads(tmp_path: Path) -> None:
    """recommend's launch facts carry the heads per GPU (its --tp) and the prefill dims the gate reads."""
    model = model_dir(tmp_path, "h96", HEADS_96)
    for tp, per_gpu in (("1", 96), ("2", 48)):
        cmd = ["recommend", "--facts", str(B200), "--model-path", str(model), "--tp", tp, "--no-plan"]
        launch = stackcheck_json(*cmd, "--format", "json")["launch"]
        assert launch["mla_heads_per_gpu"] == per_gpu and launch["mla_prefill_dims"] == "192/128", launch


# an EAGLE3 draft in Llama's shape (MHA: no architecture SGLang runs as MLA), as drafts for MLA targets often are
LLAMA_EAGLE3_DRAFT = {
    "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 7168,
    "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip


def test_gate_refuses_a_non_mla_draft_on_trtllm_mla(tmp_path: Path) -> None:
    """SGLang's draft worker builds trtllm_mla for the draft too and raises for a draft it does not run as MLA
    (draft-mla-models-only), by the flag or SGLang's own pick on SM100; --speculative-draft-attention-backend
    flashinfer keeps the draft off it, and DFLASH picks the draft's backend from its own list."""
    target = model_dir(tmp_path, "target", DEEPSEEK_R1)
    draft = model_dir(tmp_path, "eagle3", LLAMA_EAGLE3_DRAFT)
    spec = ("--model-path", str(target), "--speculative-draft-model-path", str(draft), "--tp", "8")
    for extra in (("--attention-backend", "trtllm_mla"), ()):
        doc = gate_json(B200, *spec, "--speculative-algorithm", "EAGLE3", *extra, dry_run=True)
        assert _reasons(doc, "draft-mla-models") == [("draft-mla-models-only", "fail", False)], extra
        assert "trtllm_mla backend requires MLA model" in json.dumps(doc["reasons"])
    off = gate_json(B200, *spec, "--speculative-algorithm", "EAGLE3", "--attention-backend", "trtllm_mla",
                    "--speculative-draft-attention-backend", "flashinfer", dry_run=True)  # fmt: skip
    assert _reasons(off, "draft-") == []
    dflash = gate_json(B200, *spec, "--speculative-algorithm", "DFLASH", "--attention-backend", "trtllm_mla",
                       dry_run=True)  # fmt: skip
    assert _reasons(dflash, "draft-") == []


def _gate_over(manifests: Path, facts: Path, *args: str) -> dict[str, Any]:
    """gate_json's run (--dry-run, JSON) with --manifests DIR over the shipped manifests."""
    return gate_json(facts, *args, dry_run=True, options=("--manifests", str(manifests)))


def _status(doc: dict[str, Any], feature: str) -> str | None:
    """The feature's verdict in the gate's document (its features list: ok ones too)."""
    return next((str(f.get("status")) for f in doc["features"] if f.get("feature") == feature), None)


# an architecture no SGLang release names, in DeepSeek's MLA shape (kv_lora_rank): MLA or not is known only where
# the MLA data covers the release (synthetic, as test_gate_mla_release's FooMLAForCausalLM)
FOO_DRAFT = {**DEEPSEEK_R1, "architectures": ["FooMLAForCausalLM"], "model_type": "foo"}


def test_a_draft_whose_mla_kind_is_not_known_is_unknown_on_trtllm_mla(tmp_path: Path) -> None:
    """SGLang 0.5.23 on the 8x B200 box with MLA data that stops at 0.5.20 (a user's copy, as when SGLang is newer
    than the data): a draft in an architecture no release read names may be run as MLA (its dims then judged) or
    not (trtllm_mla then raises 'requires MLA model'), so attention-trtllm-mla is unknown, never ok. Before, the
    draft-* rules read launch.draft_mla only where it existed and were silent: the launch was allowed. The target
    of unknown kind on trtllm_mla is unknown the same way (before, reevaluate_unknown kept the verdict without the
    fact, ok, because trtllm_mla refuses the model when it is not MLA)."""
    from gate_cli import mla_data_until_0_5_20

    over = mla_data_until_0_5_20(tmp_path)
    doc = json.loads(B200.read_text())
    doc["facts"]["packages"]["sglang"]["version"] = "0.5.23"
    box = tmp_path / "b200-0523.json"
    box.write_text(json.dumps(doc))
    target = model_dir(tmp_path, "target", DEEPSEEK_R1)
    foo = model_dir(tmp_path, "foo-draft", FOO_DRAFT)
    small = model_dir(tmp_path, "foo-small-draft", {**SMALL_DRAFT, "architectures": ["FooMLAForCausalLM"]})
    spec = ("--model-path", str(target), "--speculative-algorithm", "EAGLE", "--tp", "8")
    for flags in (("--attention-backend", "trtllm_mla"), ("--attention-backend", "flashinfer",
                  "--speculative-draft-attention-backend", "trtllm_mla")):  # fmt: skip
        got = _gate_over(over, box, *spec, "--speculative-draft-model-path", str(foo), *flags)
        assert "draft_mla" not in got["derived"]["launch"], flags
        assert _status(got, "attention-trtllm-mla") == "unknown", flags
        assert _reasons(got, "draft-") == [("draft-mla-models-only", "unknown", False)], flags
        assert got["decision"] == "refuse", flags
        text = json.dumps(got["reasons"])
        assert "speculative draft model" in text and "MLA not known" in text and "if it is not" in text, flags
        assert _reasons(got, "mla-") == [], flags  # the target (DeepSeek, MLA in every release read) passes
    # smaller dims: failing if it is MLA, refused if it is not: blocked either way, both cases named
    got = _gate_over(
        over, box, *spec, "--speculative-draft-model-path", str(small), "--attention-backend", "trtllm_mla"
    )
    assert _status(got, "attention-trtllm-mla") == "blocked"
    assert set(_reasons(got, "draft-")) == {("draft-mla-dims-supported", "unknown", "256/32"),
                                            ("draft-mla-models-only", "unknown", False)}  # fmt: skip
    # the draft kept off trtllm_mla: nothing to judge
    off = _gate_over(over, box, *spec, "--speculative-draft-model-path", str(foo), "--attention-backend", "trtllm_mla",
                     "--speculative-draft-attention-backend", "flashinfer")  # fmt: skip
    assert _reasons(off, "draft-") == [] and _status(off, "attention-trtllm-mla") == "ok"
    # the target of unknown kind on trtllm_mla (no draft): unknown too
    main = _gate_over(over, box, "--model-path", str(foo), "--attention-backend", "trtllm_mla", "--tp", "8")
    assert _status(main, "attention-trtllm-mla") == "unknown"
    assert ("mla-models-only", "unknown", False) in _reasons(main, "mla-")
    # both of unknown kind: each named (the draft's pass keeps the target's unknowns)
    both = _gate_over(over, box, "--model-path", str(foo), "--speculative-algorithm", "EAGLE", "--tp", "8",
                      "--speculative-draft-model-path", str(foo), "--attention-backend", "trtllm_mla")  # fmt: skip
    assert _status(both, "attention-trtllm-mla") == "unknown"
    assert {r for r in _reasons(both, "") if r[0].endswith("mla-models-only")} == {
        ("mla-models-only", "unknown", False), ("draft-mla-models-only", "unknown", False)}  # fmt: skip
    # a release the data covers, unchanged: a DeepSeek draft passes; the shipped data makes the Foo draft not MLA
    # on 0.5.23 (no release names it), refused as before
    ds = _gate_over(
        over, box, *spec, "--speculative-draft-model-path", str(target), "--attention-backend", "trtllm_mla"
    )
    assert _reasons(ds, "draft-") == [] and _status(ds, "attention-trtllm-mla") == "ok"
    shipped = gate_json(box, *spec, "--speculative-draft-model-path", str(foo), "--attention-backend", "trtllm_mla",
                        dry_run=True)  # fmt: skip
    assert _reasons(shipped, "draft-") == [("draft-mla-models-only", "fail", False)]
    assert _status(shipped, "attention-trtllm-mla") == "blocked"
