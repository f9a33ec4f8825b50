"""The rules on trtllm_mla's heads per GPU, ragged prefill dims and draft model (features.json attention-trtllm-mla
mla-heads-per-gpu, mla-prefill-dims-*, draft-*; attention-flashmla draft-flashmla-mla-dims) read against the real
wheels: each flashinfer-python release has the 64 < heads < 128 check exactly where the rule says it applies, its
trtllm_ragged_attention_deepseek takes exactly the (QK, V) dims the rule for that release requires, and SGLang's
trtllm_mla backend passes multi_ctas_kv_counter_buffer from 0.5.17 (what turns the dropped trtllm-gen runner into a
ValueError). A release whose check the parser below cannot read fails here (never a silent pass). The draft rules
mirror the target's: same releases, same values, on the draft model's facts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.facts.versions import version_in

ROOT = Path(__file__).resolve().parent.parent.parent

ALL = [
    "0.5.0", "0.5.3", "0.6.1", "0.6.3", "0.6.4", "0.6.5", "0.6.6", "0.6.7.post2", "0.6.8.post1", "0.6.11.post1",
    "0.6.12", "0.6.14", "0.6.15.post1", "0.6.16", "0.6.17", "0.6.18", "0.7.0", "0.7.1", "0.7.2", "0.7.4",
]  # fmt: skip
DEFAULT = ["0.6.5", "0.6.11.post1", "0.6.12", "0.6.15.post1", "0.6.16", "0.7.2"]


def _feature(feature: str) -> dict[str, Any]:
    doc = json.loads((ROOT / "manifests" / "features.json").read_text(encoding="utf-8"))
    item: dict[str, Any] = next(f for f in doc["features"] if f["id"] == feature)
    return item


def _leaves(pred: Any) -> list[dict[str, Any]]:
    if not isinstance(pred, dict):
        return []
    for key in ("all", "any"):
        if key in pred:
            return [leaf for p in pred[key] for leaf in _leaves(p)]
    return [pred]


def _range(rule: dict[str, Any], fact: str) -> str:
    return str(next(leaf["value"] for leaf in _leaves(rule["when"]) if leaf.get("fact") == fact))


def _texts(version: str) -> dict[str, str]:
    return read_texts(
        fetch_wheel("flashinfer-python", version),
        lambda n: (n.startswith("flashinfer/mla") and n.endswith(".py")) or n == "flashinfer/prefill.py",
    )


def _function(text: str, name: str) -> str:
    start = text.index(f"def {name}(")
    end = re.search(r"\n(?:def |class |@)", text[start + 1 :])
    return text[start : start + 1 + end.start()] if end else text[start:]


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_heads_gap_rule_is_the_wheels_check(version: str) -> None:
    has_gap = any(re.search(r"if 64 < num_heads_q < 128:", t) for t in _texts(version).values())
    rule = next(r for r in _feature("attention-trtllm-mla")["rules"] if r["id"] == "mla-heads-per-gpu")
    assert version_in(version, _range(rule, "pkg.flashinfer-python.version")) is has_gap, version
    values = {(leaf["op"], leaf["value"]) for leaf in _leaves(rule["require"])}
    assert values == {("<=", 64), (">=", 128)}


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_prefill_dims_rule_is_the_wheels_check(version: str) -> None:
    text = _texts(version)["flashinfer/prefill.py"]
    body = _function(text, "trtllm_ragged_attention_deepseek")
    triples = re.findall(
        r"query\.shape\[2\] == (\d+) and key\.shape\[2\] == (\d+) and\s+value\.shape\[2\] == (\d+)", body
    )
    assert triples and ("assert is_dsr1" in body or "assert query.shape[2] == 192" in body), version
    wheel = {f"{q}/{v}" for q, k, v in triples if q == k}
    assert len(wheel) == len(triples), (version, triples)  # QK and K always equal: the fact holds them once
    rules = [r for r in _feature("attention-trtllm-mla")["rules"] if r["id"].startswith("mla-prefill-dims")]
    hits = [r for r in rules if version_in(version, _range(r, "pkg.flashinfer-python.version"))]
    assert len(hits) == 1, (version, [r["id"] for r in hits])
    assert set(hits[0]["require"]["value"]) == wheel, version


@pytest.mark.registry
@pytest.mark.parametrize(("version", "passes"), [("0.5.16", False), ("0.5.17", True), ("0.5.23", True)])
def test_sglang_passes_the_counter_buffer_from_0_5_17(version: str, passes: bool) -> None:
    texts = read_texts(fetch_wheel("sglang", version), lambda n: n.endswith("attention/trtllm_mla_backend.py"))
    (text,) = texts.values()
    assert ('extra_kwargs["multi_ctas_kv_counter_buffer"]' in text) is passes, version
    assert re.search(r"self\.num_q_heads = config\.num_attention_heads // get_\w+\(\)\.attn_tp_size", text) or (
        "get_attention_tp_size()" in text
    ), version
    rule = next(r for r in _feature("attention-trtllm-mla")["rules"] if r["id"] == "mla-heads-per-gpu")
    assert version_in(version, _range(rule, "pkg.sglang.version")) is passes


def test_draft_rules_mirror_the_targets() -> None:
    """Each draft-* rule has its target rule's releases, GPU and required values, read on the draft's facts."""
    for feature in ("attention-trtllm-mla", "attention-flashmla"):
        rules = {r["id"]: r for r in _feature(feature)["rules"]}
        drafts = [r for r in rules if r.startswith("draft-")]
        assert drafts, feature
        for rid in drafts:
            target = rules[rid.removeprefix("draft-")]
            draft = rules[rid]
            assert json.dumps(draft["require"]) == json.dumps(target["require"]).replace(
                '"launch.mla', '"launch.draft_mla'
            ), rid
            pinned = ("pkg.", "gpu.")
            same = [json.dumps(leaf) for leaf in _leaves(target["when"]) if str(leaf.get("fact")).startswith(pinned)]
            mine = [json.dumps(leaf) for leaf in _leaves(draft["when"]) if str(leaf.get("fact")).startswith(pinned)]
            assert mine == same, rid
            assert draft["effect"] == target["effect"], rid
