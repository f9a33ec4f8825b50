"""launch.json's refusal deterministic-attention-backend, its second check and second switch, read against the real
SGLang wheels: the DeepSeek list SGLang's deterministic step checks (backend_list.models.architectures), the
backends that check takes (models.allowed; fa4 only on SM100/SM110: majors_only), and --rl-on-policy-target turning
the flag on (the rule's `also` conditions), for each release 0.5.3-0.5.23. A release that changes any of these
fails here."""

from __future__ import annotations

import ast
import re
import zipfile
from typing import Any

import pytest
from registry_wheels import fetch_wheel, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALL = [f"0.5.{n}" for n in range(3, 24)]
DEFAULT = ["0.5.3", "0.5.5", "0.5.7", "0.5.9", "0.5.16", "0.5.17", "0.5.18", "0.5.20", "0.5.23"]


def _versions() -> list[str]:
    return ALL if run_all() else DEFAULT


def _sources(version: str) -> list[str]:
    names = ("sglang/srt/server_args.py", "sglang/srt/arg_groups/attention_hook.py", "sglang/srt/arg_groups/choices.py")
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        return [z.read(n).decode("utf-8", "replace") for n in names if n in z.namelist()]


def _entry(version: str) -> dict[str, Any]:
    rules = load([], env={}).launch["refusals"]["rules"]
    rule = next(r for r in rules if r["id"] == "deterministic-attention-backend")
    return next(e for e in rule["releases"] if version_in(version, e["versions"]) is True)


def _model_check(texts: list[str]) -> tuple[list[str], list[str] | None, bool] | None:
    """(the DeepSeek list, the backends its check takes, whether fa4 is tied to SM100/SM110), None without one."""
    for text in texts:
        m = re.search(r"is_deepseek_model = model_arch in (\[[^\]]*\])", text)
        if not m:
            continue
        archs = [str(a) for a in ast.literal_eval(m.group(1))]
        rest = text[m.end() :]
        for block in re.finditer(r"\n( +)if is_deepseek_model:\n((?:\1 .*\n|\n)+)", rest):
            body = block.group(2)
            if "raise ValueError" not in body:
                continue  # the fallback's own test (triton on SM100/SM120)
            literal = re.search(r"not in (\[[^\]]*\])|= (\[[^\]]*\])\n", body)
            allowed: list[str] | None
            if literal:
                allowed = [str(b) for b in ast.literal_eval(literal.group(1) or literal.group(2))]
            elif "not in RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND" in body.replace("\n", " ").replace("  ", ""):
                allowed = _radix(texts)
            else:
                allowed = None
            fa4 = re.search(
                r'== "fa4" and not (?:is_sm100_or_sm110_supported\(\)|get_platform\(\)\.is_sm100_or_sm110)', body
            )
            return archs, allowed, fa4 is not None
    return None


def _radix(texts: list[str]) -> list[str] | None:
    for text in texts:
        m = re.search(r"^RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND\s*=\s*(\[[^\]]*\])", text, re.M)
        if m:
            return sorted(str(b) for b in ast.literal_eval(m.group(1)))
    return None


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_deepseek_check_of_each_release_is_the_data(version: str) -> None:
    texts = _sources(version)
    spec = _entry(version)["backend_list"].get("models")
    found = _model_check(texts)
    if found is None:
        assert spec is None, f"{version}: launch.json has a DeepSeek check the wheel lacks"
        return
    archs, allowed, fa4 = found
    assert spec is not None, f"{version}: the wheel checks {archs} and launch.json does not"
    assert spec["architectures"] == archs
    assert allowed is not None and sorted(spec["allowed"]) == sorted(allowed)
    assert (spec.get("majors_only") == {"fa4": [10, 11]}) is fa4


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_rl_on_policy_target_turns_the_flag_on_where_the_data_says(version: str) -> None:
    text = "\n".join(_sources(version))
    turns_on = bool(
        re.search(
            r"if (?:self|cfg)\.rl_on_policy_target is not None:\n(?:.*\n){0,8}?.*enable_deterministic_inference", text
        )
    )
    assert ("--rl-on-policy-target" in str(_entry(version).get("also"))) is turns_on, version


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_models_the_fallback_does_not_list_are_the_data(version: str) -> None:
    """From 0.5.15 the fallback tests its own list (_deterministic_is_deepseek_model); a model the check lists and
    that list lacks gets flashinfer on SM100/SM120 and is then refused (models.fallback_outside)."""
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        name = "sglang/srt/arg_groups/overrides.py"
        text = z.read(name).decode("utf-8", "replace") if name in z.namelist() else ""
    own = re.search(r"def _deterministic_is_deepseek_model\(.*?\n(?=def |@)", text, re.S)
    found = _model_check(_sources(version))
    spec = _entry(version)["backend_list"].get("models") or {}
    outside = (spec.get("fallback_outside") or {}).get("architectures") or []
    if own is None or found is None:
        assert outside == [], version
        return
    listed = re.search(r"architectures\[0\] in (\[[^\]]*\])", own.group(0))
    assert listed is not None, version
    fallback = {str(a) for a in ast.literal_eval(listed.group(1))}
    assert sorted(set(found[0]) - fallback) == sorted(outside), version
    if outside:
        assert spec["fallback_outside"]["majors"] == [10, 12]


def _platform_cuda_min(version: str, probe: str) -> str | None:
    """The torch CUDA build `probe` (is_sm100_or_sm110_supported) of utils/common.py asks for, "12.8"; None without
    one (its partial of _check_cuda_device_version with cuda_version=(major, minor))."""
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        if "sglang/srt/utils/common.py" not in z.namelist():
            return None
        text = z.read("sglang/srt/utils/common.py").decode("utf-8", "replace")
    m = re.search(rf"^{probe} = lru_cache\(maxsize=1\)\((.*?)^\)", text, re.M | re.S)
    if m is None:
        return None
    want = re.search(r"cuda_version=\((\d+),\s*(\d+)\)", m.group(1))
    return f"{want.group(1)}.{want.group(2)}" if want else None


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_fa4_clause_asks_the_torch_cuda_build_the_data_says(version: str) -> None:
    """The fa4 clause's SM100/SM110 test reads torch.version.cuda too (majors_only_torch_cuda_min)."""
    spec = _entry(version)["backend_list"].get("models") or {}
    if "fa4" not in (spec.get("majors_only") or {}):
        assert "majors_only_torch_cuda_min" not in spec, version
        return
    assert spec.get("majors_only_torch_cuda_min") == {"fa4": _platform_cuda_min(version, "is_sm100_or_sm110_supported")}
