"""launch.json's refusal exaone4-attention-backend (the ninth fact-check sample, tests/realworld/FACTCHECK.md) read
against the real SGLang wheels: per release, the Exaone architectures, the backends their assertion takes and
whether it runs before any backend is picked (`unset: refused`: no Exaone override picks one, and the model-specific
step runs before the default picker). A release that changes any of these fails here."""

from __future__ import annotations

import re
from typing import Any

import pytest
from registry_wheels import fetch_wheel, is_argument_source, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALL = [f"0.5.{n}" for n in range(1, 24)]
DEFAULT = ["0.5.4", "0.5.5", "0.5.8", "0.5.9", "0.5.16", "0.5.17", "0.5.21", "0.5.22"]
RADIX = re.compile(r"RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND = (\[[^\]]*\])")


def _versions() -> list[str]:
    return ALL if run_all() else DEFAULT


def _code(version: str) -> dict[str, str]:
    return read_texts(fetch_wheel("sglang", version), is_argument_source)


def _entry(rule_id: str, version: str) -> dict[str, Any]:
    rules = load([], env={}).launch["refusals"]["rules"]
    rule = next(r for r in rules if r["id"] == rule_id)
    return next(e for e in rule["releases"] if version_in(version, e["versions"]) is True)


def _strings(text: str) -> list[str]:
    return re.findall(r'"([^"]+)"', text)


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_exaone4_assertion_is_the_data(version: str) -> None:
    files = _code(version)
    code = "\n".join(files.values())
    entry = _entry("exaone4-attention-backend", version)
    branch = re.search(r'model_arch in \[\s*("Exaone4ForCausalLM",[^\]]*)\]', code)
    assert bool(branch) == bool(entry.get("applies")), version
    if not branch:
        return
    body = code[branch.end() : branch.end() + 900]
    accepted = re.search(r"accepted_backends = (\[[^\]]*\])", body)
    assert accepted and "is required for {model_arch}, but got" in body, version
    spec = entry["model_backend"]
    assert set(_strings(branch.group(1))) == set(spec["architectures"]), version
    assert sorted(_strings(accepted.group(1))) == sorted(spec["allowed"]), version
    # refused when unset: no Exaone override picks a backend before the assertion (0.5.22 on one does)
    picks = any('overrides["attention_backend"]' in t for n, t in files.items() if n.endswith("exaone.py"))
    assert (spec.get("unset") == "refused") == (not picks), version
    # and the model-specific step runs before the default picker
    order = re.findall(
        r"(?:self\._handle_|run_hook\(handle_|\n    handle_)"
        r"(model_specific_adjustments|attention_backend_compatibility)"
        r"(?:\(\)|, server_args\)|\(server_args\))",
        files.get("sglang/srt/arg_groups/pipeline.py", "") or files["sglang/srt/server_args.py"],
    )
    assert order[:2] == ["model_specific_adjustments", "attention_backend_compatibility"], (version, order)


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_flashmla_dsa_defaults_are_where_the_wheel_picks_flashmla_on_blackwell(version: str) -> None:
    """dsa_defaults' attention-flashmla entries (majors 11 and 12) hold exactly where the wheel's DSA default picks a
    FlashMLA kernel on major >= 10 for the KV cache it defaults to there (FP8): 0.5.3-0.5.9; from 0.5.10 that cache
    goes to trtllm."""
    code = "\n".join(_code(version).values())
    auto = load([], env={}).launch["refusals"]["auto"]["attention_backend"]
    entries = [e for e in auto["dsa_defaults"] if e["feature"] == "attention-flashmla"]
    entries = [e for e in entries if version_in(version, e["versions"]) is True]
    # the Blackwell entries only: the major-8 ones (a DSA model with --kv-cache-dtype fp8_e4m3 below major 10, stop
    # 36) are another branch of the same defaults, held by tests/launch/test_gate_backend_leftovers.py
    entries = [e for e in entries if min(e["majors"]) >= 10]
    # the FP8 branch of the DSA backend defaults: the first assignment after `kv_cache_dtype == "fp8_e4m3"`
    fp8 = re.search(r'kv_cache_dtype == "fp8_e4m3":(.{0,900})', code, re.S)
    picks = re.findall(r'(?:nsa_(?:prefill|decode)(?:_backend)?|dsa_(?:prefill|decode)_backend) = "([a-z_0-9]+)"',
                       fp8.group(1) if fp8 else "")  # fmt: skip
    flashmla = bool(picks) and all(p.startswith("flashmla") for p in picks[:2])
    assert bool(entries) == flashmla, (version, picks)
    for entry in entries:
        assert entry["majors"] == [11, 12], version
