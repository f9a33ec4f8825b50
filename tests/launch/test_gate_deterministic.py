"""Deterministic inference (--enable-deterministic-inference, 0.5.3 on): SGLang checks the attention backend it holds
at that step against its list for deterministic inference and raises a ValueError at argument parsing for one
outside it (launch.json refusal deterministic-attention-backend, read in every wheel 0.5.3-0.5.23:
tests/launch/test_gate_deterministic_registry.py).

- 0.5.3 has no fallback: the flag without --attention-backend is refused unless a model override filled the
  backend before the check (GPT-OSS);
- 0.5.4 and 0.5.12 on fall back to a backend of the list when none is held (the model overrides ran before: their
  pick is checked, DeepSeek R1's trtllm_mla on SM100 among them: unknown, as its torch CUDA minimum is not read here);
- 0.5.5-0.5.11 run the default picker first: its trtllm_mha for an MHA model on SM100 (0.5.7-0.5.11) is outside the
  list (unknown: the model's kind and the top-k decide).
The gate judged none of this before: every such launch passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import DEEPSEEK_R1, DEEPSEEK_V2_LITE, GPT_OSS, LLAMA3, config_rule_status, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys

ROOT = Path(__file__).resolve().parent.parent.parent
SEED_AFTER = ROOT / "tests" / "recommend" / "seed-after" / "facts.json"  # SM120, SGLang 0.5.23
FLAG = "--enable-deterministic-inference"


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def rule(
    mapping: dict[str, Any], version: str, majors: set[int] | None, config: dict[str, Any] | None, *flags: str
) -> str:
    return config_rule_status(mapping, "deterministic-attention-backend", version, majors, config, *flags)


def test_0_5_3_without_an_attention_backend_is_refused(mapping: dict[str, Any]) -> None:
    """0.5.3's check sees None (no fallback yet): ValueError for Llama 3 on any GPU; unknown where the model is not
    read (a GPT-OSS override would fill it); GPT-OSS on Hopper gets fa3 from its override and starts."""
    for majors in ({8}, {9}, {10}, {12}):
        assert rule(mapping, "0.5.3", majors, LLAMA3, FLAG) == "blocked", majors
    assert rule(mapping, "0.5.3", {9}, None, FLAG) == "unknown"
    assert rule(mapping, "0.5.3", {9}, GPT_OSS, FLAG) == "ok"
    # its override's trtllm_mha on SM100 needs torch CUDA >= 12.8, which the rules do not read: unknown, not ok
    assert rule(mapping, "0.5.3", {10}, GPT_OSS, FLAG) == "unknown"
    assert rule(mapping, "0.5.3", {9}, LLAMA3, FLAG, "--attention-backend", "fa3") == "ok"
    assert rule(mapping, "0.5.3", {9}, LLAMA3) == "ok"  # no flag, no check
    assert rule(mapping, "0.5.2", {9}, LLAMA3, FLAG) == "ok"  # no such flag (judged elsewhere)


def test_an_explicit_backend_outside_the_list_is_refused_in_every_release(mapping: dict[str, Any]) -> None:
    """--attention-backend trtllm_mha with the flag: ValueError 0.5.3-0.5.23; fa4 is listed from 0.5.16 only."""
    for version in ("0.5.3", "0.5.4", "0.5.6", "0.5.9", "0.5.12", "0.5.14", "0.5.17", "0.5.23"):
        got = rule(mapping, version, {10}, LLAMA3, FLAG, "--attention-backend", "trtllm_mha")
        assert got == "blocked", version
        assert rule(mapping, version, {10}, LLAMA3, FLAG, "--attention-backend", "triton") == "ok", version
    assert rule(mapping, "0.5.15", {10}, LLAMA3, FLAG, "--attention-backend", "fa4") == "blocked"
    assert rule(mapping, "0.5.16", {10}, LLAMA3, FLAG, "--attention-backend", "fa4") == "ok"
    # the abbreviation argparse takes for the flag counts as the flag
    assert rule(mapping, "0.5.23", {10}, LLAMA3, "--enable-deterministic", "--attention-backend", "aiter") == "blocked"


def test_a_model_overrides_pick_is_checked_and_the_fallback_passes(mapping: dict[str, Any]) -> None:
    """0.5.4 and 0.5.12 on: none held falls back to the list (Llama 3 starts); DeepSeek R1's own trtllm_mla on SM100
    may be held before the check (unknown); unread on SM100: unknown (the model may be R1)."""
    for version in ("0.5.4", "0.5.12", "0.5.17", "0.5.23"):
        for majors in ({8}, {9}, {10}, {11}, {12}):
            assert rule(mapping, version, majors, LLAMA3, FLAG) == "ok", (version, majors)
        # trtllm_mla needs torch CUDA >= 12.8 as well, which the rules do not read: unknown (never ok)
        assert rule(mapping, version, {10}, DEEPSEEK_R1, FLAG) == "unknown", version
        assert rule(mapping, version, {10}, DEEPSEEK_R1, FLAG, "--attention-backend", "trtllm_mla") == "blocked"
        assert rule(mapping, version, {9}, DEEPSEEK_R1, FLAG) == "ok", version
        assert rule(mapping, version, {10}, None, FLAG) == "unknown", version
        # unread on Hopper too: a DSA model's own nsa/dsa (every GPU) is outside the list
        assert rule(mapping, version, {9}, None, FLAG) == "unknown", version
        assert rule(mapping, version, {9}, None, FLAG, "--attention-backend", "fa3") == "ok", version


def test_0_5_5_to_0_5_11_check_the_default_pick(mapping: dict[str, Any]) -> None:
    """The default picker runs before the check: trtllm_mha on SM100 (0.5.7-0.5.11) may be held (unknown); on
    Hopper its fa3/flashinfer pass; 0.5.5-0.5.6 pick no backend outside the list on NVIDIA GPUs. Two equal split
    flags set attention_backend before the check in these releases, but not from 0.5.12."""
    assert rule(mapping, "0.5.9", {10}, LLAMA3, FLAG) == "unknown"
    assert rule(mapping, "0.5.9", {9}, LLAMA3, FLAG) == "ok"
    assert rule(mapping, "0.5.6", {10}, LLAMA3, FLAG) == "ok"
    split = ("--prefill-attention-backend", "trtllm_mha", "--decode-attention-backend", "trtllm_mha")
    assert rule(mapping, "0.5.9", {10}, LLAMA3, FLAG, *split) == "blocked"
    assert rule(mapping, "0.5.12", {10}, LLAMA3, FLAG, *split) == "ok"


def test_the_gate_refuses_a_deterministic_launch_sglang_cannot_start(tmp_path: Path) -> None:
    """End to end on seed-after (SM120, SGLang 0.5.23): with --attention-backend trtllm_mha and the flag the gate
    refuses (before: allowed); with triton it does not name the rule."""
    model = model_dir(tmp_path, "llama", LLAMA3)
    bad = gate_json(SEED_AFTER, "--model-path", str(model), FLAG, "--attention-backend", "trtllm_mha", dry_run=True)
    text = str(bad)
    assert "deterministic-attention-backend" in text
    good = gate_json(SEED_AFTER, "--model-path", str(model), FLAG, "--attention-backend", "triton", dry_run=True)
    assert "deterministic-attention-backend" not in str(good)


def picks(
    mapping: dict[str, Any], version: str, majors: set[int], config: dict[str, Any] | None, *flags: str
) -> list[str]:
    from stackcheck.launch.refusals import auto_backend_features

    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    arch = str(config["architectures"][0]) if config else None
    keys = attention_keys(config) if config else None
    mla = None if config is None else "kv_lora_rank" in config
    return sorted(f for f, _ in auto_backend_features(d, mapping, version, majors, "12.9", mla, arch, keys))


def test_the_fallback_pick_is_required_where_sglang_makes_it(mapping: dict[str, Any]) -> None:
    """0.5.4 and 0.5.12 on: with the flag and no attention flag SGLang falls back to fa3 on every GPU that is neither
    SM100 nor SM120 (SM110 Thor, Ampere, Hopper), flashinfer there (triton for DeepSeek from 0.5.12), before its
    default picker: the gate now requires that backend instead of the default (Llama 3 on SM110 needed flashinfer,
    which SGLang does not use there). 0.5.5-0.5.11 run the default picker first: the defaults stay."""
    for version in ("0.5.4", "0.5.12", "0.5.17", "0.5.23"):
        for major in (8, 9, 11):
            assert picks(mapping, version, {major}, LLAMA3, FLAG) == ["attention-fa3"], (version, major)
            assert picks(mapping, version, {major}, DEEPSEEK_V2_LITE, FLAG) == ["attention-fa3"], (version, major)
        assert picks(mapping, version, {12}, LLAMA3, FLAG) == ["attention-flashinfer"], version
        assert picks(mapping, version, {11}, LLAMA3, FLAG, "--attention-backend", "triton") == [], version
    for version in ("0.5.12", "0.5.23"):
        assert picks(mapping, version, {12}, DEEPSEEK_V2_LITE, FLAG) == ["attention-triton"], version
        assert picks(mapping, version, {10}, DEEPSEEK_R1, FLAG) == ["attention-trtllm-mla"], version  # its override
    assert picks(mapping, "0.5.23", {11}, LLAMA3) != ["attention-fa3"]  # without the flag: the default picker's
    assert picks(mapping, "0.5.9", {11}, LLAMA3, FLAG) == picks(mapping, "0.5.9", {11}, LLAMA3)
