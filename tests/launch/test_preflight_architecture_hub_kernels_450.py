"""igap44 (issue 16): transformers 4.50-4.54's hub-kernel table, re-read in every release of that range on PyPI. Each
builds a LayerRepository with neither revision nor version at import (integrations/hub_kernels.py) inside a try whose
only handler catches ImportError, so kernels 0.15.1+ raise ValueError wherever a module that takes
use_kernel_forward_from_hub is imported, as in 4.55. In 4.50-4.51 only four detection models take it and no model
module of the SGLang releases that pin them (0.4.4.post2-0.4.6.post5) reaches one: nothing fails. From 4.52 the
llama, qwen2, mistral3 and llama4 modeling modules take it, and SGLang 0.4.7-0.4.10.post2 (pinning 4.52.3-4.54.1)
drop llava, minicpmo, mistral, mllama4, qwen2_5_vl and yivl, with the 4.55 fallback (resolve_transformers_arch).
Before, the entry covered transformers 4.55 only, so Mistral-7B on SGLang 0.4.9.post2 with its pinned transformers
4.53.0 and kernels 0.16.0 passed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.launch.preflight.architecture import check_architecture
from stackcheck.readers.entryclasses import Registry

REG = Registry(
    {"MistralForCausalLM": "mistral", "LlavaLlamaForCausalLM": "llava", "Qwen2_5_VLForConditionalGeneration":
     "qwen2_5_vl", "LlamaForCausalLM": "llama", "Llama4ForConditionalGeneration": "mllama4"}, [], 5,
)  # fmt: skip


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _packages(sglang: str, transformers: str, kernels: str = "0.16.0") -> dict[str, Any]:
    return {"sglang": {"installed": True, "version": sglang},
            "transformers": {"installed": True, "version": transformers},
            "kernels": {"installed": True, "version": kernels}}  # fmt: skip


def verdict(data: Any, arch: str, sglang: str, transformers: str, kernels: str = "0.16.0") -> Any:
    return check_architecture("model", "m", [arch], REG, None, {}, {}, sglang, data, {"architectures": [arch]},
                              _packages(sglang, transformers, kernels))  # fmt: skip


@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [
        ("0.4.7", "4.52.3"),
        ("0.4.9.post2", "4.53.0"),
        ("0.4.9.post6", "4.54.0"),
        ("0.4.10.post2", "4.54.1"),
        ("0.4.8", "4.54.1"),
    ],
)
def test_a_dropped_module_whose_fallback_imports_the_table_fails(data: Any, sglang: str, transformers: str) -> None:
    # fails before: ok (the entry named transformers 4.55 only)
    for arch in ("MistralForCausalLM", "Llama4ForConditionalGeneration"):
        r = verdict(data, arch, sglang, transformers)
        assert r.status == "fail", r.message
        assert "Either a revision or a version must be specified." in r.message and transformers in r.message
    r = verdict(data, "LlavaLlamaForCausalLM", sglang, transformers)
    assert r.status == "fail" and "Cannot find model module" in r.message, r.message
    r = verdict(data, "Qwen2_5_VLForConditionalGeneration", sglang, transformers)
    assert r.status == "unknown" and "Transformers backend" in r.message, r.message
    assert verdict(data, "LlamaForCausalLM", sglang, transformers).status == "ok"
    assert verdict(data, "MistralForCausalLM", sglang, transformers, kernels="0.14.1").status == "ok"


@pytest.mark.parametrize(
    ("sglang", "transformers"), [("0.4.4.post2", "4.50.0"), ("0.4.5", "4.51.0"), ("0.4.6.post5", "4.51.1")]
)
def test_transformers_450_451_fail_no_sglang_module(data: Any, sglang: str, transformers: str) -> None:
    for arch in ("MistralForCausalLM", "Qwen2_5_VLForConditionalGeneration", "LlamaForCausalLM"):
        assert verdict(data, arch, sglang, transformers).status == "ok"


@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [("0.5.1", "4.53.0"), ("0.4.6", "4.53.0"), ("0.5.10", "4.51.1"), ("0.4.8", "4.55.2")],
)
def test_a_pair_not_read_is_unknown(data: Any, sglang: str, transformers: str) -> None:
    # fails before for the first three: ok (transformers 4.50-4.54 were not judged)
    r = verdict(data, "LlamaForCausalLM", sglang, transformers)
    assert r.status == "unknown", r.message
    assert "was not read" in r.message, r.message


@pytest.mark.registry
@pytest.mark.parametrize(
    ("sglang", "transformers"),
    [("0.4.6.post5", "4.51.1"), ("0.4.7", "4.52.3"), ("0.4.9.post2", "4.53.0"), ("0.4.10.post2", "4.54.1")],
)
def test_real_wheels_drop_exactly_the_entrys_modules(tmp_path: Path, sglang: str, transformers: str) -> None:
    """Every sglang/srt/models module of the real SGLang wheel whose module-level imports (ast, over it and its pinned
    transformers) reach transformers/integrations/hub_kernels.py is one the entry for the pair names, and no other;
    the hub-kernel table's first LayerRepository names neither revision nor version."""
    import ast

    from import_closure import modules_reaching
    from registry_wheels import extract, fetch_wheel

    from stackcheck.facts.versions import version_in

    tf = extract(fetch_wheel("transformers", transformers), tmp_path / "tf",
                 lambda n: n.startswith("transformers/") and n.endswith(".py"))  # fmt: skip
    sg = extract(fetch_wheel("sglang", sglang), tmp_path / "sg",
                 lambda n: n.startswith("sglang/") and n.endswith(".py"))  # fmt: skip
    entries = load([], env={}).preflight["model"]["registry"]["import_failures"]
    entry = next(e for e in entries if version_in(transformers, e["transformers"]) and version_in(sglang, e["sglang"]))
    found = modules_reaching(sg, tf, "transformers.integrations.hub_kernels")
    assert sorted(found) == sorted(entry["modules"]), found
    hub = ast.parse((tf / "transformers" / "integrations" / "hub_kernels.py").read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(hub) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "LayerRepository"]
    first = min(calls, key=lambda n: n.lineno)
    assert not {k.arg for k in first.keywords} & {"revision", "version"}
