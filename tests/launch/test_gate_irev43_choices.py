"""Adversarial review of release_choice_problems (launch.json release_choices).

argparse checks `choices` for each occurrence of an option as it consumes it (argparse._get_values ->
_check_value, once per `--flag value`), so `--dtype bf16 --dtype bfloat16` exits with 'invalid choice' at the
first occurrence although the last one is offered: the gate read only the last value (a false pass).

A local build of a release (`0.5.11+cu128`, what `pip show sglang` prints for a source build) runs that release's
launcher, which from 0.5.11 loads plugins before it parses (release_flags `plugins`): a value a plugin may register
(a tool-call parser) is unknown there as on 0.5.11, where the gate blocked it (an over-refusal)."""

from __future__ import annotations

from typing import Any

import pytest
from gate_cli import choice_problems as _problems

from stackcheck.knowledge.loader import load


@pytest.fixture(scope="module")
def mapping() -> dict[str, Any]:
    return dict(load([], env={}).launch)


@pytest.mark.parametrize(
    ("version", "flags", "bad"),
    [
        ("0.5.9", ("--dtype", "bf16", "--dtype", "bfloat16"), ("--dtype", "blocked", "bf16")),
        ("0.5.9", ("--dtype=bf16", "--dtype", "bfloat16"), ("--dtype", "blocked", "bf16")),
        ("0.5.9", ("--dtyp", "bf16", "--dtype", "bfloat16"), ("--dtype", "blocked", "bf16")),
        (
            "0.5.9",
            ("--tool-call-parser", "qwen3", "--tool-call-parser", "qwen25"),
            ("--tool-call-parser", "blocked", "qwen3"),
        ),
        (
            "0.5.9",
            ("--grammar-backend", "xgramar", "--grammar-backend", "xgrammar"),
            ("--grammar-backend", "blocked", "xgramar"),
        ),
        (
            "0.5.23",
            ("--disaggregation-mode", "prefil", "--disaggregation-mode", "prefill"),
            ("--disaggregation-mode", "blocked", "prefil"),
        ),
    ],
)
def test_every_occurrence_of_a_repeated_flag_is_judged(
    mapping: dict[str, Any], version: str, flags: tuple[str, ...], bad: tuple[str, str, str]
) -> None:
    assert _problems(mapping, version, *flags) == [bad]


def test_a_repeated_flag_whose_values_are_all_offered_passes(mapping: dict[str, Any]) -> None:
    assert _problems(mapping, "0.5.9", "--dtype", "float16", "--dtype", "bfloat16") == []
    assert _problems(mapping, "0.5.9", "--tool-call-parser", "qwen25", "--tool-call-parser", "llama3") == []
    # after `--` argparse reads no option
    assert _problems(mapping, "0.5.9", "--dtype", "bfloat16", "--", "--dtype", "bf16") == []


def test_a_local_build_loads_plugins_as_its_release_does(mapping: dict[str, Any]) -> None:
    assert _problems(mapping, "0.5.11", "--tool-call-parser", "qwen3") == [("--tool-call-parser", "unknown", "qwen3")]
    assert _problems(mapping, "0.5.11+cu128", "--tool-call-parser", "qwen3") == [
        ("--tool-call-parser", "unknown", "qwen3")
    ]
    assert _problems(mapping, "0.5.23+cu130", "--tool-call-parser", "qwen3") == [
        ("--tool-call-parser", "unknown", "qwen3")
    ]
    # before 0.5.11 no plugin loads: still blocked; a list no plugin extends: blocked on a local build too
    assert _problems(mapping, "0.5.10+cu128", "--tool-call-parser", "qwen3") == [
        ("--tool-call-parser", "blocked", "qwen3")
    ]
    assert _problems(mapping, "0.5.23+cu130", "--dtype", "bf16") == [("--dtype", "blocked", "bf16")]


@pytest.mark.parametrize(
    ("version", "flag", "bad", "good"),
    [
        ("0.5.9", "--piecewise-cuda-graph-compiler", "Inductor", "inductor"),
        ("0.5.19", "--piecewise-cuda-graph-compiler", "torch_compile", "eager"),
        ("0.5.12", "--prefill-cp-mode", "round-robin-split", "in-seq-split"),
        ("0.5.9", "--nsa-prefill-cp-mode", "round-robin", "round-robin-split"),
        ("0.5.17", "--dsa-prefill-cp-mode", "in-seq", "in-seq-split"),
    ],
)
def test_the_choice_flags_the_specs_missed_are_judged(
    mapping: dict[str, Any], version: str, flag: str, bad: str, good: str
) -> None:
    """choices= flags of 0.5.4-0.5.19 that release_choices did not list (a literal list or a module list no hook
    extends; from 0.5.13/0.5.14 behind a DeprecatedAliasStoreAction, which argparse runs after the choices check):
    a value the parser does not offer passed the gate; blocked now, from 0.5.11 too (nothing extends the list)."""
    assert _problems(mapping, version, flag, bad) == [(flag, "blocked", bad)]
    assert _problems(mapping, version, flag, good) == []


def test_a_cuda_graph_backend_gone_in_the_release_is_blocked(mapping: dict[str, Any]) -> None:
    """--cuda-graph-backend-decode/-prefill take Backend.ALL (sglang/srt/model_executor/cuda_graph_config.py):
    tc_piecewise up to 0.5.21, gone from 0.5.22 (its type_parser rejects it: exit status 2). The gate passed it."""
    for flag in ("--cuda-graph-backend-decode", "--cuda-graph-backend-prefill"):
        assert _problems(mapping, "0.5.21", flag, "tc_piecewise") == []
        assert _problems(mapping, "0.5.22", flag, "tc_piecewise") == [(flag, "blocked", "tc_piecewise")]
        assert _problems(mapping, "0.5.14", flag, "piecewise") == [(flag, "blocked", "piecewise")]
        assert _problems(mapping, "0.5.23", flag, "breakable") == []
