"""The choice flags launch.json listed no choices for (launch.json release_choices with `every_value`, read from every
SGLang wheel 0.5.1-0.5.23 by tests/launch/test_release_choices_more_registry.py): --tool-call-parser,
--reasoning-parser, --load-format, --grammar-backend, --disaggregation-mode, --disaggregation-transfer-backend,
--lora-backend and the other `choices=` flags of the releases' parsers. A value the installed release's parser does
not offer (a parser newer than the release, a misspelt name) passed the gate while SGLang's argparse exits with
'invalid choice' (exit status 2). Now blocked where no plugin can add it (before 0.5.11, or a list nothing
extends), unknown where one can (a registered parser, an add_*_choices hook), and not judged where the release
offers it or does not give the flag choices."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir
from gate_cli import choice_problems as _problems

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

ROOT = Path(__file__).resolve().parent.parent.parent
B200 = ROOT / "tests" / "cases" / "b200" / "facts.json"  # SGLang 0.5.20, cc 10.0


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


@pytest.mark.parametrize(
    ("flag", "value", "old", "new"),
    [
        ("--tool-call-parser", "deepseekv31", "0.5.1", "0.5.1.post3"),
        ("--tool-call-parser", "glm", "0.5.3", "0.5.4"),
        ("--tool-call-parser", "minimax-m2", "0.5.4", "0.5.5"),
        ("--tool-call-parser", "deepseekv32", "0.5.5", "0.5.6"),
        ("--tool-call-parser", "glm47", "0.5.6", "0.5.7"),
        ("--reasoning-parser", "kimi_k2", "0.5.4", "0.5.5"),
        ("--reasoning-parser", "nano_v3", "0.5.6", "0.5.7"),
        ("--reasoning-parser", "nemotron_3", "0.5.9", "0.5.10"),
        ("--load-format", "remote_instance", "0.5.2", "0.5.3"),
        ("--load-format", "fastsafetensors", "0.5.6", "0.5.7"),
        ("--load-format", "runai_streamer", "0.5.9", "0.5.10"),
        ("--disaggregation-transfer-backend", "fake", "0.5.1.post3", "0.5.2"),
        ("--disaggregation-transfer-backend", "mori", "0.5.8", "0.5.9"),
        ("--lora-backend", "torch_native", "0.5.6", "0.5.7"),
        ("--schedule-policy", "routing-key", "0.5.7", "0.5.8"),
        ("--mm-attention-backend", "fa4", "0.5.8", "0.5.9"),
        ("--hicache-mem-layout", "page_head", "0.5.5", "0.5.6"),
    ],
)
def test_a_value_newer_than_the_release_is_blocked_before_plugins_load(
    mapping: dict[str, Any], flag: str, value: str, old: str, new: str
) -> None:
    assert _problems(mapping, old, flag, value) == [(flag, "blocked", value)]
    assert _problems(mapping, new, flag, value) == []


def test_a_misspelt_value_is_judged_too(mapping: dict[str, Any]) -> None:
    """The runs name every value the parser accepts (every_value): a name no release offers is refused as well."""
    assert _problems(mapping, "0.5.9", "--tool-call-parser", "qwen3") == [("--tool-call-parser", "blocked", "qwen3")]
    assert _problems(mapping, "0.5.9", "--grammar-backend", "xgramar") == [("--grammar-backend", "blocked", "xgramar")]
    # no hook or registry extends these lists: blocked after 0.5.11 as well
    assert _problems(mapping, "0.5.23", "--disaggregation-mode", "prefil") == [
        ("--disaggregation-mode", "blocked", "prefil")
    ]
    assert _problems(mapping, "0.5.22", "--lora-backend", "triton_v2") == [("--lora-backend", "blocked", "triton_v2")]
    assert _problems(mapping, "0.5.23", "--lora-backend", "triton_v2") == []
    assert _problems(mapping, "0.5.23", "--dtype", "bf16") == [("--dtype", "blocked", "bf16")]


def test_registries_and_hooked_lists_are_unknown_once_plugins_load(mapping: dict[str, Any]) -> None:
    """From 0.5.11 the launcher loads plugins before it parses: a plugin may register a parser or extend a list."""
    assert _problems(mapping, "0.5.11", "--tool-call-parser", "auto") == [("--tool-call-parser", "unknown", "auto")]
    assert _problems(mapping, "0.5.12", "--tool-call-parser", "auto") == []
    assert _problems(mapping, "0.5.10", "--reasoning-parser", "auto") == [("--reasoning-parser", "blocked", "auto")]
    assert _problems(mapping, "0.5.11", "--reasoning-parser", "deepseek-v4") == [
        ("--reasoning-parser", "unknown", "deepseek-v4")
    ]
    assert _problems(mapping, "0.5.16", "--load-format", "presharded") == [("--load-format", "unknown", "presharded")]
    assert _problems(mapping, "0.5.20", "--grammar-backend", "xgramar") == [("--grammar-backend", "unknown", "xgramar")]
    # add_linear_attn_kernel_backend_choices comes in 0.5.12: 0.5.11 loads plugins, but none can extend that list
    assert _problems(mapping, "0.5.11", "--linear-attn-backend", "flashkda") == [
        ("--linear-attn-backend", "blocked", "flashkda")
    ]
    assert _problems(mapping, "0.5.14", "--linear-attn-backend", "flashkda") == [
        ("--linear-attn-backend", "unknown", "flashkda")
    ]
    assert _problems(mapping, "0.5.15", "--linear-attn-backend", "flashkda") == []
    # an option launch.json lists without choices (--rl-on-policy-target) is judged from the runs
    assert _problems(mapping, "0.5.9", "--rl-on-policy-target", "megatron") == [
        ("--rl-on-policy-target", "blocked", "megatron")
    ]
    assert _problems(mapping, "0.5.12", "--rl-on-policy-target", "megatron") == [
        ("--rl-on-policy-target", "unknown", "megatron")
    ]


def test_spellings_and_releases_without_choices(mapping: dict[str, Any]) -> None:
    # argparse's abbreviation and the --flag=value form
    assert _problems(mapping, "0.5.3", "--tool-call", "glm") == [("--tool-call-parser", "blocked", "glm")]
    assert _problems(mapping, "0.5.3", "--tool-call-parser=glm") == [("--tool-call-parser", "blocked", "glm")]
    assert _problems(mapping, "0.5.3", "--tool-call-parser", "qwen25", "--reasoning-parser", "qwen3") == []
    # --lora-backend has no choices in 0.5.1-0.5.2 (any string parses): no run, not judged
    assert _problems(mapping, "0.5.2", "--lora-backend", "csgmv") == []
    # after "--" nothing is the server's flag
    assert _problems(mapping, "0.5.3", "--", "--tool-call-parser", "glm") == []


def test_the_gate_refuses_a_tool_call_parser_newer_than_sglang_0_5_6(tmp_path: Path) -> None:
    doc = json.loads(B200.read_text())
    doc["facts"]["packages"]["sglang"].update(version="0.5.6", dist_version="0.5.6")
    facts = tmp_path / "b200-0.5.6.json"
    facts.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    got = gate_json(facts, "--model-path", str(model), "--tool-call-parser", "glm47", dry_run=True)
    assert got["decision"] == "refuse"
    blocked = [r for r in got["reasons"] if r.get("feature") == "--tool-call-parser" and r.get("status") == "blocked"]
    assert blocked and "invalid choice" in json.dumps(blocked), json.dumps(got["reasons"])[:800]
    ok = gate_json(facts, "--model-path", str(model), "--tool-call-parser", "glm45", dry_run=True)
    assert not [r for r in ok["reasons"] if r.get("feature") == "--tool-call-parser"], json.dumps(ok["reasons"])[:800]


def test_runs_are_found_by_release_place_as_version_in_finds_them(mapping: dict[str, Any]) -> None:
    """release_choice_problems finds a run ">=A,<=B" by the releases' places in release_flags: that list must be
    in release order, and the place lookup must give version_in's run for every listed release and spec."""
    from stackcheck.facts.versions import version_in

    releases = [str(r) for r in mapping["release_flags"]["releases"]]
    # (">=": PEP 440's ">0.5.1" leaves out 0.5.1.post3)
    assert all(version_in(b, f">={a}") is True and a != b for a, b in itertools.pairwise(releases))
    pos = gate._positions(releases)
    for spec in mapping["release_choices"]:
        for version in [*releases, "0.5.9+cu128", "0.5.24", "0.5.1.post1"]:
            want = next((r for r in spec["runs"] if version_in(version, r["versions"]) is True), None)
            assert gate._choice_run(version, spec["runs"], pos) is want, (spec["flags"], version)


def test_a_release_whose_flags_are_not_known_reads_no_listed_flag_as_an_abbreviation(mapping: dict[str, Any]) -> None:
    """--log-requests, --ep and --speculative-draft-model are flags of their own that a longer listed flag starts
    with: for a release release_flags lists they are declared (not abbreviations); for one it does not list
    (a local build, 0.5.9+cu128) they are flags of a listed release (gate.reading_flags), so not read as
    abbreviations either. A prefix that is no listed release's flag is read as the flag it abbreviates, as
    argparse reads it (the parent read only the full spelling there: --tool-call glm47 passed on a 0.5.6 build,
    whose parser exits with 'invalid choice')."""
    for version in ("0.5.9", "0.5.9+cu128"):
        assert _problems(mapping, version, "--log-requests", "--log-requests-level", "1") == []
        assert _problems(mapping, version, "--ep", "8") == []
        assert _problems(mapping, version, "--speculative-draft-model", "d") == []
    assert _problems(mapping, "0.5.6+cu128", "--tool-call-parser", "glm47") == [
        ("--tool-call-parser", "blocked", "glm47")
    ]
    assert _problems(mapping, "0.5.6+cu128", "--tool-call", "glm47") == [("--tool-call-parser", "blocked", "glm47")]
