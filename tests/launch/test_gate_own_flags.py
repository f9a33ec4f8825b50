"""SGLang 0.5.3's own --nsa-decode and --nsa-prefill (launch.json own_flag_choices, issue 16): the gate lists
--nsa-decode-backend and --nsa-prefill-backend (0.5.4-0.5.19), whose unique prefixes those names are, and read
`--nsa-decode fa3` on 0.5.3 as the abbreviated --nsa-decode-backend, which 0.5.3 lacks: a false refusal
('0.5.3 has no --nsa-decode-backend'). argparse matches an exact flag first, and abbreviations among the release's
own flags only, so on 0.5.3 these names (and --nsa-deco) are 0.5.3's flags, whose choices (NSA_CHOICES: no trtllm)
are checked; from 0.5.4 the same names abbreviate the -backend flags, read as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import gate_json

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The B200 case's facts with SGLang 0.5.3 and 0.5.9 installed instead."""
    out: dict[str, Path] = {}
    base = json.loads(B200.read_text())
    for version in ("0.5.3", "0.5.9"):
        doc = json.loads(json.dumps(base))
        doc["facts"]["packages"]["sglang"].update(version=version, dist_version=version)
        path = tmp_path_factory.mktemp("facts") / f"b200-{version}.json"
        path.write_text(json.dumps(doc))
        out[version] = path
    return out


def about(doc: dict[str, Any], word: str) -> list[tuple[str, str, str]]:
    """(feature, status, first message) of each reason or warning that mentions `word`."""
    out = []
    for key in ("reasons", "warnings"):
        for b in doc[key]:
            if word in json.dumps(b):
                first = (b.get("reasons") or [{}])[0].get("message", "")
                out.append((str(b["feature"]), str(b["status"]), str(first)))
    return out


def blocked(doc: dict[str, Any], word: str) -> list[tuple[str, str, str]]:
    return [x for x in about(doc, word) if x[1] != "note"]


def test_0_5_3s_own_nsa_flags_are_not_refused_as_the_missing_backend_flags(facts: dict[str, Path]) -> None:
    for args in (["--nsa-decode", "fa3"], ["--nsa-prefill", "flashmla_prefill"], ["--nsa-deco=tilelang"]):
        doc = gate_json(facts["0.5.3"], "--model-path", "m", *args, dry_run=True)
        assert blocked(doc, "nsa") == [], args
        assert any("declared by SGLang 0.5.3" in m for _, _, m in about(doc, "nsa")), args
    # the -backend flags themselves are still missing in 0.5.3
    doc = gate_json(facts["0.5.3"], "--model-path", "m", "--nsa-decode-backend", "fa3", dry_run=True)
    found = [(f, s) for f, s, _ in blocked(doc, "nsa")]
    assert ("--nsa-decode-backend", "blocked") in found
    # besides, the value's DSA kernel where the box fails it (igap13: fa3 has no kernel for this B200)
    assert all(f == "--nsa-decode-backend" or f.startswith("attention-dsa-") for f, _ in found), found


def test_a_value_outside_0_5_3s_choices_is_refused_as_argparse_does(facts: dict[str, Path]) -> None:
    doc = gate_json(facts["0.5.3"], "--model-path", "m", "--nsa-decode", "trtllm", dry_run=True)
    assert doc["decision"] == "refuse"
    got = blocked(doc, "--nsa-decode")
    assert [(f, s) for f, s, _ in got] == [("--nsa-decode", "blocked")]
    assert "invalid choice" in got[0][2] and "fa3" in got[0][2]


def test_from_0_5_4_the_names_abbreviate_the_backend_flags(facts: dict[str, Path]) -> None:
    doc = gate_json(facts["0.5.9"], "--model-path", "m", "--nsa-decode", "trtllm", dry_run=True)
    assert any(r["feature"] == "attention-dsa-trtllm" for r in doc["derived"]["required"])
    assert not any("declared by SGLang" in m for _, _, m in about(doc, "nsa"))
