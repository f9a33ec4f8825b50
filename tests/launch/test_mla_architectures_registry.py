"""manifests/preflight.json model.mla_architectures read against the real SGLang wheels: for each release, the
architectures (and the text-config condition of each) that sglang/srt/configs/model_config.py's ModelConfig makes
MLA (tests/mla_arch_reader.py reads the branches that assign AttentionArch.MLA) must be exactly those the
manifest's entries give for that release. A release that adds an MLA architecture, drops one or changes a
condition fails here instead of leaving the gate judging an MLA model by the MHA rules."""

from __future__ import annotations

import zipfile
from typing import Any

import pytest
from mla_arch_reader import mla_architectures
from registry_wheels import fetch_wheel, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

CONDITION_KEYS = ("unless_text_config_false", "needs_text_config")
# the releases where the MLA set or a condition changes, and the two ends (all of them with STACKCHECK_REGISTRY_ALL)
DEFAULT = ["0.5.1", "0.5.2", "0.5.3", "0.5.5", "0.5.7", "0.5.9", "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.16",
           "0.5.17", "0.5.19", "0.5.20", "0.5.21", "0.5.23"]  # fmt: skip


def _table() -> dict[str, Any]:
    return dict(load([], env={}).preflight["model"]["mla_architectures"])


def _versions() -> list[str]:
    return list(_table()["read"]["releases"]) if run_all() else DEFAULT


def manifest_view(table: dict[str, Any], version: str) -> dict[str, dict[str, str]]:
    """{architecture: condition} that the manifest's entries give for one release."""
    out: dict[str, dict[str, str]] = {}
    for entry in table["entries"]:
        if version_in(version, entry["versions"]) is True:
            assert entry["architecture"] not in out, (version, entry["architecture"])  # one entry per release
            out[entry["architecture"]] = {k: entry[k] for k in CONDITION_KEYS if k in entry}
    return out


def test_the_read_releases_cover_every_entry() -> None:
    table = _table()
    releases = table["read"]["releases"]
    assert all(version_in(v, table["read"]["versions"]) is True for v in releases)
    for entry in table["entries"]:
        assert any(version_in(v, entry["versions"]) is True for v in releases), entry["architecture"]
        assert version_in("0.5.24", entry["versions"]) is not True, entry  # none reaches past the releases read


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_mla_architectures_match_the_wheel(version: str) -> None:
    with zipfile.ZipFile(fetch_wheel("sglang", version)) as z:
        source = z.read("sglang/srt/configs/model_config.py").decode("utf-8")
    wheel = mla_architectures(source)
    manifest = manifest_view(_table(), version)
    assert sorted(set(wheel) - set(manifest)) == [], f"MLA in the {version} wheel, not in preflight.json"
    assert sorted(set(manifest) - set(wheel)) == [], f"in preflight.json for {version}, not MLA in the wheel"
    assert {a: c for a, c in wheel.items() if c} == {a: c for a, c in manifest.items() if c}, version


@pytest.mark.registry
def test_gigachat35_and_the_others_the_lead_found_are_mla_in_0_5_23_only_from_their_release() -> None:
    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.23")) as z:
        new = mla_architectures(z.read("sglang/srt/configs/model_config.py").decode("utf-8"))
    with zipfile.ZipFile(fetch_wheel("sglang", "0.5.9")) as z:
        old = mla_architectures(z.read("sglang/srt/configs/model_config.py").decode("utf-8"))
    found = [
        "GigaChat35ForCausalLM", "GigaChat35ForCausalLMNextN", "Dots3NoteForCausalLM", "HYV4ForCausalLM",
        "Glm5NextForConditionalGeneration", "Eagle3DeepseekV2ForCausalLM", "GlmMoeDsaForCausalLMNextN",
    ]  # fmt: skip
    for name in found:
        assert name in new and name not in old, name
    # conditions: DeepSeek-VL2 in both; Pixtral and the Bailing draft gained one after 0.5.9
    assert old["DeepseekVL2ForCausalLM"] == new["DeepseekVL2ForCausalLM"] == {"unless_text_config_false": "use_mla"}
    assert old["PixtralForConditionalGeneration"] == {} and new["PixtralForConditionalGeneration"] == {
        "needs_text_config": "kv_lora_rank"
    }
    assert set(old) <= set(new)  # nothing of 0.5.9's list was dropped by 0.5.23
