"""features.json's mla-models-only (attention-trtllm-mla) and non-mla-models-only (attention-trtllm-mha), the tenth
fact-check sample's fix (tests/realworld/FACTCHECK.md), read against the real SGLang wheels: each release builds
its trtllm_mla backend only when the model runner's use_mla_backend is true and its trtllm_mha backend only when it
is false, raising ValueError otherwise (model_executor/model_runner.py to 0.5.2, attention_registry.py from 0.5.3).
A release without either check fails here (the rules apply to every release 0.5.1-0.5.23). And launch.json
release_choices (found on the way): the attention backend list each release's parser gives its three attention flags."""

from __future__ import annotations

import re

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

ALL = ["0.5.1", "0.5.1.post3", *(f"0.5.{n}" for n in range(2, 24))]
DEFAULT = ["0.5.1", "0.5.3", "0.5.6", "0.5.10"]
CHECKS = {
    "trtllm_mla": r"if not (?:self|runner)\.use_mla_backend:\s*raise ValueError\(\s*\"trtllm_mla backend can only "
    r"be used with MLA models\.\"",
    "trtllm_mha": r"if (?:self|runner)\.use_mla_backend:\s*raise ValueError\(\s*\"trtllm_mha backend can only be "
    r"used with non-MLA models\.\"",
}


def _sources(name: str) -> bool:
    return name.endswith(("srt/layers/attention/attention_registry.py", "srt/model_executor/model_runner.py"))


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_each_trtllm_backend_takes_one_kind_of_model(version: str) -> None:
    code = "\n".join(read_texts(fetch_wheel("sglang", version), _sources).values())
    for backend, pattern in CHECKS.items():
        assert re.search(pattern, code), (version, backend)
    # use_mla_backend is the model config's MLA kind, the one preflight.json model.mla_architectures records
    assert re.search(r"use_mla_backend = self\.model_config\.attention_arch == AttentionArch\.MLA", code), version


def _arguments(name: str) -> bool:
    return name == "sglang/srt/server_args.py" or (name.startswith("sglang/srt/arg_groups/") and name.endswith(".py"))


@pytest.mark.registry
@pytest.mark.parametrize("version", ALL if run_all() else DEFAULT)
def test_the_attention_backend_choices_are_the_data(version: str) -> None:
    """launch.json release_choices: the list the release's parser gives the three attention flags."""
    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load

    code = "\n".join(read_texts(fetch_wheel("sglang", version), _arguments).values())
    listed = re.search(r"(?:ATTENTION_BACKEND_CHOICES|ATTN_BACKENDS) = \[(.*?)\]", code, re.S)
    assert listed, version
    choices = re.findall(r'"([^"]+)"', re.sub(r"#[^\n]*", "", listed.group(1)))
    assert len(re.findall(r"choices=(?:ATTENTION_BACKEND_CHOICES|ATTN_BACKENDS)", code)) == 3, version
    spec = next(s for s in load([], env={}).launch["release_choices"] if "--attention-backend" in s["flags"])
    run = next(r for r in spec["runs"] if version_in(version, r["versions"]) is True)
    assert run["choices"] == choices, version
