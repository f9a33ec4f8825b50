"""transformers 4.51-4.56 import torchao on every SGLang launch too (ifc41, the forty-first fact-check sample's row t3;
stackcheck/verdicts/torchao_gate.py transformers_imports_torchao, manifests/checks.json torchao-import's rules).

transformers 4.51.0 - 4.56.2 run `from torchao.quantization import Int4WeightOnlyConfig` at module level of
modeling_utils.py where torchao >= 0.4.0 is installed (4.51.0 :52-53, 4.53.3 :49-50, 4.55.2 :50-51, 4.56.0 and 4.56.2
:128-129; 4.48.3, 4.49.0 and 4.50.3 have no such import; read in the wheels), and SGLang's model registry imports
modeling_utils on every launch. irev58 counted 4.57 alone (its quantizer_torchao.py:38-39), so SGLang 0.5.10 with
transformers 4.56.2, torchao 0.12.0 and torch 2.9.1, no --torchao-config, was allowed; `import torchao` 0.12.0 under
torch 2.9+ fails (prototype/inductor/int8_sdpa_lowering.py:6 imports torch._inductor.kernel.flex_attention, a module
torch 2.9.1 no longer has: read in both wheels) or aborts as its libraries load. And the rules of torchao-import
(private imports, built for torch 2.8) never took transformers' import at all: with transformers 4.56.2 or 4.57.1,
torchao 0.12.0 and torch 2.11 on SGLang 0.5.16 without the flag the gate allowed the launch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir
from launch.test_gate_irev58_torchao_via_transformers import _abort, _ctx, _facts, _refused_for_it

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
SITE = "/opt/venv/lib/python3.12/site-packages"


def _rules(doc: dict[str, Any], feature: str) -> list[str]:
    return [r.get("rule") for f in doc.get("reasons") or [] if f.get("feature") == feature for r in f["reasons"]]


@pytest.mark.parametrize("transformers", ["4.51.0", "4.53.3", "4.55.2", "4.56.2"])
def test_transformers_451_to_456_import_the_aborting_torchao_on_every_launch(tmp_path: Path, transformers: str) -> None:
    """SGLang 0.5.10, no --torchao-config, torchao 0.12.0 whose library resolves under torch 2.9.1: refused."""
    facts = _facts(tmp_path, transformers, True, sglang="0.5.10")
    doc = gate_json(facts, "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), dry_run=True)
    (abort,) = _abort(doc)
    assert abort["effect"] == "crash" and _refused_for_it(doc), abort
    assert f"transformers {transformers}" in abort["message"] and "modeling_utils.py" in abort["message"], abort
    assert "torchao-private-import-012" in _rules(doc, "torchao-import"), doc["reasons"]


def _box(tmp_path: Path, transformers: str, torch: str) -> Path:
    """h200-newest with SGLang 0.5.16, torch `torch`, torchao 0.12.0, transformers `transformers`, no kernel symbol
    section (the versions alone decide)."""
    doc = json.loads(H200.read_text())
    packages = doc["facts"]["packages"]
    packages["sglang"].update(version="0.5.16", dist_version="0.5.16")
    packages["torch"].update(version=f"{torch}+cu130", dist_version=torch)
    packages["torchao"] = {"installed": True, "version": "0.12.0", "location": SITE}
    packages["transformers"] = {"installed": True, "version": transformers, "location": SITE}
    doc["facts"].pop("kernel_symbols", None)
    path = tmp_path / f"box-{transformers}-{torch}.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("transformers", ["4.56.2", "4.57.1"])
def test_torchaos_private_import_is_judged_where_transformers_imports_it(tmp_path: Path, transformers: str) -> None:
    """SGLang 0.5.16 without --torchao-config: torchao 0.12.0 under torch 2.11.0 cannot be imported, and transformers
    4.56.2 / 4.57.1 import it on every launch: refused by torchao-private-import-012, whose message says why."""
    doc = gate_json(_box(tmp_path, transformers, "2.11.0"), "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
                    dry_run=True)  # fmt: skip
    assert doc["decision"] == "refuse", doc
    assert "torchao-private-import-012" in _rules(doc, "torchao-import"), doc["reasons"]


def test_a_transformers_before_451_leaves_the_launch_alone(tmp_path: Path) -> None:
    """transformers 4.50.3 imports no torchao (read in the wheel): without --torchao-config SGLang 0.5.16 never imports
    torchao 0.12.0, and the launch is allowed."""
    doc = gate_json(_box(tmp_path, "4.50.3", "2.11.0"), "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
                    dry_run=True)  # fmt: skip
    assert not _rules(doc, "torchao-import") and not _refused_for_it(doc), doc.get("reasons")


@pytest.mark.parametrize(
    ("transformers", "torchao", "imports"),
    [("4.50.3", "0.12.0", False), ("4.51.0", "0.12.0", True), ("4.56.2", "0.9.0", True), ("4.57.1", "0.12.0", True),
     ("5.0.0", "0.12.0", False), ("5.0.0", "0.15.0", True)],
)  # fmt: skip
def test_which_transformers_import_torchao(transformers: str, torchao: str, imports: bool) -> None:
    from stackcheck.verdicts.torchao_gate import transformers_imports_torchao

    got, why = transformers_imports_torchao(_ctx(transformers, torchao))
    assert got is imports, why
    if imports and transformers < "4.57":
        assert "modeling_utils.py" in why, why
