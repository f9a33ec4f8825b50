"""Every other choice flag launch.json lists, per release (launch.json release_choices; the lists are read from the
wheels by tests/launch/test_release_choices_registry.py): --quantization, --sampling-backend,
--speculative-algorithm, --fp8-gemm-backend and the four NSA/DSA kernel flags listed the union of 0.5.1-0.5.23's
choices, so a value newer (or older) than the installed release passed the gate while SGLang's argparse exits with
'invalid choice' (exit status 2). Now blocked where no plugin can add it (before 0.5.11, or a list no hook extends),
unknown where one can, and not judged where the release offers it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir
from gate_cli import choice_problems as _problems

from stackcheck.knowledge.loader import load

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


@pytest.mark.parametrize(
    ("flag", "value", "old", "new"),
    [
        ("--quantization", "compressed-tensors", "0.5.3", "0.5.4"),
        ("--quantization", "modelopt_fp8", "0.5.1", "0.5.4"),
        ("--quantization", "mxfp8", "0.5.8", "0.5.9"),
        ("--quantization", "modelslim", "0.5.6", "0.5.7"),
        ("--quantization", "quark", "0.5.10", "0.5.12"),
        ("--sampling-backend", "ascend", "0.5.5", "0.5.6"),
        ("--speculative-algorithm", "NGRAM", "0.5.2", "0.5.3"),
        ("--speculative-algorithm", "STANDALONE", "0.5.1", "0.5.2"),
        ("--fp8-gemm-backend", "flashinfer_deepgemm", "0.5.8", "0.5.9"),
        ("--fp8-gemm-backend", "flashinfer_cutlass", "0.5.9", "0.5.10"),
        ("--nsa-prefill-backend", "flashmla_auto", "0.5.4", "0.5.5"),
        ("--nsa-decode-backend", "trtllm", "0.5.8", "0.5.9"),
    ],
)
def test_a_value_newer_than_the_release_is_blocked_before_plugins_load(
    mapping: dict[str, Any], flag: str, value: str, old: str, new: str
) -> None:
    assert _problems(mapping, old, flag, value) == [(flag, "blocked", value)]
    assert _problems(mapping, new, flag, value) == []


def test_lists_no_hook_extends_stay_blocked_after_0_5_11(mapping: dict[str, Any]) -> None:
    """The NSA/DSA lists and the sampling list have no add_*_choices hook: a plugin cannot add a value."""
    assert _problems(mapping, "0.5.13", "--dsa-decode-backend", "trtllm") == []
    assert _problems(mapping, "0.5.11", "--nsa-decode-backend", "trtllm") == []
    assert _problems(mapping, "0.5.5", "--dsa-prefill-backend", "trtllm") == []  # the flag is release_flags' matter
    assert _problems(mapping, "0.5.23", "--sampling-backend", "ascend") == []


def test_hooked_lists_are_unknown_from_0_5_11_and_removed_values_are_refused(mapping: dict[str, Any]) -> None:
    # quark joins in 0.5.12; 0.5.11 loads plugins first and offers add_quantization_method_choices
    assert _problems(mapping, "0.5.11", "--quantization", "quark") == [("--quantization", "unknown", "quark")]
    # marlin leaves the list in 0.5.20, qoq in 0.5.16
    assert _problems(mapping, "0.5.20", "--quantization", "marlin") == [("--quantization", "unknown", "marlin")]
    assert _problems(mapping, "0.5.19", "--quantization", "marlin") == []
    assert _problems(mapping, "0.5.16", "--quantization", "qoq") == [("--quantization", "unknown", "qoq")]
    assert _problems(mapping, "0.5.17", "--fp8-gemm-backend", "flashinfer_cutedsl") == [
        ("--fp8-gemm-backend", "unknown", "flashinfer_cutedsl")
    ]
    assert _problems(mapping, "0.5.18", "--fp8-gemm-backend", "flashinfer_cutedsl") == []


def test_a_free_speculative_algorithm_from_0_5_12_is_not_judged_here(mapping: dict[str, Any]) -> None:
    """From 0.5.12 the parser takes any name (SpeculativeAlgorithm.register): argparse refuses none."""
    assert _problems(mapping, "0.5.12", "--speculative-algorithm", "STANDALONE") == []
    assert _problems(mapping, "0.5.9", "--quantization", "fp8", "--sampling-backend", "pytorch") == []
    assert _problems(mapping, "0.5.9", "--quantization", "bogus") == []  # parse_flags' unknown


def test_the_gate_refuses_quantization_mxfp8_on_sglang_0_5_8(tmp_path: Path) -> None:
    doc = json.loads(B200.read_text())
    doc["facts"]["packages"]["sglang"].update(version="0.5.8", dist_version="0.5.8")
    facts = tmp_path / "b200-0.5.8.json"
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    got = gate_json(facts, "--model-path", str(model), "--quantization", "mxfp8", dry_run=True)
    assert got["decision"] == "refuse"
    blocked = [r for r in got["reasons"] if r.get("feature") == "--quantization" and r.get("status") == "blocked"]
    assert blocked and "invalid choice" in json.dumps(blocked), json.dumps(got["reasons"])[:800]
