"""trtllm_mha with pages of 128 tokens (launch.json refusal `trtllm-mha-page-128-heads`): from SGLang 0.5.17 the
backend raises ValueError as it starts, on a GPU without XQA (SM100/SM103/SM110), unless the model has more query
heads than KV heads per GPU and equal QK/V head dims. The gate reads the heads from the model's config.json (its
preflight) and refuses the launch (blocked, effect crash), says unknown where it cannot read them or where SGLang
picks the backend itself, and passes GQA models such as Llama-3 8B and Qwen3-8B.

The config.json files here are written for the tests with the head counts the model cards publish (Llama-3.1-8B:
32 query / 8 KV heads, hidden 4096; Llama-2-7B: 32 / 32; MiniMax-M3's EAGLE3 draft: 64 / 64, head_dim 128 as
flashinfer issue #4094 gives it; MiMo-V2-Flash style: QK 192, V 128)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import model_heads, refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases"
B200 = CASES / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0
H200 = CASES / "h200-newest" / "facts.json"  # SGLang 0.5.23, cc 9.0
LAUNCH = ["python", "-m", "sglang.launch_server"]
RULE = "trtllm-mha-page-128-heads"

# SGLang's attention-backend docs (sgl-project/sglang PR #5211): Llama-3.1-8B on a named backend
LLAMA3 = ["--model", "meta-llama/Meta-Llama-3.1-8B-Instruct", "--attention-backend", "trtllm_mha"]
LLAMA3_CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
}  # fmt: skip
LLAMA2_CONFIG = {  # multi-head attention: as many KV heads as query heads
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 32,
}  # fmt: skip
UNEQUAL_CONFIG = {  # GQA with a V head narrower than the QK head
    "architectures": ["MiMoV2FlashForCausalLM"], "model_type": "mimo_v2_flash", "hidden_size": 4096,
    "num_attention_heads": 64, "num_key_value_heads": 4, "head_dim": 192, "v_head_dim": 128,
}  # fmt: skip
M3_EAGLE3_DRAFT = {  # flashinfer issue #4094: the published EAGLE3 draft of MiniMax-M3 is MHA, 64/64, head_dim 128
    "architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "hidden_size": 6144,
    "num_attention_heads": 64, "num_key_value_heads": 64, "head_dim": 128,
}  # fmt: skip


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def judge(
    mapping: dict[str, Any],
    version: str,
    args: list[str],
    majors: set[int] | None,
    model: dict[str, Any] | None,
    draft: dict[str, Any] | None = None,
    with_draft: bool = False,
) -> Any:
    d = gate.derive([*LAUNCH, *args], mapping, {})
    models: dict[str, Any] = {"model": attention_keys(model) if model is not None else None}
    if with_draft:
        models["draft model"] = attention_keys(draft) if draft is not None else None
    got = {p.subject.removeprefix("refusal "): p for p in refusal_problems(d, mapping, version, majors, None, models)}
    return got.get(RULE)


# ---- the rule, over flag lines and config.json files --------------------------------------------------------


def test_an_mha_model_on_trtllm_mha_with_pages_of_128_is_refused_on_blackwell(mapping: dict[str, Any]) -> None:
    args = [*LLAMA3, "--page-size", "128"]
    p = judge(mapping, "0.5.20", args, {10}, LLAMA2_CONFIG)
    assert p is not None and (p.status, p.effect) == ("blocked", "crash")
    assert "page size 128" in (p.observed or "")
    assert "32 query / 32 KV heads" in (p.observed or "") and "32/32 at attention TP 1" in (p.observed or "")
    assert "GQA" in (p.required or "") and "below 128" in (p.required or "")
    assert "ValueError" in p.message and "--page-size 64" in p.message
    assert any("0.5.20 wheel" in s["title"] and "trtllm_mha_backend.py" in s["title"] for s in p.source)
    # every release that has the check, and B300 (10.3) and Thor (11.0) too: no XQA there
    for version in ("0.5.17", "0.5.18", "0.5.19", "0.5.21", "0.5.23"):
        assert judge(mapping, version, args, {10}, LLAMA2_CONFIG).status == "blocked", version
    assert judge(mapping, "0.5.23", args, {11}, LLAMA2_CONFIG).status == "blocked"


def test_gqa_models_with_equal_head_dims_pass(mapping: dict[str, Any]) -> None:
    """Llama-3.1-8B (32/8) and Qwen3-8B's shape (32/8, head_dim 128 given): pages of 128 are fine, also at tp 8
    (4 query heads per KV head per GPU)."""
    qwen3 = {**LLAMA3_CONFIG, "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3"}
    for config in (LLAMA3_CONFIG, qwen3):
        for tp in ("1", "2", "8"):
            args = [*LLAMA3, "--page-size", "128", "--tp", tp]
            assert judge(mapping, "0.5.20", args, {10}, config) is None, (config["model_type"], tp)


def test_unequal_qk_and_v_head_dims_are_refused(mapping: dict[str, Any]) -> None:
    p = judge(mapping, "0.5.23", [*LLAMA3, "--page-size", "128"], {10}, UNEQUAL_CONFIG)
    assert p is not None and p.status == "blocked"
    assert "QK/V head dims 192/128" in (p.observed or "")


def test_the_tp_split_can_leave_one_query_head_per_kv_head(mapping: dict[str, Any]) -> None:
    """8 query / 2 KV heads is GQA at tp 1 (4 per KV head), but at tp 8 each GPU holds 1 query head and SGLang keeps
    one KV head: 1 // 1 <= 1, refused. With DP attention the attention TP is tp // dp, with a context-parallel flag
    the gate does not read, each divisor of tp is tried: mixed answers are unknown, never a pass."""
    small = {**LLAMA3_CONFIG, "num_attention_heads": 8, "num_key_value_heads": 2, "hidden_size": 1024}
    base = [*LLAMA3, "--page-size", "128"]
    assert judge(mapping, "0.5.20", [*base, "--tp", "1"], {10}, small) is None
    p = judge(mapping, "0.5.20", [*base, "--tp", "8"], {10}, small)
    assert p is not None and p.status == "blocked" and "1/1 at attention TP 8" in (p.observed or "")
    dp = [*base, "--tp", "8", "--dp-size", "4", "--enable-dp-attention"]  # attention TP 2: 4 / 1
    assert judge(mapping, "0.5.20", dp, {10}, small) is None
    cp = [*base, "--tp", "8", "--attn-cp-size", "2"]
    p = judge(mapping, "0.5.20", cp, {10}, small)
    assert p is not None and p.status == "unknown"


def test_a_page_size_trtllm_mha_does_not_keep_is_64_and_passes(mapping: dict[str, Any]) -> None:
    """SGLang keeps 16, 32, 64 or 128 for trtllm_mha (0.5.17+) and sets 64 otherwise: 256 becomes 64, no default
    reaches 128. Before 0.5.17 it keeps only 16, 32 or 64: no check, nothing to say."""
    for page in ("256", "1", "64"):
        assert judge(mapping, "0.5.20", [*LLAMA3, "--page-size", page], {10}, LLAMA2_CONFIG) is None, page
    assert judge(mapping, "0.5.20", LLAMA3, {10}, LLAMA2_CONFIG) is None
    assert judge(mapping, "0.5.16", [*LLAMA3, "--page-size", "128"], {10}, LLAMA2_CONFIG) is None


def test_hopper_and_sm120_decode_with_xqa_and_take_pages_of_128(mapping: dict[str, Any]) -> None:
    args = [*LLAMA3, "--page-size", "128"]
    for majors in ({9}, {12}):
        assert judge(mapping, "0.5.23", args, majors, LLAMA2_CONFIG) is None, majors
    # no GPU read, or a box with both kinds: unknown
    assert judge(mapping, "0.5.23", args, None, LLAMA2_CONFIG).status == "unknown"
    assert judge(mapping, "0.5.23", args, {9, 10}, LLAMA2_CONFIG).status == "unknown"


def test_heads_the_gate_cannot_read_are_unknown_never_a_pass(mapping: dict[str, Any]) -> None:
    args = [*LLAMA3, "--page-size", "128"]
    p = judge(mapping, "0.5.20", args, {10}, None)  # the model was not found, or its config.json not read
    assert p is not None and (p.status, p.effect) == ("unknown", None)
    assert "could not read" in p.message and "config.json not read" in (p.observed or "")
    no_kv = {k: v for k, v in LLAMA2_CONFIG.items() if k != "num_key_value_heads"}  # the config class's default
    assert judge(mapping, "0.5.20", args, {10}, no_kv).status == "unknown"
    mla = {**LLAMA2_CONFIG, "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3"}
    p = judge(mapping, "0.5.20", args, {10}, mla)
    assert p.status == "unknown" and "DeepseekV3ForCausalLM" in (p.observed or "")
    falcon = {**LLAMA2_CONFIG, "architectures": ["FalconForCausalLM"], "model_type": "falcon"}
    assert judge(mapping, "0.5.20", args, {10}, falcon).status == "unknown"


def test_a_text_config_is_read_as_sglang_reads_it(mapping: dict[str, Any]) -> None:
    """A multimodal config.json: SGLang takes the heads from its text_config."""
    args = [*LLAMA3, "--page-size", "128"]
    vl = {"architectures": ["Qwen2VLForConditionalGeneration"], "model_type": "qwen2_vl", "text_config": LLAMA2_CONFIG}
    assert judge(mapping, "0.5.20", args, {10}, vl).status == "blocked"
    vl_gqa = {**vl, "text_config": LLAMA3_CONFIG}
    assert judge(mapping, "0.5.20", args, {10}, vl_gqa) is None


def test_sglangs_own_backend_choice_makes_it_unknown_only_with_pages_of_128(mapping: dict[str, Any]) -> None:
    plain = ["--model", "meta-llama/Llama-2-7b-hf", "--page-size", "128"]
    p = judge(mapping, "0.5.20", plain, {10}, LLAMA2_CONFIG)
    assert p is not None and p.status == "unknown" and "attention backend SGLang picks" in p.message
    assert judge(mapping, "0.5.20", plain, {10}, LLAMA3_CONFIG) is None  # GQA: whatever it picks
    assert judge(mapping, "0.5.20", [*plain, "--attention-backend", "flashinfer"], {10}, LLAMA2_CONFIG) is None
    # another backend of the command that sets a page size of its own: unknown
    fa4 = [*LLAMA3, "--prefill-attention-backend", "fa4", "--page-size", "128"]
    assert judge(mapping, "0.5.23", fa4, {10}, LLAMA2_CONFIG).status == "unknown"


def test_an_mha_eagle3_draft_on_trtllm_mha_is_refused(mapping: dict[str, Any]) -> None:
    """flashinfer issue #4094: MiniMax-M3 with its EAGLE3 draft on Blackwell runs pages of 128; the draft is MHA.
    SGLang's draft worker builds its own trtllm_mha backend with the draft's config: refused, though the target is
    GQA. A draft on another backend (--speculative-draft-attention-backend) is not checked."""
    args = [
        "--model-path", "MiniMaxAI/MiniMax-M3", "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", "Inferact/MiniMax-M3-EAGLE3", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--attention-backend", "trtllm_mha",
        "--page-size", "128", "--tp", "8",
    ]  # fmt: skip
    target = {**LLAMA3_CONFIG, "architectures": ["MiniMaxM3SparseForCausalLM"], "model_type": "minimax_m3"}
    p = judge(mapping, "0.5.23", args, {10}, target, M3_EAGLE3_DRAFT, with_draft=True)
    assert p is not None and p.status == "blocked"
    assert "draft model: 64 query / 64 KV heads" in (p.observed or "")
    assert judge(mapping, "0.5.23", args, {10}, target, LLAMA3_CONFIG, with_draft=True) is None
    assert judge(mapping, "0.5.23", args, {10}, target, None, with_draft=True).status == "unknown"
    other = [*args, "--speculative-draft-attention-backend", "triton"]
    assert judge(mapping, "0.5.23", other, {10}, target, M3_EAGLE3_DRAFT, with_draft=True) is None


def test_minimax_m3_sets_pages_of_128_itself_on_sm100(mapping: dict[str, Any]) -> None:
    """Without --page-size, MiniMax-M3's own override sets 128 on SM100 when its backend is trtllm_mha (or fa4):
    its MHA EAGLE3 draft on trtllm_mha is refused there as if the flag were given; on Hopper nothing."""
    args = [
        "--model-path", "MiniMaxAI/MiniMax-M3", "--speculative-algorithm", "EAGLE3",
        "--speculative-draft-model-path", "Inferact/MiniMax-M3-EAGLE3", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4", "--attention-backend", "trtllm_mha",
    ]  # fmt: skip
    target = {**LLAMA3_CONFIG, "architectures": ["MiniMaxM3SparseForCausalLM"], "model_type": "minimax_m3"}
    d = gate.derive([*LAUNCH, *args], mapping, {})
    models = {"model": attention_keys(target), "draft model": attention_keys(M3_EAGLE3_DRAFT)}

    def got(majors: set[int] | None, arch: str | None) -> Any:
        found = refusal_problems(d, mapping, "0.5.23", majors, arch, models)
        return next((p for p in found if p.subject == f"refusal {RULE}"), None)

    p = got({10}, "MiniMaxM3SparseForCausalLM")
    assert p is not None and p.status == "blocked" and "page size 128" in (p.observed or "")
    assert got({9}, "MiniMaxM3SparseForCausalLM") is None
    assert got(None, "MiniMaxM3SparseForCausalLM").status == "unknown"
    assert got({10}, "LlamaForCausalLM") is None  # another model: the default page size, snapped to 64


def test_releases_not_read_are_silent(mapping: dict[str, Any]) -> None:
    args = [*LLAMA3, "--page-size", "128"]
    for version in ("0.5.1", "0.5.9", "0.5.16", "0.5.24", "0.6.0"):
        assert judge(mapping, version, args, {10}, LLAMA2_CONFIG) is None, version


def test_model_heads_reads_what_config_json_states() -> None:
    spec = {"shapes_set_by_sglang": [], "kv_heads_elsewhere": ["falcon"]}
    assert model_heads(attention_keys(LLAMA3_CONFIG), spec) == (32, 8, 128, 128)
    assert model_heads(attention_keys(LLAMA2_CONFIG), spec) == (32, 32, 128, 128)  # head_dim = 4096 // 32
    assert model_heads(attention_keys(UNEQUAL_CONFIG), spec) == (64, 4, 192, 128)
    chatglm = {"num_attention_heads": 32, "multi_query_group_num": 2, "hidden_size": 4096}
    assert model_heads(attention_keys(chatglm), spec) == (32, 2, 128, 128)
    assert isinstance(model_heads(attention_keys({**LLAMA2_CONFIG, "multi_query": True}), spec), str)
    assert isinstance(model_heads(attention_keys({**LLAMA2_CONFIG, "v_head_dim": 64, "hidden_size": None}), spec), str)
    assert isinstance(model_heads(None, spec), str)


# ---- the gate end to end: the preflight reads the model directory --------------------------------------------


def run_gate(facts: Path, *args: str) -> dict[str, Any]:
    return gate_json(facts, *args, dry_run=True)


def refusal(doc: dict[str, Any], key: str = "reasons") -> dict[str, Any] | None:
    return next((b for b in doc[key] if b["feature"] == f"refusal {RULE}"), None)


def test_the_gate_refuses_an_mha_model_on_a_b200_and_passes_llama3(tmp_path: Path) -> None:
    mha = model_dir(tmp_path, "llama2", LLAMA2_CONFIG)
    doc = run_gate(B200, "--model-path", str(mha), "--attention-backend", "trtllm_mha", "--page-size", "128")
    assert doc["decision"] == "refuse"
    b = refusal(doc)
    assert b is not None and (b["status"], b["effect"]) == ("blocked", "crash")
    reason = b["reasons"][0]
    assert "32 query / 32 KV heads" in reason["observed"] and "page size 128" in reason["observed"]
    assert "GQA" in reason["required"]
    assert any("sglang 0.5.20 wheel" in s["title"] for s in reason["source"])
    gqa = model_dir(tmp_path, "llama3", LLAMA3_CONFIG)
    ok = run_gate(B200, "--model-path", str(gqa), "--attention-backend", "trtllm_mha", "--page-size", "128")
    assert refusal(ok) is None and refusal(ok, "warnings") is None
    # the same MHA launch with page 64 is fine
    low = run_gate(B200, "--model-path", str(mha), "--attention-backend", "trtllm_mha", "--page-size", "64")
    assert refusal(low) is None and refusal(low, "warnings") is None


def test_the_gate_says_unknown_for_an_unreadable_model_and_nothing_on_hopper(tmp_path: Path) -> None:
    bare = model_dir(tmp_path, "bare", None)  # a directory without config.json
    doc = run_gate(B200, "--model-path", str(bare), "--attention-backend", "trtllm_mha", "--page-size", "128")
    b = refusal(doc)
    assert b is not None and b["status"] == "unknown"
    mha = model_dir(tmp_path, "llama2", LLAMA2_CONFIG)
    h200 = run_gate(H200, "--model-path", str(mha), "--attention-backend", "trtllm_mha", "--page-size", "128")
    assert refusal(h200) is None and refusal(h200, "warnings") is None


# ---- triage after the fact ------------------------------------------------------------------------------------

SITE = "/opt/venv/lib/python3.12/site-packages/sglang/srt"
START_LOG = """\
[2026-11-30 09:14:02] server_args=ServerArgs(model_path='/models/llama-2-7b', page_size=128)
[2026-11-30 09:14:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=170.11 GB
[2026-11-30 09:14:10 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "{site}/managers/scheduler.py", line 3120, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "{site}/model_executor/model_runner.py", line 1874, in init_attention_backend
    self.attn_backend = self._get_attention_backend()
  File "{site}/layers/attention/trtllm_mha_backend.py", line 237, in __init__
    raise ValueError(
{error}

[2026-11-30 09:14:10] Received sigquit from a child process. It usually means the child failed.
"""
ERROR = (
    "ValueError: trtllm_mha with page_size=128 requires trtllm-gen's dynamic tokens-per-page kernels, which only "
    "support GQA (q heads per kv head > 1, got 32/32) with equal QK/V head dims (got 128/128) and a power-of-2 page "
    "size. Use --page-size 64 instead."
)


def test_triage_names_the_page_128_refusal(tmp_path: Path) -> None:
    from stackcheck.launch.triage import triage_file

    log = tmp_path / "server.log"
    log.write_text(START_LOG.format(site=SITE, error=ERROR))
    rc = triage_file(log).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == RULE
    assert "--page-size 64" in rc.signature.fix and "gate" in rc.signature.fix
    assert "GQA" in rc.signature.title
