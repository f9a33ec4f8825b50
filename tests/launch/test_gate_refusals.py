"""Flag combinations SGLang refuses while it reads its own arguments (launch.json `refusals`,
stackcheck/launch/refusals.py): the gate refuses them before launch (blocked, effect crash), or says unknown where
a value SGLang chooses at start (the EAGLE top-k it picks from the model, the attention backend it picks for the
GPU) decides. The flag lines are those of public reports, with the release and GPU each rule turns on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import gpu_majors, refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases"
H200 = CASES / "h200-newest" / "facts.json"  # SGLang 0.5.23, cc 9.0
B200 = CASES / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0
SM120 = CASES / "writeup-after" / "facts.json"  # SGLang 0.5.9, cc 12.0
LAUNCH = ["python", "-m", "sglang.launch_server"]

# sgl-project/sglang issue #13352 (A100, Llama-3.1-8B-Instruct with its EAGLE3 head): steps 5, top-k 4, 8 drafts
LLAMA_EAGLE3 = [
    "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B",
    "--speculative-num-steps", "5", "--speculative-num-draft-tokens", "8", "--speculative-eagle-topk", "4",
]  # fmt: skip
# sgl-project/sglang issue #14077 (gpt-oss-120b, EAGLE3 top-k 4 on the triton backend, tp 8)
GPT_OSS_TRITON = [
    "--model", "openai/gpt-oss-120b", "--speculative-algorithm=EAGLE3",
    "--speculative-draft-model-path=lmsys/EAGLE3-gpt-oss-120b-bf16", "--speculative-num-steps=5",
    "--speculative-eagle-topk=4", "--speculative-num-draft-tokens=8", "--tp=8", "--attention-backend", "triton",
]  # fmt: skip
# sgl-project/sglang PR #9238 (DeepSeek-R1 on the trtllm_mla backend, page 64, EAGLE with top-k 1)
R1_TRTLLM_MLA = [
    "--model-path", "deepseek-ai/DeepSeek-R1", "--attention-backend", "trtllm_mla", "--page-size", "64",
    "--tp-size", "8", "--speculative-algorithm", "EAGLE", "--speculative-eagle-topk=1",
    "--speculative-num-draft-tokens", "4", "--speculative-num-steps", "3",
]  # fmt: skip
# sgl-project/sglang issue #9471 (gpt-oss-120b with its EAGLE3 draft, tp 4, nothing else given)
GPT_OSS_DEFAULT = [
    "--model", "openai/gpt-oss-120b", "--tp", "4",
    "--speculative-draft-model-path", "lmsys/EAGLE3-gpt-oss-120b-bf16", "--speculative-algorithm", "EAGLE3",
]  # fmt: skip


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def judge(
    mapping: dict[str, Any],
    version: str,
    args: list[str],
    majors: set[int] | None = None,
    arch: str | None = None,
    models: dict[str, Any] | None = None,
) -> dict[str, Any]:
    d = gate.derive([*LAUNCH, *args], mapping, {})
    got = refusal_problems(d, mapping, version, majors, arch, models)
    return {p.subject.removeprefix("refusal "): p for p in got}


# DeepSeek-R1's config.json as its model card gives it (the keys the gate reads): no hybrid GDN model
R1_CONFIG = {"architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}


def replace(args: list[str], flag: str, value: str) -> list[str]:
    out = list(args)
    at = out.index(flag)
    out[at + 1] = value
    return out


# ---- eagle-topk-page-size ------------------------------------------------------------------------------


def test_llama_eagle3_top_k_4_with_pages_is_refused_unless_the_backend_pages_the_tree(mapping: dict[str, Any]) -> None:
    paged = [*LLAMA_EAGLE3, "--page-size", "16"]
    # 0.5.3: no backend chosen yet when SGLang checks, so anything but an explicit flashinfer is refused
    got = judge(mapping, "0.5.3", paged, {9})
    p = got["eagle-topk-page-size"]
    assert (p.status, p.effect) == ("blocked", "crash")
    assert p.required == "flashinfer"
    assert "topk 4" in (p.observed or "") and "page_size 16" in (p.observed or "")
    assert "speculative_eagle_topk > 1 with page_size > 1" in p.message
    assert any("0.5.3" in str(s.get("title")) for s in p.source)
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.3", [*paged, "--attention-backend", "flashinfer"], {9})
    # fa3 joins from 0.5.6, triton from 0.5.13
    fa3 = [*paged, "--attention-backend", "fa3"]
    assert judge(mapping, "0.5.5", fa3, {9})["eagle-topk-page-size"].status == "blocked"
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.6", fa3, {9})
    # 0.5.1 has no such check
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.1", paged, {9})


def test_gpt_oss_top_k_4_on_triton_is_refused_with_pages_only_before_0_5_13(mapping: dict[str, Any]) -> None:
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.9", GPT_OSS_TRITON, {9})  # page size 1: fine
    paged = [*GPT_OSS_TRITON, "--page-size", "32"]
    p = judge(mapping, "0.5.12", paged, {9})["eagle-topk-page-size"]
    assert p.status == "blocked" and p.required == "flashinfer, fa3"
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.13", paged, {9})
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.23", paged, {9})


def test_a_backend_that_forces_its_page_size_counts_as_pages(mapping: dict[str, Any]) -> None:
    """trtllm_mla sets page size 64 before SGLang's speculative checks: top-k 1 passes, top-k 2 does not."""
    assert judge(mapping, "0.5.9", R1_TRTLLM_MLA, {10}, models={"model": R1_CONFIG}) == {}
    # without its config.json the gate cannot tell R1 from a hybrid GDN model, which SGLang 0.5.9 runs on Blackwell
    # only on triton or trtllm_mha, nor from GPT-OSS or Llama 4, whose listed backends lack trtllm_mla: unknown, and
    # only those
    unread = judge(mapping, "0.5.9", R1_TRTLLM_MLA, {10})
    model_rules = [
        "exaone4-attention-backend", "gpt-oss-attention-backend", "hybrid-gdn-blackwell-backend",
        "llama4-listed-attention-backend",
    ]  # fmt: skip
    assert sorted(unread) == model_rules and {p.status for p in unread.values()} == {"unknown"}
    two = replace(R1_TRTLLM_MLA, "--page-size", "1")
    two = [a if a != "--speculative-eagle-topk=1" else "--speculative-eagle-topk=2" for a in two]
    p = judge(mapping, "0.5.9", two, {10})["eagle-topk-page-size"]
    assert p.status == "blocked"
    assert "page_size 64" in (p.observed or "")  # --page-size 1 is not one trtllm_mla keeps
    assert "attention_backend trtllm_mla" in (p.observed or "")


def test_the_auto_top_k_makes_the_page_rule_unknown_never_a_pass_or_a_block(mapping: dict[str, Any]) -> None:
    """Without --speculative-eagle-topk SGLang picks the top-k from the model's architecture (4 for Llama, 1 for
    GPT-OSS and DeepSeek): with pages on a backend that cannot page the tree, the gate cannot know."""
    paged_auto = [*GPT_OSS_DEFAULT, "--page-size", "16"]
    p = judge(mapping, "0.5.3", paged_auto, {9})["eagle-topk-page-size"]
    assert p.status == "unknown" and p.effect is None
    assert "top-k SGLang picks from the model" in p.message
    # from 0.5.5 the attention backend is chosen at start too: unknown again, with both named
    p = judge(mapping, "0.5.9", [*paged_auto, "--speculative-eagle-topk", "4"], {9})["eagle-topk-page-size"]
    assert p.status == "unknown" and "attention backend SGLang picks" in p.message
    # STANDALONE's own top-k is 1: nothing to refuse
    standalone = replace(paged_auto, "--speculative-algorithm", "STANDALONE")
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.3", standalone, {9})
    # the plain launch of the report (page size 1) is not touched
    assert judge(mapping, "0.5.9", GPT_OSS_DEFAULT, {9}) == {}


def test_the_auto_top_k_follows_the_model_architecture_per_release(mapping: dict[str, Any]) -> None:
    """Read from config.json, the architecture gives SGLang's own top-k: up to 0.5.7 every architecture outside
    the DeepSeek/GPT-OSS family gets 4, from 0.5.8 only Llama and Grok-1 do."""
    paged = [*GPT_OSS_DEFAULT, "--page-size", "16"]  # no --speculative-eagle-topk, no --speculative-num-steps
    llama = judge(mapping, "0.5.3", paged, {9}, "LlamaForCausalLM")["eagle-topk-page-size"]
    assert llama.status == "blocked" and "topk 4" in (llama.observed or "")
    assert judge(mapping, "0.5.3", paged, {9}, "GptOssForCausalLM") == {}
    triton = [*paged, "--attention-backend", "triton"]
    assert judge(mapping, "0.5.7", triton, {9}, "Qwen3ForCausalLM")["eagle-topk-page-size"].status == "blocked"
    assert judge(mapping, "0.5.8", triton, {9}, "Qwen3ForCausalLM") == {}  # 1 for it from 0.5.8
    # from 0.5.5 the attention backend is SGLang's choice too: Llama's top-k 4 then leaves the rule unknown
    assert judge(mapping, "0.5.9", paged, {9}, "LlamaForCausalLM")["eagle-topk-page-size"].status == "unknown"
    with_fa3 = [*paged, "--attention-backend", "fa3"]
    assert judge(mapping, "0.5.5", with_fa3, {9}, "LlamaForCausalLM")["eagle-topk-page-size"].status == "blocked"
    # with --speculative-num-steps SGLang picks no top-k at all: nothing for these rules to judge
    steps = [*paged, "--speculative-num-steps", "3"]
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.3", steps, {9}, "LlamaForCausalLM")


# ---- trtllm-mha-topk-one -------------------------------------------------------------------------------


def test_trtllm_mha_with_top_k_4_is_refused_and_its_auto_top_k_is_unknown(mapping: dict[str, Any]) -> None:
    explicit = [*LLAMA_EAGLE3, "--attention-backend", "trtllm_mha"]
    for version in ("0.5.1", "0.5.9", "0.5.20"):
        p = judge(mapping, version, explicit, {10})["trtllm-mha-topk-one"]
        assert (p.status, p.effect, p.observed, p.required) == ("blocked", "crash", "4", "1"), version
        assert "trtllm_mha backend only supports topk = 1" in p.message
    prefill_only = [*LLAMA_EAGLE3, "--prefill-attention-backend", "trtllm_mha"]
    assert judge(mapping, "0.5.9", prefill_only, {10})["trtllm-mha-topk-one"].status == "blocked"
    # top-k 1 is what trtllm_mha drafts with
    chain = [*replace(LLAMA_EAGLE3, "--speculative-eagle-topk", "1"), "--attention-backend", "trtllm_mha"]
    assert "trtllm-mha-topk-one" not in judge(mapping, "0.5.20", chain, {10})
    # the report of issue #9471 with trtllm_mha named: GPT-OSS takes top-k 1 by itself, Llama 4; not known here
    auto = [*GPT_OSS_DEFAULT, "--attention-backend", "trtllm_mha"]
    assert judge(mapping, "0.5.20", auto, {10})["trtllm-mha-topk-one"].status == "unknown"


def test_trtllm_mha_chosen_by_sglang_is_unknown_only_where_it_can_be_chosen(mapping: dict[str, Any]) -> None:
    """SGLang picks trtllm_mha by itself only on SM100 (the default for MHA models, the GPT-OSS override): an
    explicit top-k 4 on a Hopper box is fine, on a B200 it depends on the model."""
    assert "trtllm-mha-topk-one" not in judge(mapping, "0.5.9", LLAMA_EAGLE3, {9})
    assert judge(mapping, "0.5.9", LLAMA_EAGLE3, {10})["trtllm-mha-topk-one"].status == "unknown"
    assert judge(mapping, "0.5.9", LLAMA_EAGLE3, None)["trtllm-mha-topk-one"].status == "unknown"  # GPU unknown


# ---- DP attention and Flex Attention --------------------------------------------------------------------


def test_standalone_and_ngram_with_dp_attention_are_refused_from_their_first_release(mapping: dict[str, Any]) -> None:
    # sgl-project/sglang PR #30877: STANDALONE drafting and DP attention exclude each other
    standalone = [
        "--model-path", "Qwen/Qwen3-32B", "--speculative-algorithm", "STANDALONE",
        "--speculative-draft-model-path", "Qwen/Qwen3-0.6B", "--tp", "4", "--dp", "2", "--enable-dp-attention",
    ]  # fmt: skip
    p = judge(mapping, "0.5.9", standalone, {9})["standalone-dp-attention"]
    assert (p.status, p.effect) == ("blocked", "crash")
    assert "dp_attention True" in (p.observed or "")
    assert any("30877" in str(s.get("url")) for s in p.source)
    assert "standalone-dp-attention" not in judge(mapping, "0.5.1", standalone, {9})
    assert "standalone-dp-attention" not in judge(mapping, "0.5.9", standalone[:-1], {9})
    ngram = replace(standalone, "--speculative-algorithm", "NGRAM")
    assert judge(mapping, "0.5.3", ngram, {9})["ngram-dp-attention"].status == "blocked"
    assert "ngram-dp-attention" not in judge(mapping, "0.5.2", ngram, {9})


def test_flex_attention_with_speculative_decoding_is_refused(mapping: dict[str, Any]) -> None:
    flex = [*LLAMA_EAGLE3, "--attention-backend", "flex_attention"]
    assert judge(mapping, "0.5.9", flex, {9})["flex-attention-speculative"].status == "blocked"
    assert "flex-attention-speculative" not in judge(mapping, "0.5.2", flex, {9})
    # SGLang never picks flex_attention by itself
    assert "flex-attention-speculative" not in judge(mapping, "0.5.9", LLAMA_EAGLE3, None)


def test_no_release_or_no_sglang_launch_is_not_judged(mapping: dict[str, Any]) -> None:
    args = [*LLAMA_EAGLE3, "--page-size", "16", "--attention-backend", "triton"]
    d = gate.derive([*LAUNCH, *args], mapping, {})
    assert refusal_problems(d, mapping, None, {9}) == []
    assert refusal_problems(gate.derive(["ls", "-l"], mapping, {}), mapping, "0.5.9", {9}) == []
    assert gpu_majors({"gpus": [{"compute_capability": "9.0"}, {"compute_capability": "10.3"}]}) == {9, 10}
    assert gpu_majors({"gpus": [{"name": "x"}]}) is None


# ---- the three speculative settings given in part ------------------------------------------------------------


def test_top_k_without_steps_trips_sglangs_assert(mapping: dict[str, Any]) -> None:
    """SGLang picks steps, top-k and draft tokens together only when --speculative-num-steps is absent, and first
    asserts the other two are absent too (sgl-project/sglang issue #5673)."""
    no_steps = [a for a in LLAMA_EAGLE3 if a not in ("--speculative-num-steps", "5")]
    for version in ("0.5.1", "0.5.9", "0.5.23"):
        p = judge(mapping, version, no_steps, {9}, "LlamaForCausalLM")["spec-topk-without-steps"]
        assert (p.status, p.effect) == ("blocked", "crash"), version
        assert "--speculative-num-steps not given" in (p.observed or "")
    assert "spec-topk-without-steps" not in judge(mapping, "0.5.9", LLAMA_EAGLE3, {9})  # all three given
    # from 0.5.14 --speculative-adaptive skips SGLang's choice and its assert
    adaptive = [*no_steps, "--speculative-adaptive"]
    assert "spec-topk-without-steps" in judge(mapping, "0.5.13", adaptive, {9}, "LlamaForCausalLM")
    assert "spec-topk-without-steps" not in judge(mapping, "0.5.14", adaptive, {9}, "LlamaForCausalLM")
    # from 0.5.21 an IQuest Q1 model sets its steps first: without its architecture the gate cannot tell
    assert judge(mapping, "0.5.23", no_steps, {9})["spec-topk-without-steps"].status == "unknown"
    assert "spec-topk-without-steps" not in judge(mapping, "0.5.23", no_steps, {9}, "IQuestQ1ForCausalLM")
    assert judge(mapping, "0.5.20", no_steps, {9})["spec-topk-without-steps"].status == "blocked"


def test_steps_without_top_k_leave_it_unset_and_sglang_compares_none(mapping: dict[str, Any]) -> None:
    """sgl-project/sglang PR #22895: NEXTN with --speculative-num-steps 1 alone ends in a TypeError at start."""
    nextn = ["--model-path", "Qwen/Qwen3.5-35B-A3B", "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "1"]
    for version in ("0.5.2", "0.5.11", "0.5.20"):
        p = judge(mapping, version, nextn, {9}, "Qwen3_5MoeForConditionalGeneration")["spec-steps-without-topk"]
        assert (p.status, p.effect) == ("blocked", "crash"), version
        assert "TypeError" in p.message and any("22895" in str(x.get("url")) for x in p.source)
    assert "spec-steps-without-topk" not in judge(mapping, "0.5.1", nextn, {9})  # no comparison to trip in 0.5.1
    assert "spec-steps-without-topk" not in judge(mapping, "0.5.11", [*nextn, "--speculative-eagle-topk", "1"], {9})
    assert judge(mapping, "0.5.23", nextn, {9})["spec-steps-without-topk"].status == "unknown"  # IQuest Q1?
    assert "spec-steps-without-topk" not in judge(mapping, "0.5.23", nextn, {9}, "IQuestQ1ForCausalLM")
    assert "spec-steps-without-topk" not in judge(mapping, "0.5.11", nextn[:2], {9})  # no speculative decoding


# ---- the gate end to end ---------------------------------------------------------------------------------


def run_gate(facts: Path, *args: str) -> dict[str, Any]:
    return gate_json(facts, *args)


def refusals(doc: dict[str, Any], key: str = "reasons") -> dict[str, Any]:
    return {b["feature"]: b for b in doc[key] if str(b["feature"]).startswith("refusal ")}


def test_the_gate_refuses_the_combination_with_observed_required_and_source() -> None:
    doc = run_gate(SM120, *GPT_OSS_TRITON, "--page-size", "32")  # SGLang 0.5.9 on an RTX PRO 6000
    assert doc["decision"] == "refuse"
    b = refusals(doc)["refusal eagle-topk-page-size"]
    assert (b["status"], b["effect"]) == ("blocked", "crash")
    reason = b["reasons"][0]
    assert reason["required"] == "flashinfer, fa3"
    assert "attention_backend triton" in reason["observed"]
    assert any("sglang 0.5.9 wheel" in s["title"] for s in reason["source"])
    assert doc["derived"]["launch"]["page_size"] == 32 and doc["derived"]["launch"]["speculative_topk"] == 4


def test_the_gate_reads_the_architecture_from_the_model_directory(tmp_path: Path) -> None:
    """The preflight reads the model's config.json: a local Llama checkpoint with pages and SGLang's own top-k on
    0.5.20's trtllm_mha is refused outright (top-k 4), a Qwen3 one is not (top-k 1)."""
    for arch, refused in (("LlamaForCausalLM", True), ("Qwen3ForCausalLM", False)):
        model = tmp_path / arch
        model.mkdir()
        (model / "config.json").write_text(json.dumps({"architectures": [arch], "model_type": "llama"}))
        args = ["--model-path", str(model), "--speculative-algorithm", "EAGLE3", "--attention-backend", "trtllm_mha"]
        got = refusals(run_gate(B200, *args))
        assert ("refusal trtllm-mha-topk-one" in got) is refused, (arch, got)
        if refused:
            b = got["refusal trtllm-mha-topk-one"]
            assert b["status"] == "blocked" and b["reasons"][0]["observed"] == "4"


def test_the_gate_leaves_what_sglang_accepts_alone(tmp_path: Path) -> None:
    h200 = run_gate(H200, *GPT_OSS_TRITON, "--page-size", "32")  # 0.5.23 pages the tree on triton
    assert refusals(h200) == {} and refusals(h200, "warnings") == {}
    r1 = tmp_path / "DeepSeek-R1"  # the model's config.json, read by the gate's preflight
    r1.mkdir()
    (r1 / "config.json").write_text(json.dumps(R1_CONFIG))
    b200 = run_gate(B200, *replace(R1_TRTLLM_MLA, "--model-path", str(r1)))  # 0.5.20, top-k 1 on trtllm_mla
    assert refusals(b200) == {} and refusals(b200, "warnings") == {}


# ---- triage after the fact ---------------------------------------------------------------------------------

PARSE_LOG = """\
[2026-03-02 10:11:12] WARNING server_args.py:1204: Overlap scheduler is disabled (eagle speculative decoding).
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/opt/venv/lib/python3.12/site-packages/sglang/launch_server.py", line 11, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 3410, in prepare_server_args
    return ServerArgs.from_cli_args(raw_args)
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 520, in __post_init__
    self._handle_speculative_decoding()
  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/server_args.py", line 1124, in _handle_speculative_decoding
    raise ValueError(
{error}
"""


@pytest.mark.parametrize(
    ("error", "signature"),
    [
        (
            "ValueError: speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results "
            "for paged attention backends. This combination is only supported for the 'flashinfer' backend.",
            "spec-topk-page-size-backend",
        ),
        (
            "ValueError: speculative_eagle_topk > 1 with page_size > 1 is only supported on ('flashinfer', 'fa3', "
            "'triton'); got attention_backend='trtllm_mha'. Use page_size == 1 or one of those backends.",
            "spec-topk-page-size-backend",
        ),
        ("ValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.", "trtllm-mha-spec-topk"),
        (
            "ValueError: Currently standalone speculative decoding does not support dp attention.",
            "standalone-spec-dp-attention",
        ),
        ("ValueError: Currently ngram speculative decoding does not support dp attention.", "ngram-spec-dp-attention"),
        (
            "AssertionError: Speculative decoding is currently not supported with Flex Attention backend",
            "flex-attention-speculative",
        ),
        ("TypeError: '>' not supported between instances of 'NoneType' and 'int'", "spec-topk-unset"),
    ],
)  # fmt: skip
def test_triage_names_each_parse_time_refusal(tmp_path: Path, error: str, signature: str) -> None:
    from stackcheck.launch.triage import triage_file

    log = tmp_path / "server.log"
    log.write_text(PARSE_LOG.format(error=error))
    rc = triage_file(log).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == signature
    assert "gate" in rc.signature.fix  # the fix says the gate refuses it before launch
