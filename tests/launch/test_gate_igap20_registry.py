"""igap20: the wheel facts behind model_quant_loaded, modelopt-mixed-flag-mismatch and the MegaMoE variable.

Read in each SGLang wheel (registry): ModelOptMixedPrecisionConfig.override_quantization_method answers
modelopt_mixed for a parsed modelopt_mixed config whatever the flag; the override loop is skipped for
REQUANTIZATION_METHODS exactly where preflight.json's modelopt_mixed_flag_kept says; no compatibility entry lists
w4afp8, and the mismatch is raised; the nvfp4_online runner check reads SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16, an
EnvBool whose default is False."""

from __future__ import annotations

import re
from typing import Any

import pytest

VERSIONS = ["0.5.10", "0.5.12", "0.5.13", "0.5.17", "0.5.18", "0.5.21", "0.5.23"]


def _table() -> dict[str, Any]:
    from stackcheck.knowledge.loader import load

    table: dict[str, Any] = load([], env={}).preflight["model"]["w4afp8_moe"]
    return table


@pytest.mark.registry
@pytest.mark.parametrize("version", VERSIONS)
def test_the_mixed_override_and_the_kept_flags_are_the_wheels(version: str) -> None:
    from registry_wheels import fetch_wheel, read_texts

    from stackcheck.facts.versions import version_in

    config, modelopt = "sglang/srt/configs/model_config.py", "sglang/srt/layers/quantization/modelopt_quant.py"
    texts = read_texts(fetch_wheel("sglang", version), lambda n: n in (config, modelopt))
    body = texts[modelopt][texts[modelopt].index("class ModelOptMixedPrecisionConfig") :]
    body = body[body.index("def override_quantization_method") :]
    body = body[: body.index("@classmethod")]
    assert 'get("quant_method", "") == "modelopt_mixed"' in body and 'return "modelopt_mixed"' in body
    assert "user_quant" not in body.split(":", 1)[1]  # the flag is not read: any flag is replaced
    guarded = "if self.quantization not in REQUANTIZATION_METHODS:" in texts[config]
    listed = re.search(r"^REQUANTIZATION_METHODS = \[(.*?)\]", texts[config], re.M)
    kept = [r for r in _table()["modelopt_mixed_flag_kept"] if version_in(version, r["versions"]) is True]
    if guarded:
        assert listed is not None
        assert sorted(re.findall(r'"(\w+)"', listed.group(1))) == sorted(f for r in kept for f in r["flags"])
    else:
        assert kept == []


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.5", "0.5.9", *VERSIONS])
def test_no_compatibility_entry_takes_w4afp8_and_the_mismatch_raises(version: str) -> None:
    from registry_wheels import fetch_wheel, read_texts

    config = "sglang/srt/configs/model_config.py"
    text = read_texts(fetch_wheel("sglang", version), lambda n: n == config)[config]
    block = text[text.index("compatible_quantization_methods = {") :]
    block = block[: block.index("}")]
    assert '"w4afp8"' not in block
    assert '"Quantization method specified in the model config "' in text


@pytest.mark.registry
def test_the_megamoe_variable_is_an_envbool_off_by_default_and_read_by_the_runner_check() -> None:
    from registry_wheels import fetch_wheel, read_texts

    from stackcheck.knowledge.loader import load

    environ, overrides = "sglang/srt/environ.py", "sglang/srt/arg_groups/overrides.py"
    texts = read_texts(fetch_wheel("sglang", "0.5.23"), lambda n: n in (environ, overrides))
    assert "SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16 = EnvBool(False)" in texts[environ]
    assert "envs.SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16.get()" in texts[overrides]
    entry = next(e for e in load([], env={}).launch["env"] if e["name"] == "SGLANG_FLASHINFER_CUTEDSL_NVFP4_W4A16")
    assert entry["default"] is False and entry["otherwise"] is False
