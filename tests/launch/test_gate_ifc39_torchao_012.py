"""ifc39 (the thirty-ninth fact-check sample, row t1): torchao 0.12 beside torch 2.9 or later (check torchao-import,
rule torchao-built-for-torch-28).

torchao 0.12.0's compiled libraries were built against torch 2.8 (its _C.abi3.so needs torch 2.8's
c10::cuda::SetDevice(signed char, bool)), and its __init__ loads every _C*.so under any torch (0.13.0 and later test
the torch version first). torchao's maintainers report that such a build aborts the process as it loads under torch
2.9+ (pytorch/ao PR #2908, issue #2901), which no try catches. SGLang 0.5.6 (torch 2.9.1) imports torchao on every
model load, so with torchao 0.12.0 the launch was allowed where its outcome is not known: now unknown (refused unless
--allow-unknown). torchao 0.9.0 (0.5.6's own pin) misses torch symbols under 2.9.1, so its load fails inside
torchao's try: not this rule."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, feature_rules, gate_json, model_dir, torchao_box

RULE = "torchao-built-for-torch-28"


def _facts(tmp_path: Path, sglang: str, torch: str, torchao: str) -> Path:
    return torchao_box(tmp_path, sglang, torch, torchao, "cu128")


def _results(doc: dict[str, Any]) -> dict[str, str]:
    return feature_rules(doc, "torchao-import", warnings=True)


def _gate(tmp_path: Path, facts: Path, *flags: str, allow_unknown: bool = False) -> dict[str, Any]:
    options = ["--allow-unknown"] if allow_unknown else []
    model = str(model_dir(tmp_path, "llama", LLAMA3))
    return gate_json(facts, "--model-path", model, *flags, dry_run=True, options=options)


@pytest.mark.parametrize(
    ("sglang", "torch", "flags"),
    [
        ("0.5.6", "2.9.1", ("--torchao-config", "fp8dq-per_row")),  # row t1
        ("0.5.6", "2.9.1", ()),  # 0.5.6 imports torchao on every model load
        ("0.5.10", "2.9.1", ("--torchao-config", "int8wo")),
        ("0.5.13", "2.11.0", ("--torchao-config", "int8wo")),
        ("0.5.13", "2.16.0", ("--torchao-config", "int8wo")),  # a torch no reading covers (igap30 read 2.15.0)
    ],
)
def test_torchao_012_under_torch_29_is_unknown_not_allowed(
    tmp_path: Path, sglang: str, torch: str, flags: tuple[str, ...]
) -> None:
    doc = _gate(tmp_path, _facts(tmp_path, sglang, torch, "0.12.0"), *flags)
    assert doc["decision"] != "allow", doc.get("reasons")
    results = _results(doc)
    if torch != "2.16.0":  # igap27/igap30: `import torchao` 0.12.0 fails under torch 2.9.1-2.15.0 (hiding this unknown)
        assert results.get("torchao-private-import-012") == "fail", doc.get("reasons")
    else:
        assert results.get(RULE) == "unknown", doc.get("reasons")


@pytest.mark.parametrize(
    ("sglang", "torch", "torchao", "flags"),
    [
        ("0.5.4", "2.8.0", "0.12.0", ()),  # built for this torch
        ("0.5.6", "2.9.1", "0.9.0", ("--torchao-config", "int8wo")),  # 0.5.6's pin: its load fails, caught
        ("0.5.6", "2.9.1", "0.13.0", ("--torchao-config", "int8wo")),  # skips its libraries under torch 2.9+
        ("0.5.10", "2.9.1", "0.12.0", ()),  # 0.5.9+ import torchao only for a non-empty --torchao-config
    ],
)
def test_other_pairs_are_not_this_rule(
    tmp_path: Path, sglang: str, torch: str, torchao: str, flags: tuple[str, ...]
) -> None:
    facts = _facts(tmp_path, sglang, torch, torchao)
    doc = json.loads(facts.read_text())  # (transformers 4.50.3 imports no torchao; 4.51+ do: ifc41)
    doc["facts"]["packages"]["transformers"] = {"installed": True, "version": "4.50.3"}
    facts.write_text(json.dumps(doc))
    doc = _gate(tmp_path, facts, *flags, allow_unknown=True)
    assert RULE not in _results(doc), doc.get("reasons")
