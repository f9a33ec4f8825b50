"""A post release of a release V that a refusal rule's release ranges leave out (launch.json `refusals`, entries
split as `<=V` / `>=V+1` or `<=V` / `>V`): PEP 440 puts V.postN in neither range, so `_for_release` found no entry and
the rule said nothing; SGLang's real post releases sit there (0.5.12.post1, 0.5.4.post3, 0.5.3.post3, 0.5.15.post1:
imend2's finding, 2026-12-06). Now the rule is judged under V's entry and the next releases' one: where it holds under
either, the post release is unknown (its code, not read, is V's or a later release's), never silently allowed; where
it holds under neither, nothing is said, as for V."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.refusals import refusal_problems

LAUNCH = ["python", "-m", "sglang.launch_server"]
# an EAGLE3 launch with top-k 4, pages of 32 tokens and the triton backend (sgl-project/sglang issue #14077's shape):
# SGLang 0.5.6-0.5.12 refuse it at argument parsing (triton pages the tree from 0.5.13)
PAGED_TRITON = [
    "--model", "openai/gpt-oss-120b", "--speculative-algorithm=EAGLE3",
    "--speculative-draft-model-path=lmsys/EAGLE3-gpt-oss-120b-bf16", "--speculative-num-steps=5",
    "--speculative-eagle-topk=4", "--speculative-num-draft-tokens=8", "--tp=8", "--attention-backend", "triton",
    "--page-size", "32",
]  # fmt: skip


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def judge(mapping: dict[str, Any], version: str, args: list[str]) -> dict[str, Any]:
    d = gate.derive([*LAUNCH, *args], mapping, {})
    return {p.subject.removeprefix("refusal "): p for p in refusal_problems(d, mapping, version, {9})}


def test_a_post_release_between_a_refusing_range_and_the_next_is_unknown_never_silent(mapping: dict[str, Any]) -> None:
    assert judge(mapping, "0.5.12", PAGED_TRITON)["eagle-topk-page-size"].status == "blocked"
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.13", PAGED_TRITON)
    for version in ("0.5.12.post1", "0.5.12.post2", "0.5.12.post1.dev0"):
        p = judge(mapping, version, PAGED_TRITON).get("eagle-topk-page-size")
        assert p is not None, version  # before: no entry took it, and the rule said nothing
        assert (p.status, p.effect) == ("unknown", None)
        assert f"SGLang {version} is a post release of 0.5.12" in p.message
        assert "speculative_eagle_topk > 1 with page_size > 1" in p.message  # the rule's own words under 0.5.12
        assert p.source  # the neighbour entry's sources


def test_a_post_release_whose_neighbours_both_allow_the_launch_is_left_alone(mapping: dict[str, Any]) -> None:
    page_one = [a if a != "32" else "1" for a in PAGED_TRITON]  # pages of one token: no release refuses it
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.12", page_one)
    assert "eagle-topk-page-size" not in judge(mapping, "0.5.12.post1", page_one)


def test_a_release_an_entry_takes_is_judged_as_before(mapping: dict[str, Any]) -> None:
    # a release or pre-release inside a range is taken by it as before; 0.5.4.post1 is above `<=0.5.4` and below
    # `==0.5.5`, both refusing entries: unknown
    assert judge(mapping, "0.5.9", PAGED_TRITON)["eagle-topk-page-size"].status == "blocked"
    assert judge(mapping, "0.5.9rc1", PAGED_TRITON)["eagle-topk-page-size"].status == "blocked"
    assert judge(mapping, "0.5.4.post1", PAGED_TRITON)["eagle-topk-page-size"].status == "unknown"
