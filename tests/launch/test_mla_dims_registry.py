"""The MLA dims rules (features.json attention-trtllm-mla mla-dims-*, attention-flashmla flashmla-mla-dims) read
against the real wheels: the dims each flashinfer-python release's _check_trtllm_gen_mla_shape takes (the function
trtllm_batch_decode_with_kv_cache_mla and xqa_batch_decode_with_kv_cache_mla run) must be the dims the rule for
that release requires; FlashMLA's library must still say it takes a head of 576 and a V head of 512; SGLang's
backends must still pass the model's dims to them. A release whose check the parser below cannot read fails here
(never a silent pass)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.facts.versions import version_in

ROOT = Path(__file__).resolve().parent.parent.parent

ALL = [
    "0.5.0", "0.5.3", "0.6.1", "0.6.3", "0.6.4", "0.6.5", "0.6.6", "0.6.7.post2", "0.6.8.post1", "0.6.11.post1",
    "0.6.12", "0.6.14", "0.6.15.post1", "0.6.16", "0.6.17", "0.6.18", "0.7.0", "0.7.1", "0.7.2",
]  # fmt: skip
DEFAULT = ["0.5.0", "0.6.5", "0.6.6", "0.6.18", "0.7.2"]


def _rules(feature: str) -> list[dict[str, Any]]:
    doc = json.loads((ROOT / "manifests" / "features.json").read_text(encoding="utf-8"))
    item = next(f for f in doc["features"] if f["id"] == feature)
    # the target model's rules (the draft model's, draft-*, mirror them: test_mla_heads_prefill_registry.py)
    return [r for r in item["rules"] if "mla-dims" in r["id"] and not r["id"].startswith("draft-")]


def _leaves(pred: Any) -> list[dict[str, Any]]:
    if not isinstance(pred, dict):
        return []
    for key in ("all", "any"):
        if key in pred:
            return [leaf for p in pred[key] for leaf in _leaves(p)]
    return [pred]


def _allowed(require: Any, fact: str) -> set[Any] | None:
    """The values a rule's requirement takes for `fact` (None: it does not read it)."""
    for leaf in _leaves(require):
        if leaf.get("fact") == fact:
            return set(leaf["value"]) if leaf["op"] == "in" else {leaf["value"]}
    return None


def _manifest_dims(version: str) -> tuple[set[str], set[int] | None]:
    """(kv_lora/rope pairs, qk_nope_head_dims or None for any) that the rule for FlashInfer `version` requires."""
    hits = []
    for rule in _rules("attention-trtllm-mla"):
        spec = next(
            leaf["value"] for leaf in _leaves(rule["when"]) if leaf.get("fact") == "pkg.flashinfer-python.version"
        )
        if version_in(version, spec):
            hits.append(rule)
    assert len(hits) == 1, (version, [r["id"] for r in hits])
    kv_rope = _allowed(hits[0]["require"], "launch.mla_kv_rope")
    assert kv_rope is not None
    return {str(x) for x in kv_rope}, _allowed(hits[0]["require"], "launch.mla_qk_nope_head_dim")


def _function(text: str, name: str) -> str:
    start = text.index(f"def {name}(")
    end = re.search(r"\n(?:def |class |@)", text[start + 1 :])
    return text[start : start + 1 + end.start()] if end else text[start:]


def _wheel_dims(version: str) -> tuple[set[str], set[int] | None]:
    """What the wheel's _check_trtllm_gen_mla_shape takes, read from its source."""
    texts = read_texts(
        fetch_wheel("flashinfer-python", version),
        lambda n: n in ("flashinfer/decode.py", "flashinfer/mla.py", "flashinfer/mla/_core.py"),
    )
    text = next(t for t in texts.values() if "def _check_trtllm_gen_mla_shape(" in t)
    check = _function(text, "_check_trtllm_gen_mla_shape")
    nope: set[int] | None = None
    if m := re.search(r"if qk_nope_head_dim != (\d+):", check):
        nope = {int(m.group(1))}
    elif m := re.search(r"if not \(qk_nope_head_dim == (\d+) or qk_nope_head_dim == (\d+)\):", check):
        nope = {int(m.group(1)), int(m.group(2))}
    else:
        assert "qk_nope_head_dim ==" not in check and "qk_nope_head_dim !=" not in check, version
    fixed = re.search(r"if kv_lora_rank != (\d+):.*?if qk_rope_head_dim != (\d+):", check, re.S)
    if fixed:
        return {f"{fixed.group(1)}/{fixed.group(2)}"}, nope
    # the named dims the check compares against (is_X = kv_lora_rank == X.kv_lora_rank and ...)
    names = re.findall(r"kv_lora_rank == (\w+)\.kv_lora_rank\s+and qk_rope_head_dim == \1\.qk_rope_head_dim", check)
    assert names and "Unsupported MLA dimensions" in check, version
    pairs = set()
    for name in names:
        body = re.search(rf"{name} = MLAHeadDimensions\((.*?)\)", text, re.S)
        assert body is not None, (version, name)
        rank = re.search(r"kv_lora_rank=(\d+)", body.group(1))
        rope = re.search(r"qk_rope_head_dim=(\d+)", body.group(1))
        assert rank and rope, (version, name)
        pairs.add(f"{rank.group(1)}/{rope.group(1)}")
    return pairs, nope


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_trtllm_gen_mla_dims_rule_is_the_wheels_check(version: str) -> None:
    assert _wheel_dims(version) == _manifest_dims(version), version


@pytest.mark.registry
@pytest.mark.parametrize(("dist", "version"), [("sgl-kernel", "0.3.21"), ("sglang-kernel", "0.4.10")])
def test_flashmla_library_takes_head_576_and_v_512(dist: str, version: str) -> None:
    wheel = fetch_wheel(dist, version)
    with zipfile.ZipFile(wheel) as zf:
        member = next(n for n in zf.namelist() if n.endswith("flashmla_ops.abi3.so"))
        data = zf.read(member)
    assert b"Only head_size_v == 512 is supported" in data
    assert b"Only head_size_k == 576 is supported" in data
    (rule,) = _rules("attention-flashmla")
    assert _allowed(rule["require"], "launch.mla_kv_rope") == {"512/64"}  # 512 + 64 = 576, V = kv_lora_rank


@pytest.mark.registry
@pytest.mark.parametrize(
    "version", ["0.5.1", "0.5.10", "0.5.23"] if not run_all() else ["0.5.1", "0.5.6", "0.5.10", "0.5.17", "0.5.23"]
)
def test_sglang_passes_the_model_dims_to_the_kernels(version: str) -> None:
    texts = read_texts(
        fetch_wheel("sglang", version),
        lambda n: n.endswith(("attention/trtllm_mla_backend.py", "attention/flashmla_backend.py")),
    )
    trtllm = next(t for n, t in texts.items() if n.endswith("trtllm_mla_backend.py"))
    flashmla = next(t for n, t in texts.items() if n.endswith("flashmla_backend.py"))
    assert "trtllm_batch_decode_with_kv_cache_mla" in trtllm
    for dim in ("qk_nope_head_dim", "kv_lora_rank", "qk_rope_head_dim"):
        assert re.search(rf"self\.{dim} = config\.{dim}", trtllm), (version, dim)
        assert re.search(rf"{dim}=self\.{dim}", trtllm), (version, dim)
    assert re.search(r"head_dim_v=self\.kv_lora_rank", flashmla), version
