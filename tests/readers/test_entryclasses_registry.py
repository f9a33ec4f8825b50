"""The model registry reader against real SGLang wheels (registry tests: downloaded once into
tests/registry_wheels.py's cache, skipped offline): each release's sglang/srt/models/*.py extracted as installed
and read by stackcheck/readers/entryclasses.py; compared with an independent reading of the same files (a whole-file
`ast` walk: module-level `class` statements and imports, the EntryClass assignment's names), and the facts the
model-architecture check rests on: whether the release registers the Transformers fallback class
(TransformersForCausalLM: none in 0.4.0 and 0.4.6.post5, from 0.4.10 on), and architectures that arrive in a
known release (GptOssForCausalLM by 0.5.1, DeepseekV4ForCausalLM after 0.5.10). A few releases by default, every
cached one with STACKCHECK_REGISTRY_ALL=1."""

from __future__ import annotations

import ast
import shutil
import tempfile
from pathlib import Path

import pytest
from registry_wheels import CACHE, extract, fetch_wheel, run_all

from stackcheck.launch.preflight.architecture import check_architecture
from stackcheck.readers.entryclasses import read_registry
from stackcheck.readers.fsview import HostView

pytestmark = pytest.mark.registry

FEW = ["0.4.6.post5", "0.5.1", "0.5.10", "0.5.23"]
ALL = ["0.4.0", "0.4.6.post5", "0.4.10", "0.5.1", "0.5.5", "0.5.10", "0.5.15", "0.5.20", "0.5.23"]
PREFIX = "sglang/srt/models/"


def site_of(version: str) -> Path:
    """The release's models directory as installed, extracted once beside the wheel cache."""
    root = CACHE.parent / "models-tree" / version
    if not (root / PREFIX).is_dir():
        wheel = fetch_wheel("sglang", version)
        root.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{version}-"))
        extract(wheel, tmp, lambda n: n.startswith(PREFIX) and n.count("/") == 3 and not n.endswith("/"))
        try:
            tmp.rename(root)  # atomic: another run that got there first keeps its copy
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
    return root


def independent(models: Path) -> set[str]:
    out: set[str] = set()
    for f in sorted(models.glob("*.py")):
        if f.name == "__init__.py":
            continue
        tree = ast.parse(f.read_text(encoding="utf-8-sig"))
        classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        imported = {
            a.asname or a.name: a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names
        }
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EntryClass" for t in node.targets):
                elts = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
                for e in elts:
                    assert isinstance(e, ast.Name)
                    out.add(e.id if e.id in classes else imported[e.id])
    return out


@pytest.mark.parametrize("version", ALL if run_all() else FEW)
def test_reader_agrees_with_a_whole_file_reading(version: str) -> None:
    site = site_of(version)
    reg = read_registry(HostView(), str(site))
    assert reg.error is None and reg.unresolved == []
    assert set(reg.names) == independent(site / PREFIX)
    assert {"LlamaForCausalLM", "Qwen2ForCausalLM", "MixtralForCausalLM", "QuantMixtralForCausalLM"} <= set(reg.names)
    fallback = "TransformersForCausalLM" in reg.names
    assert fallback == (version not in ("0.4.0", "0.4.6.post5"))


@pytest.mark.parametrize(
    ("version", "arch", "status"),
    [
        ("0.4.6.post5", "GptOssForCausalLM", "fail"),  # not registered, no Transformers fallback: fails at load
        ("0.5.1", "GptOssForCausalLM", "ok"),
        ("0.5.10", "DeepseekV4ForCausalLM", "unknown"),  # not registered: the Transformers backend decides
        ("0.5.23", "DeepseekV4ForCausalLM", "ok"),
    ],
)
def test_verdicts_on_real_releases(version: str, arch: str, status: str) -> None:
    reg = read_registry(HostView(), str(site_of(version)))
    data = {"model": {"registry": {"fallback_class": "TransformersForCausalLM", "source": "s"}}}
    r = check_architecture("model", "m", [arch], reg, None, {}, {}, version, data)
    assert r.status == status, r.message
    assert r.observed["architectures"] == [arch] and r.observed["sglang"] == version


@pytest.mark.parametrize(("version", "status"), [("0.5.10", "unknown"), ("0.5.23", "ok")])
def test_embedding_gemma_on_real_releases_with_the_shipped_data(version: str, status: str) -> None:
    """EmbeddingGemma's config.json names Gemma3TextModel, which no release registers; 0.5.17 on look up
    EmbeddingGemmaModel for it (preflight.json model.registry.renames), which 0.5.23 registers."""
    from stackcheck.knowledge.loader import load

    data = load([], env={}).preflight
    config = {"architectures": ["Gemma3TextModel"], "model_type": "gemma3_text", "use_bidirectional_attention": True}
    reg = read_registry(HostView(), str(site_of(version)))
    assert "Gemma3TextModel" not in reg.names
    r = check_architecture("model", "m", ["Gemma3TextModel"], reg, None, {}, {}, version, data, config)
    assert r.status == status, r.message
