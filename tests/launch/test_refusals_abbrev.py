"""Review 2: the flags the refusals read past launch.json's options (the draft model's attention backend, the
flags that split attention) are read as argparse reads them, abbreviations included; a shortened
--speculative-draft-attention-backend trtllm_mha used to hide the trtllm_mha pages-of-128 refusal."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import refusal_problems

LAUNCH = ["python", "-m", "sglang.launch_server"]
# an MHA model (8 query heads, 8 KV heads): trtllm-gen's pages of 128 need more query heads than KV heads
MHA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_attention_heads": 8,
       "num_key_value_heads": 8, "hidden_size": 1024}  # fmt: skip
SPEC = [
    "--model-path", "/m", "--attention-backend", "flashinfer", "--speculative-algorithm", "EAGLE3",
    "--speculative-draft-model-path", "/d", "--page-size", "128", "--speculative-num-steps", "3",
    "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
]  # fmt: skip


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def judge(mapping: dict[str, Any], args: list[str], version: str = "0.5.20", models: Any = None) -> dict[str, str]:
    d = gate.derive([*LAUNCH, *args], mapping, {})
    models = models if models is not None else {"model": MHA, "draft model": MHA}
    got = refusal_problems(d, mapping, version, {10}, "LlamaForCausalLM", models)
    return {p.subject.removeprefix("refusal "): p.status for p in got}


@pytest.mark.parametrize(
    "spelling",
    [
        ["--speculative-draft-attention-backend", "trtllm_mha"],
        ["--speculative-draft-attention-backend=trtllm_mha"],
        ["--speculative-draft-attention", "trtllm_mha"],
        ["--speculative-draft-attention=trtllm_mha"],
        ["--speculative-draft-attention-b", "trtllm_mha"],
    ],
)
def test_the_draft_backend_is_read_however_argparse_takes_it(mapping: dict[str, Any], spelling: list[str]) -> None:
    assert judge(mapping, [*SPEC, *spelling]).get("trtllm-mha-page-128-heads") == "blocked"


def test_the_last_draft_backend_wins_and_nothing_after_the_double_dash_counts(mapping: dict[str, Any]) -> None:
    last_fa = ["--speculative-draft-attention", "trtllm_mha", "--speculative-draft-attention-backend", "flashinfer"]
    assert "trtllm-mha-page-128-heads" not in judge(mapping, [*SPEC, *last_fa])
    after = ["--", "--speculative-draft-attention-backend", "trtllm_mha"]
    assert "trtllm-mha-page-128-heads" not in judge(mapping, [*SPEC, *after])


def test_an_abbreviated_attention_split_flag_widens_the_attention_tp_sizes(mapping: dict[str, Any]) -> None:
    """16 query / 2 KV heads on trtllm_mha at tp 16 fail (1/1 per GPU), but with attention context parallel the
    attention TP is smaller: the gate cannot say, whether the flag is spelt in full or shortened."""
    model = {**MHA, "num_attention_heads": 16, "num_key_value_heads": 2}
    base = ["--model-path", "/m", "--attention-backend", "trtllm_mha", "--page-size", "128", "--tp", "16"]
    models = {"model": model}
    assert judge(mapping, base, models=models).get("trtllm-mha-page-128-heads") == "blocked"
    for split in (["--attn-cp-size", "2"], ["--attn-cp-s", "2"], ["--attention-context-parallel=2"]):
        assert judge(mapping, [*base, *split], models=models).get("trtllm-mha-page-128-heads") == "unknown", split


def test_a_huge_tp_with_an_attention_split_flag_is_judged_at_once(mapping: dict[str, Any]) -> None:
    """Review 2: `--tp 100000000 --attn-cp-size 2` built a list of every integer up to tp to find its divisors
    (minutes and gigabytes); the divisors are now found in O(sqrt(tp)) steps."""
    import time

    from stackcheck.launch.refusals import _divisors

    assert _divisors(12) == [1, 2, 3, 4, 6, 12] and _divisors(1) == [1] and _divisors(97) == [1, 97]
    assert _divisors(10**18) == [1, 10**18]
    base = ["--model-path", "/m", "--attention-backend", "trtllm_mha", "--page-size", "128", "--attn-cp-size", "2"]
    start = time.process_time()  # CPU time: O(tp) divisor search is work, a loaded box's wait is not
    for tp in ("100000000", str(10**12), str(10**30)):
        got = judge(mapping, [*base, "--tp", tp], models={"model": MHA})
        assert got.get("trtllm-mha-page-128-heads") == "blocked", (tp, got)  # 8/8 heads fail at every size
    assert time.process_time() - start < 10
