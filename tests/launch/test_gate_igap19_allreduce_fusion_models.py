"""igap19 (3): --enable-flashinfer-allreduce-fusion is judged by the model where the release's model never calls it.

SGLang 0.5.1-0.5.10 build FlashInfer's fused all-reduce workspace (the TRT-LLM comm module's JIT build, the CUDA IPC
buffers) lazily, the first time a layer takes the fused path: only LayerCommunicator (layers/communicator.py)
calls apply_flashinfer_allreduce_fusion / RMSNorm.forward_with_allreduce_fusion, and a model whose module (with the
sglang.srt.models modules it imports) never references the communicator never gets there: the flag is a no-op for
it, and the feature's rules (the comm module's majors, SM107, peer access) cannot fail it. From 0.5.11 the model
runner pre-initialises the workspace whenever the flag is on, whatever the model (kept). The releases that turn
the fusion on by themselves do so for communicator models only (launch.json refusals.auto model_features), which
stay judged without the flag. On the parent (4b195b7) the dropped cases fail."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, QWEN3_MOE, feature_rules, gate_checkpoint

FEATURE = "flashinfer-allreduce-fusion"
FLAG = "--enable-flashinfer-allreduce-fusion"
MIXED = {**LLAMA3, "architectures": ["LlamaForCausalLM", "Qwen3MoeForCausalLM"]}
QWEN2 = {**LLAMA3, "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _rules(release: str, cc: str, config: dict[str, Any], *flags: str) -> dict[str, str]:
    doc = gate_checkpoint(Path(tempfile.mkdtemp()), release, cc, config, FLAG, *flags)
    return feature_rules(doc, FEATURE)


@pytest.mark.parametrize(
    ("release", "cc", "config"),
    [("0.5.5", "8.0", LLAMA3), ("0.5.10", "10.7", LLAMA3), ("0.5.8", "10.7", QWEN2)],
)
def test_a_model_that_never_calls_the_fused_path_is_not_judged_on_it(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any]
) -> None:
    assert _rules(release, cc, config) == {}


@pytest.mark.parametrize(
    ("release", "cc", "config", "flags", "rule"),
    [
        ("0.5.5", "8.0", QWEN3_MOE, (), "flashinfer-jit-majors-early"),  # a communicator model
        ("0.5.10", "10.7", QWEN3_MOE, (), "sm107-kernel"),
        ("0.5.11", "10.7", LLAMA3, (), "sm107-kernel"),  # the workspace pre-initialised for every model
        ("0.5.5", "8.0", LLAMA3, ("--json-model-override-args", "{}"), "flashinfer-jit-majors-early"),
        ("0.5.5", "8.0", MIXED, (), "flashinfer-jit-majors-early"),  # one architecture calls it
    ],
)
def test_the_flag_stays_judged_where_the_path_may_run(
    tmp_path: Path, release: str, cc: str, config: dict[str, Any], flags: tuple[str, ...], rule: str
) -> None:
    assert rule in _rules(release, cc, config, *flags)


_MARKS = (
    "layers.communicator",
    "LayerCommunicator",
    "CommunicateWith",
    "flashinfer_comm_fusion",
    "apply_flashinfer_allreduce_fusion",
    "forward_with_allreduce_fusion",
    "flashinfer_allreduce_residual_rmsnorm",
)


def _calling_entry_classes(texts: dict[str, str]) -> tuple[set[str], set[str]]:
    """(every EntryClass name, those whose model module or a sglang.srt.models module it imports, transitively,
    references the communicator or the fused path) of one wheel's sglang/srt/models/ files."""
    import ast

    mods = {n[:-3].replace("/", "."): t for n, t in texts.items()}
    imports: dict[str, set[str]] = {}
    entries: dict[str, list[str]] = {}
    for name, text in mods.items():
        tree = ast.parse(text.lstrip("\ufeff"))
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                base = name.split(".")[: -node.level] if node.level else []
                mod = ".".join([*base, node.module])
                found |= {mod, *(f"{mod}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
        imports[name] = {m for m in found if m in mods or m.rsplit(".", 1)[0] in mods}
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "EntryClass" for t in node.targets):
                items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                entries[name] = [i.id for i in items if isinstance(i, ast.Name)]

    def reaches(name: str, seen: set[str]) -> bool:
        if name in seen:
            return False
        seen.add(name)
        if any(m in mods[name] for m in _MARKS):
            return True
        return any(reaches(m if m in mods else m.rsplit(".", 1)[0], seen) for m in imports[name])

    every = {e for es in entries.values() for e in es}
    return every, {e for n, es in entries.items() if reaches(n, set()) for e in es}


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.1", "0.5.5", "0.5.10", "0.5.11"])
def test_the_listed_architectures_never_reach_the_fused_path_in_the_wheels(version: str) -> None:
    from registry_wheels import fetch_wheel, read_texts

    from stackcheck.facts.versions import version_in
    from stackcheck.knowledge.loader import load

    option = next(o for o in load([], env={}).launch["options"] if o["flag"] == FLAG)
    entry = option["idle_for_models"][0]
    texts = read_texts(fetch_wheel("sglang", version), lambda n: n.startswith("sglang/srt/") and n.endswith(".py"))
    runner = texts.get("sglang/srt/model_executor/model_runner.py", "")
    pre_initialised = "self._pre_initialize_flashinfer_allreduce_workspace()" in runner
    assert pre_initialised == (version_in(version, entry["versions"]) is not True), version
    if pre_initialised:
        return
    models = {n: t for n, t in texts.items() if n.startswith("sglang/srt/models/")}
    every, calling = _calling_entry_classes(models)
    listed = set(entry["architectures"])
    assert listed <= every - calling, sorted(listed & calling) or sorted(listed - every)
    # outside the models, only the communicator's own modules enter the fused path
    callers = {
        n for n, t in texts.items() if "forward_with_allreduce_fusion(" in t and not n.startswith("sglang/srt/models/")
    }
    assert callers <= {"sglang/srt/layers/communicator.py", "sglang/srt/layers/layernorm.py"}, callers
