"""features.json's mla-models-only (attention-trtllm-mla) and non-mla-models-only (attention-trtllm-mha), the tenth
fact-check sample's fix (tests/realworld/FACTCHECK.md), read against the real SGLang wheels: each release builds
its trtllm_mla backend only when the model runner's use_mla_backend is true and its trtllm_mha backend only when it
is false, raising ValueError otherwise (model_executor/model_runner.py to 0.5.2, attention_registry.py from 0.5.3).
A release without either check fails here (the rules apply to every release 0.5.1-0.5.23)."""

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
