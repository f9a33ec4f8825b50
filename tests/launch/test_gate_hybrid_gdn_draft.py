"""The draft model's attention backend in the hybrid GDN check (launch.json refusal `hybrid-gdn-blackwell-backend`,
issue 16): from SGLang 0.5.18 a draft runner resolves its own prefill and decode backends to
--speculative-draft-attention-backend when that flag is given (model_runner.py resolve_draft_attention_backend,
attention_backend_setup.py resolve_attention_backend_strs), and attn_backend_wrapper asserts those for a draft model
SGLang gives a hybrid GDN config: Qwen3-Next's or Qwen3.5's own MTP layers under NEXTN (the draft is the target's
checkpoint when no draft path is given). 0.5.3-0.5.17 assert the server's --attention-backend (and split flags)
instead, the same values the target is checked with, so the draft flag alone is never refused there.

The config.json files are written here with the keys the model cards publish (as in test_gate_hybrid_gdn.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, QWEN3_NEXT, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.refusals import refusal_problems

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0
LAUNCH = ["python", "-m", "sglang.launch_server"]
RULE = "hybrid-gdn-blackwell-backend"

QWEN3_5 = {
    "architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5",
    "text_config": {"model_type": "qwen3_5_text", "num_attention_heads": 8, "num_key_value_heads": 2},
}  # fmt: skip
EAGLE3_HEAD = {"architectures": ["LlamaForCausalLMEagle3"], "model_type": "llama", "num_attention_heads": 32,
               "num_key_value_heads": 8, "hidden_size": 4096}  # fmt: skip
MTP = ["--model", "Qwen/Qwen3-Next-80B-A3B-Instruct", "--tp", "4", "--attention-backend", "triton",
       "--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
       "--speculative-num-draft-tokens", "4"]  # fmt: skip
DRAFT_FI = [*MTP, "--speculative-draft-attention-backend", "flashinfer"]

_NO_CONFIG = object()


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def judge(
    mapping: dict[str, Any],
    version: str,
    args: list[str],
    majors: set[int] | None,
    config: dict[str, Any] | None,
    draft: Any = _NO_CONFIG,
) -> Any:
    """The rule's problem for the launch (None: none); `draft`: the draft model's config.json (None: not read;
    left out: the command names no draft model)."""
    d = gate.derive([*LAUNCH, *args], mapping, {})
    arch = str(config["architectures"][0]) if config else None
    models: dict[str, Any] = {"model": attention_keys(config) if config is not None else None}
    if draft is not _NO_CONFIG:
        models["draft model"] = attention_keys(draft) if draft is not None else None
    got = {p.subject.removeprefix("refusal "): p for p in refusal_problems(d, mapping, version, majors, arch, models)}
    return got.get(RULE)


def status(mapping: dict[str, Any], version: str, args: list[str], majors: set[int] | None, config: Any,
           draft: Any = _NO_CONFIG) -> str:  # fmt: skip
    p = judge(mapping, version, args, majors, config, draft)
    return "ok" if p is None else str(p.status)


def test_a_flashinfer_mtp_draft_on_a_b200_is_refused_where_the_draft_runner_is_checked(
    mapping: dict[str, Any],
) -> None:
    p = judge(mapping, "0.5.20", DRAFT_FI, {10}, QWEN3_NEXT)
    assert p is not None and (p.status, p.effect) == ("blocked", "crash")
    assert "draft model: model_type qwen3_next (a hybrid GDN model)" in (p.observed or "")
    assert "draft attention backend flashinfer" in (p.observed or "")
    assert p.required == "SM10x: fa4, triton, trtllm_mha"
    assert "--speculative-draft-attention-backend" in p.message
    assert any("0.5.20 wheel" in s["title"] and "resolve_draft_attention_backend" in s["title"] for s in p.source)
    # 0.5.16-0.5.17 assert the server's --attention-backend for the draft runner too (triton here): admitted;
    # 0.5.18-0.5.20 assert the draft's own backend, which SM100 refuses; 0.5.21+ admit flashinfer on SM100
    want = {"0.5.15": "ok", "0.5.16": "ok", "0.5.17": "ok", "0.5.18": "blocked", "0.5.19": "blocked",
            "0.5.20": "blocked", "0.5.21": "ok", "0.5.23": "ok"}  # fmt: skip
    assert {v: status(mapping, v, DRAFT_FI, {10}, QWEN3_NEXT) for v in want} == want
    # SM110 (Thor) refuses it as SM100 does; SM120 admits flashinfer
    assert status(mapping, "0.5.19", DRAFT_FI, {11}, QWEN3_NEXT) == "blocked"
    assert status(mapping, "0.5.19", DRAFT_FI, {12}, QWEN3_NEXT) == "ok"


def test_other_draft_backends_per_gpu(mapping: dict[str, Any]) -> None:
    fa3 = [*MTP, "--speculative-draft-attention-backend", "fa3"]  # no Blackwell GPU admits fa3
    for version in ("0.5.18", "0.5.23"):
        for majors in ({10}, {12}):
            assert status(mapping, version, fa3, majors, QWEN3_NEXT) == "blocked", (version, majors)
    fa4 = [*MTP, "--speculative-draft-attention-backend", "fa4"]  # SM120 refuses fa4
    assert status(mapping, "0.5.23", fa4, {12}, QWEN3_NEXT) == "blocked"
    assert status(mapping, "0.5.23", fa4, {10}, QWEN3_NEXT) == "ok"
    for backend in ("triton", "trtllm_mha"):  # admitted everywhere
        args = [*MTP, "--speculative-draft-attention-backend", backend]
        assert status(mapping, "0.5.20", args, {10}, QWEN3_NEXT) == "ok", backend
    assert status(mapping, "0.5.20", fa3, {9}, QWEN3_NEXT) == "ok"  # Hopper is not checked


def test_the_draft_model_decides_not_the_target(mapping: dict[str, Any]) -> None:
    """A non-GDN draft (an EAGLE-3 head) of a GDN target is not checked; a GDN draft (a small Qwen3.5 under
    STANDALONE) of a non-GDN target is; without speculative decoding (or with NGRAM) no draft runner is built."""
    eagle3 = [*DRAFT_FI[:6], "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/m/eagle3",
              "--speculative-draft-attention-backend", "flashinfer"]  # fmt: skip
    assert status(mapping, "0.5.20", eagle3, {10}, QWEN3_NEXT, EAGLE3_HEAD) == "ok"
    standalone = ["--model", "meta-llama/Llama-3.1-8B", "--attention-backend", "triton", "--speculative-algorithm",
                  "STANDALONE", "--speculative-draft-model-path", "/m/qwen3.5-0.8b",
                  "--speculative-draft-attention-backend", "flashinfer"]  # fmt: skip
    assert status(mapping, "0.5.20", standalone, {10}, LLAMA3, QWEN3_5) == "blocked"
    assert status(mapping, "0.5.20", standalone, {10}, LLAMA3, LLAMA3) == "ok"
    no_spec = ["--model", "m", "--attention-backend", "triton", "--speculative-draft-attention-backend", "fa3"]
    assert status(mapping, "0.5.20", no_spec, {10}, QWEN3_NEXT) == "ok"
    ngram = [*no_spec, "--speculative-algorithm", "NGRAM"]
    assert status(mapping, "0.5.20", ngram, {10}, QWEN3_NEXT) == "ok"


def test_what_the_gate_cannot_read_is_unknown(mapping: dict[str, Any]) -> None:
    standalone = ["--model", "m", "--attention-backend", "triton", "--speculative-algorithm", "STANDALONE",
                  "--speculative-draft-model-path", "/m/d",
                  "--speculative-draft-attention-backend", "flashinfer"]  # fmt: skip
    p = judge(mapping, "0.5.20", standalone, {10}, LLAMA3, None)  # the draft's config.json not read
    assert p is not None and p.status == "unknown" and "draft model: config.json not read" in (p.observed or "")
    assert status(mapping, "0.5.20", DRAFT_FI, None, QWEN3_NEXT) == "unknown"  # no GPU read
    # a draft backend every Blackwell GPU admits needs neither
    tri = [*standalone[:-1], "triton"]
    assert status(mapping, "0.5.20", tri, {10}, LLAMA3, None) == "ok"
    mtp_triton = [*MTP, "--speculative-draft-attention-backend", "triton"]
    assert status(mapping, "0.5.20", mtp_triton, None, QWEN3_NEXT) == "ok"


def test_the_gate_refuses_the_mtp_draft_on_flashinfer_on_a_b200(tmp_path: Path) -> None:
    qn = model_dir(tmp_path, "qwen3-next", QWEN3_NEXT)
    args = ["--model-path", str(qn), "--tp", "8", *DRAFT_FI[4:]]
    doc = gate_json(B200, *args, dry_run=True)
    assert doc["decision"] == "refuse"
    b = next((b for b in doc["reasons"] if b["feature"] == f"refusal {RULE}"), None)
    assert b is not None and (b["status"], b["effect"]) == ("blocked", "crash")
    assert "draft attention backend flashinfer" in b["reasons"][0]["observed"]
    ok = gate_json(B200, *args[:-1], "trtllm_mha", dry_run=True)
    assert not any(b["feature"] == f"refusal {RULE}" for b in [*ok["reasons"], *ok["warnings"]])
