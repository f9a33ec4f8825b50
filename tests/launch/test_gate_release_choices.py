"""The attention backends each SGLang release offers (launch.json release_choices; found by the tenth fact-check
sample, tests/realworld/FACTCHECK.md): launch.json's --attention-backend lists the union of 0.5.1-0.5.23's
choices, so `--attention-backend cutedsl_mla` (0.5.13 on) passed the gate on 0.5.9, whose parser exits with
'invalid choice'. A value the installed release does not offer is now blocked (0.5.1-0.5.10) or unknown (0.5.11
on: a plugin, loaded before the parser, may add a backend), for --attention-backend and the prefill/decode flags
that take the same list."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def _problems(mapping: dict[str, Any], version: str, *flags: str) -> list[tuple[str, str, str | None]]:
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", *flags], mapping, {})
    return [(p.subject, p.status, p.observed) for p in gate.release_choice_problems(d, mapping, version)]


def test_a_backend_the_release_does_not_offer_is_blocked_up_to_0_5_10(mapping: dict[str, Any]) -> None:
    assert _problems(mapping, "0.5.9", "--attention-backend", "cutedsl_mla") == [
        ("--attention-backend", "blocked", "cutedsl_mla")
    ]
    assert _problems(mapping, "0.5.2", "--decode-attention-backend", "fa4") == [
        ("--decode-attention-backend", "blocked", "fa4")
    ]
    assert _problems(mapping, "0.5.3", "--attention-backend", "fa4") == []
    assert _problems(mapping, "0.5.9", "--attention-backend", "triton") == []


def test_from_0_5_11_a_plugin_may_add_one_so_it_is_unknown(mapping: dict[str, Any]) -> None:
    """cutlass_mla and dual_chunk_flash_attn left the list in 0.5.20; qsa joined it there."""
    assert _problems(mapping, "0.5.20", "--prefill-attention-backend", "dual_chunk_flash_attn") == [
        ("--prefill-attention-backend", "unknown", "dual_chunk_flash_attn")
    ]
    assert _problems(mapping, "0.5.19", "--attention-backend", "cutlass_mla") == []
    assert _problems(mapping, "0.5.11", "--attention-backend", "qsa") == [("--attention-backend", "unknown", "qsa")]
    assert _problems(mapping, "0.5.23", "--attention-backend", "qsa") == []


def test_values_no_release_offers_and_unlisted_releases_are_left_to_the_other_checks(mapping: dict[str, Any]) -> None:
    assert _problems(mapping, "0.5.9", "--attention-backend", "bogus") == []  # parse_flags' unknown
    assert _problems(mapping, "0.5.30", "--attention-backend", "cutedsl_mla") == []  # newer than the data


def test_the_gate_refuses_cutedsl_mla_on_sglang_0_5_9(tmp_path: Path) -> None:
    doc = json.loads(B200.read_text())
    doc["facts"]["packages"]["sglang"].update(version="0.5.9", dist_version="0.5.9")
    facts = tmp_path / "b200-0.5.9.json"
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    got = gate_json(facts, "--model-path", str(model), "--attention-backend", "cutedsl_mla", dry_run=True)
    assert got["decision"] == "refuse"
    blocked = [r for r in got["reasons"] if r.get("feature") == "--attention-backend"]
    assert blocked and blocked[0]["status"] == "blocked", json.dumps(got["reasons"])[:800]
    assert "invalid choice" in json.dumps(blocked)
