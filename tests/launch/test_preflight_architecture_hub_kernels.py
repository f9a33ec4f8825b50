"""igap41 (issue 16): transformers 4.55's hub-kernel table beside kernels 0.15.1+ fails only the SGLang model
modules whose imports reach a transformers modeling module that takes use_kernel_forward_from_hub; SGLang 0.5.1's
registry catches the error and drops the module, so the served architecture decides (model-architecture, manifests
preflight.json model.registry.import_failures). Before, Mistral-7B (MistralForCausalLM, sglang/srt/models/mistral.py,
which imports transformers' modeling_mistral3) on SGLang 0.5.1 with transformers 4.55.2 and kernels 0.15.1 passed:
its module was read as registering the class, and the load fails with the table's ValueError. The registry test
re-reads the entry's modules from the real wheels (an import closure read with ast)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import facts_of, load_doc

from stackcheck.knowledge.loader import load
from stackcheck.launch import preflight
from stackcheck.launch.preflight.architecture import check_architecture
from stackcheck.readers.entryclasses import Registry
from stackcheck.readers.fsview import HostView

REG = Registry(
    {"MistralForCausalLM": "mistral", "LlavaLlamaForCausalLM": "llava", "Qwen2_5_VLForConditionalGeneration":
     "qwen2_5_vl", "LlamaForCausalLM": "llama", "TransformersForCausalLM": "transformers"}, [], 5,
)  # fmt: skip


@pytest.fixture(scope="module")
def data() -> Any:
    return load([], env={}).preflight


def _packages(transformers: str | None = "4.55.2", kernels: str | None = "0.15.1") -> dict[str, Any]:
    out: dict[str, Any] = {"sglang": {"installed": True, "version": "0.5.1"}}
    out["transformers"] = {"installed": True, "version": transformers} if transformers else {"installed": False}
    out["kernels"] = {"installed": True, "version": kernels} if kernels else {"installed": False}
    return out


def verdict(data: Any, arch: str, packages: Any, sglang: str | None = "0.5.1", config: Any = None) -> Any:
    cfg = config if config is not None else {"architectures": [arch]}
    return check_architecture("model", "m", [arch], REG, None, {}, {}, sglang, data, cfg, packages)


def test_a_dropped_module_whose_fallback_imports_the_table_fails(data: Any) -> None:
    r = verdict(data, "MistralForCausalLM", _packages())
    assert r.status == "fail", r.message
    assert "sglang/srt/models/mistral.py" in r.message and "modeling_mistral3" in r.message, r.message
    assert "Either a revision or a version must be specified." in r.message and "kernels<0.15.1" in r.message
    assert any("4.55.0-4.55.4" in s["title"] for s in r.source), r.source


def test_an_architecture_transformers_lacks_fails_unless_auto_map_names_custom_code(data: Any) -> None:
    r = verdict(data, "LlavaLlamaForCausalLM", _packages())
    assert r.status == "fail" and "Cannot find model module" in r.message, r.message
    custom = {"architectures": ["LlavaLlamaForCausalLM"], "auto_map": {"AutoModel": "m--modeling.X"}}
    assert verdict(data, "LlavaLlamaForCausalLM", _packages(), config=custom).status == "unknown"


def test_a_dropped_module_whose_fallback_is_the_transformers_backend_is_unknown(data: Any) -> None:
    r = verdict(data, "Qwen2_5_VLForConditionalGeneration", _packages())
    assert r.status == "unknown" and "Transformers backend" in r.message, r.message


@pytest.mark.parametrize(
    ("packages", "sglang", "status"),
    [
        (_packages(), "0.5.1", "ok"),  # llama.py imports no transformers modeling module that takes the table
        (_packages(kernels="0.14.1"), "0.5.1", "ok"),  # kernels before 0.15.1 accepts bare entries
        (_packages(kernels=None), "0.5.1", "ok"),  # kernels not installed: transformers skips the table
        (_packages(transformers="4.56.1"), "0.5.1", "ok"),  # not this entry's (check kernels-needs-version-...)
        ({"sglang": {"installed": True, "version": "0.5.1"}}, "0.5.1", "ok"),  # an older list: not named
        (_packages(), "0.5.0rc2", "unknown"),  # an SGLang release whose modules were not read
        (_packages(), None, "unknown"),
        (_packages(kernels="0.15.1.dev0"), "0.5.1", "unknown"),  # 0.15.1's code or 0.14.1's
    ],
)
def test_llama_and_what_the_entry_does_not_cover(data: Any, packages: Any, sglang: str | None, status: str) -> None:
    r = verdict(data, "LlamaForCausalLM", packages, sglang=sglang)
    assert r.status == status, r.message


def test_the_runner_passes_the_facts_packages(tmp_path: Path, data: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    models = tmp_path / "site" / "sglang" / "srt" / "models"
    models.mkdir(parents=True)
    (models / "mistral.py").write_text("class MistralForCausalLM:\n    pass\n\n\nEntryClass = [MistralForCausalLM]\n")
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"architectures": ["MistralForCausalLM"], "model_type": "mistral"}))
    facts = facts_of(load_doc("h200-1x.json"))
    facts["packages"] = {**_packages(), "sglang": {"installed": True, "version": "0.5.1",
                                                   "location": str(tmp_path / "site")}}  # fmt: skip
    inp = preflight.Inputs(
        options={"--model-path": "m"}, env={}, facts=facts, data=data, view=HostView(), cwd=str(tmp_path),
        home=str(tmp_path / "home"), sglang_version="0.5.1",
        readings=preflight.Readings(search_dirs=[str(tmp_path / "site")]),
    )  # fmt: skip
    (r,) = [r for r in preflight.run(inp).results if r.check == "model-architecture"]
    assert r.status == "fail" and "mistral.py" in r.message, r.message


@pytest.fixture(scope="module")
def transformers_455(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from registry_wheels import extract, fetch_wheel

    return extract(fetch_wheel("transformers", "4.55.2"), tmp_path_factory.mktemp("tf"),
                   lambda n: n.startswith("transformers/") and n.endswith(".py"))  # fmt: skip


@pytest.mark.registry
@pytest.mark.parametrize("sglang", ["0.5.1", "0.5.1.post3"])
def test_real_wheels_drop_exactly_the_entrys_modules(sglang: str, tmp_path: Path, transformers_455: Path) -> None:
    """Every sglang/srt/models module of the real wheel whose module-level imports (ast, over sglang and transformers
    4.55.2) reach transformers/integrations/hub_kernels.py is one the entry names, and no other."""
    from import_closure import modules_reaching
    from registry_wheels import extract, fetch_wheel

    sg = extract(
        fetch_wheel("sglang", sglang), tmp_path / "sg", lambda n: n.startswith("sglang/") and n.endswith(".py")
    )
    entry = load([], env={}).preflight["model"]["registry"]["import_failures"][0]
    found = modules_reaching(sg, transformers_455, "transformers.integrations.hub_kernels")
    assert sorted(found) == sorted(entry["modules"]), found
    assert found["mistral"][1] == "transformers.models.mistral3.modeling_mistral3", found["mistral"]
