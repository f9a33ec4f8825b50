"""launch.json's refusal deterministic-attention-backend read against the real SGLang wheels: for each release, the
list of backends deterministic inference takes (DETERMINISTIC_ATTENTION_BACKEND_CHOICES), whether the step raises
for a value outside it, whether it falls back to one of the list when none is held (`unset`), and whether the
default picker runs before it (`default_pick`: 0.5.5-0.5.11) or after it (0.5.12 on, where two equal split flags
have not yet set attention_backend either: before_equal_split). A release that changes any of these fails here."""

from __future__ import annotations

import ast
import re
from typing import Any

import pytest
from registry_wheels import fetch_wheel, is_argument_source, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALL = [f"0.5.{n}" for n in range(2, 24)]
DEFAULT = ["0.5.2", "0.5.3", "0.5.4", "0.5.6", "0.5.9", "0.5.12", "0.5.13", "0.5.16", "0.5.19", "0.5.23"]


def _versions() -> list[str]:
    return ALL if run_all() else DEFAULT


def _code(version: str) -> dict[str, str]:
    return read_texts(fetch_wheel("sglang", version), is_argument_source)


def _entry(version: str) -> dict[str, Any]:
    rules = load([], env={}).launch["refusals"]["rules"]
    rule = next(r for r in rules if r["id"] == "deterministic-attention-backend")
    return next(e for e in rule["releases"] if version_in(version, e["versions"]) is True)


def _handler(code: dict[str, str]) -> str:
    """The code that checks the backend: _deterministic_attention_backend (0.5.15 on), else the server_args
    method, each up to the next top-level or method definition."""
    for pattern in (r"\ndef _deterministic_attention_backend\(", r"\n    def _handle_deterministic_inference\("):
        for text in code.values():
            m = re.search(pattern, text)
            if m:
                end = re.search(r"\n(def |    def )", text[m.end() :])
                return text[m.start() : m.end() + (end.start() if end else len(text))]
    return ""


def _picks_default(code: dict[str, str]) -> bool:
    """Whether the attention-compatibility step picks the default backend (0.5.5 on; ModelRunner before)."""
    text = "\n".join(code.values())
    return "Pick the default attention backend if not specified" in text or "_attention_backend_default" in text


def _order(code: dict[str, str]) -> list[str]:
    """The order in which the deterministic step and the attention-compatibility step (the default picker) run."""
    for name in ("sglang/srt/arg_groups/pipeline.py", "sglang/srt/server_args.py"):
        found = re.findall(
            r"(?:self\._handle_|run_hook\(handle_|\n    handle_)"
            r"(deterministic_inference|attention_backend_compatibility)"
            r"(?:\(\)|, server_args\)|\(server_args\))",
            code.get(name, ""),
        )
        if len(found) >= 2:
            return found
    return []


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_deterministic_check_of_each_release_is_the_data(version: str) -> None:
    code = _code(version)
    entry = _entry(version)
    if not entry["applies"]:
        assert "enable_deterministic_inference" not in code["sglang/srt/server_args.py"], version
        return
    # the list, wherever the release defines it
    listed = None
    for text in code.values():
        m = re.search(r"^DETERMINISTIC_ATTENTION_BACKEND_CHOICES = (\[.*?\])", text, re.S | re.M)
        if m:
            listed = ast.literal_eval(m.group(1))
    assert listed is not None, version
    spec = entry["backend_list"]
    assert sorted(listed) == sorted(spec["allowed"]), version
    handler = _handler(code)
    assert "not in DETERMINISTIC_ATTENTION_BACKEND_CHOICES" in handler and "raise ValueError" in handler, version
    falls_back = re.search(r"attention_backend is None:", handler) is not None
    assert falls_back is (spec["unset"] != "refused"), version
    order = _order(code)
    assert order, version
    compat_first = order.index("attention_backend_compatibility") < order.index("deterministic_inference")
    picker_first = compat_first and _picks_default(code)
    assert picker_first is (spec["unset"] == "default_pick"), (version, order)
    if spec["unset"] == "default_pick":  # which GPUs the default picker may pick outside the list on (trtllm_mha)
        text = code["sglang/srt/server_args.py"]
        body = ""
        for method in ("_handle_attention_backend_compatibility", "_get_default_attn_backend"):
            m = re.search(rf"\n    def {method}\(", text)
            if m:
                end = re.search(r"\n    def ", text[m.end() :])
                body += text[m.start() : m.end() + (end.start() if end else len(text))]
        sm100 = re.search(r'is_sm100_supported\(\)[^"]*?attention_backend\s*=\s*"trtllm_mha"', body, re.S)
        sm100 = sm100 or re.search(r'is_sm100_supported\(\)[^"]*?return "trtllm_mha"', body, re.S)
        assert (spec.get("default_outside_majors") == [10]) is (sm100 is not None), version
    if _picks_default(code):  # the releases with equal split flags (0.5.5 on): set before the check or not
        assert bool(entry.get("before_equal_split")) is (not compat_first), version


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_fallback_pick_of_each_release_is_the_data(version: str) -> None:
    """refusals.auto.attention_backend.defaults' deterministic entries (when_flags): exactly the releases whose
    fallback runs (0.5.4, 0.5.12 on), with fa3 off SM100/SM120, flashinfer there and triton for the DeepSeek list
    (0.5.6 on) as the wheel's fallback branch writes them."""
    code = _code(version)
    entry = _entry(version)
    defaults = load([], env={}).launch["refusals"]["auto"]["attention_backend"]["defaults"]
    mine = sorted(
        (d["feature"], tuple(d["majors"]))
        for d in defaults
        if d.get("when_flags") and version_in(version, d["versions"]) is True
    )
    runs = entry["applies"] and entry["backend_list"]["unset"] == "fallback"
    if not runs:
        assert mine == [], version
        return
    handler = _handler(code)
    branch = handler[handler.index("attention_backend is None:") :]
    branch = branch[: branch.index("DETERMINISTIC_ATTENTION_BACKEND_CHOICES")]
    assert re.search(r"is_sm100(_supported\(\))? or (get_platform\(\)\.)?is_sm120", branch), version
    assigned = re.findall(r'(?:backend|attention_backend) = "(\w+)"', branch)
    deepseek = "triton" in assigned
    assert assigned == (["triton", "flashinfer", "fa3"] if deepseek else ["flashinfer", "fa3"]), (version, assigned)
    want = [("attention-fa3", (7, 8, 9, 11)), ("attention-fa3", (10, 12)), ("attention-flashinfer", (10, 12))]
    if deepseek:
        want.append(("attention-triton", (10, 12)))
    assert mine == sorted(want), version
    # the DeepSeek test of the fallback: the handler's is_deepseek_model (0.5.12-0.5.14), else its own function
    names = re.search(r"def _deterministic_is_deepseek_model\(.*?\n(?=def )", "\n".join(code.values()), re.S)
    text = names.group(0) if names else handler
    listed = re.search(r"(?:model_arch|architectures\[0\]) in (\[[^\]]*\])", text)
    keyed = [d for d in defaults if d.get("when_flags") and version_in(version, d["versions"]) is True]
    if not deepseek:
        assert not any(d.get("architectures") or d.get("except_architectures") for d in keyed), version
        return
    assert listed is not None, version
    archs = [str(a) for a in ast.literal_eval(listed.group(1))]
    for d in keyed:
        if d["feature"] == "attention-triton":
            assert d["architectures"] == archs, version
        elif d["feature"] == "attention-flashinfer":
            assert d["except_architectures"] == archs, version
