"""igap27 (issue 16, a false pass found on the lent H100): `import torchao` itself fails where torchao imports a
private torch module the installed torch no longer (or not yet) has (check torchao-import, rules
torchao-private-import-012 and -014; the matrix in manifests/checks.json, re-derived from the real wheels by
test_gate_torchao_private_import_registry.py).

On the H100 (torch 2.11.0+cu130) `import torchao` 0.12.0 ended with "No module named
'torch._inductor.kernel.flex_attention'" (its prototype/inductor/int8_sdpa_lowering.py:6, reached from
torchao/__init__.py; torch 2.9 moved the module into torch/_inductor/kernel/flex/), while stackcheck judged only
torchao's compiled libraries: with --allow-unknown the launch was allowed. torchao 0.14.0 / 0.14.1 import
torch._inductor.custom_graph_pass (fx_passes/da8w4_concat_linear_fusion_cpu.py:10), which torch 2.5 lacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, ROOT, feature_rules, gate_json, model_dir, torchao_box


def _facts(tmp_path: Path, sglang: str, torch: str, torchao: str) -> Path:
    return torchao_box(tmp_path, sglang, torch, torchao, "cu130")


def _results(doc: dict[str, Any]) -> dict[str, str]:
    return feature_rules(doc, "torchao-import", warnings=True)


def _gate(tmp_path: Path, sglang: str, torch: str, torchao: str, *flags: str) -> dict[str, Any]:
    model = str(model_dir(tmp_path, "llama", LLAMA3))
    facts = _facts(tmp_path, sglang, torch, torchao)
    return gate_json(facts, "--model-path", model, *flags, dry_run=True, options=["--allow-unknown"])


@pytest.mark.parametrize(
    ("sglang", "torch", "torchao", "flags", "rule"),
    [
        ("0.5.6", "2.11.0", "0.12.0", (), "torchao-private-import-012"),  # the H100's pair; 0.5.6 imports torchao
        ("0.5.13", "2.11.0", "0.12.0", ("--torchao-config", "int8wo"), "torchao-private-import-012"),
        ("0.5.6", "2.10.0", "0.12.0", ("--torchao-config", "fp8dq-per_row"), "torchao-private-import-012"),
        ("0.5.8", "2.14.1", "0.12.0", (), "torchao-private-import-012"),
        ("0.5.8", "2.15.0", "0.12.0", (), "torchao-private-import-012"),  # igap30: the 2.15.0 wheel, read
        ("0.5.2", "2.5.1", "0.14.1", (), "torchao-private-import-014"),
        ("0.5.2", "2.5.1", "0.14.0", ("--torchao-config", "int8wo"), "torchao-private-import-014"),
    ],
)
def test_a_torchao_that_cannot_import_is_refused(
    tmp_path: Path, sglang: str, torch: str, torchao: str, flags: tuple[str, ...], rule: str
) -> None:
    doc = _gate(tmp_path, sglang, torch, torchao, *flags)
    assert doc["decision"] != "allow", doc.get("reasons")
    assert _results(doc).get(rule) == "fail", _results(doc)
    text = json.dumps(doc)
    assert ("flex_attention" if rule.endswith("012") else "custom_graph_pass") in text


@pytest.mark.parametrize(
    ("sglang", "torch", "torchao", "flags"),
    [
        ("0.5.6", "2.11.0", "0.13.0", ()),  # imported on the H100
        ("0.5.4", "2.8.0", "0.12.0", ()),  # torch 2.8 still has torch/_inductor/kernel/flex_attention.py
        ("0.5.2", "2.6.0", "0.14.1", ()),  # torch 2.6 has torch/_inductor/custom_graph_pass.py
        ("0.5.6", "2.9.1", "0.15.0", ("--torchao-config", "int8wo")),
    ],
)
def test_pairs_that_import_pass(tmp_path: Path, sglang: str, torch: str, torchao: str, flags: tuple[str, ...]) -> None:
    results = _results(_gate(tmp_path, sglang, torch, torchao, *flags))
    assert not any(results.get(r) == "fail" for r in ("torchao-private-import-012", "torchao-private-import-014"))


@pytest.mark.parametrize(("transformers", "imports"), [("4.50.3", False), ("4.56.2", True), ("4.57.1", True)])
def test_no_import_no_rule(tmp_path: Path, transformers: str, imports: bool) -> None:
    """SGLang 0.5.9-0.5.17 import torchao only for a non-empty --torchao-config, but transformers 4.51-4.57 import it on
    every launch (ifc41: 4.56.2 modeling_utils.py:128-129, 4.57.1 quantizer_torchao.py:38-39)."""
    facts = _facts(tmp_path, "0.5.10", "2.11.0", "0.12.0")
    doc = json.loads(facts.read_text())
    doc["facts"]["packages"]["transformers"] = {"installed": True, "version": transformers}
    facts.write_text(json.dumps(doc))
    model = str(model_dir(tmp_path, "llama", LLAMA3))
    results = _results(gate_json(facts, "--model-path", model, dry_run=True, options=["--allow-unknown"]))
    assert (results.get("torchao-private-import-012") == "fail") is imports, results


def _bench() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("torchao_gate_proof", ROOT / "bench" / "torchao_gate_proof.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("torchao", "torch", "line", "load", "predicted", "observed"),
    [
        ("0.12.0", "2.11.0+cu130", "IMPORT_ERROR ModuleNotFoundError No module named 'x'", "some-failed",
         "import-failed", "import-failed"),
        ("0.13.0", "2.11.0+cu130", "IMPORTED 0.13.0", "some-failed", "imported", "imported"),
        ("0.14.1", "2.5.1+cu124", "", "abort", "import-failed", "abort"),
        ("0.12.0", "2.8.0+cu128", "IMPORTED 0.12.0", "all-loaded", "imported", "imported"),
    ],
)  # fmt: skip
def test_the_bench_compares_the_import(
    torchao: str, torch: str, line: str, load: str, predicted: str, observed: str
) -> None:
    """bench/torchao_gate_proof.py's verdict on the Python import: predicted from the manifest's rules, observed
    from the child's last IMPORTED / IMPORT_ERROR line (the lead re-runs it on the GPU box)."""
    bench = _bench()
    assert bench._predict_import(torchao, torch)[0] == predicted
    assert bench._observe_import({"import_line": line}, load) == observed
