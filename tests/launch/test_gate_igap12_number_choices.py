"""igap12: the choice flags ichoice left out, now in launch.json release_choices: number-valued ones (argparse's
type=int with choices: --log-requests-level, --max-lora-chunk-size, --dsa-triton-union, --fuseep-mode), the nargs='*'
one (--lora-target-modules, each module name looked up) and --monokernel-backend (declared with nargs=None).

argparse converts a type=int value with int() and then looks the number up ('01' is 1; 'x' ends the launch with
'invalid int value'), and checks each value of an nargs='*' flag; either failure ends the server with exit status 2.
The choices per release are read from every wheel 0.5.1-0.5.23 by tests/launch/test_release_choices_more_registry.py.
On the parent (b33a6f2) 10 of these fail (the flags were not judged at all)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gate_cli import ROOT, choice_problems


def _mapping() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "manifests" / "launch.json").read_text())
    return data


@pytest.mark.parametrize(
    ("version", "flags", "value"),
    [
        ("0.5.23", ("--log-requests-level", "4"), "4"),
        ("0.5.5", ("--log-requests-level=7",), "7"),
        ("0.5.9", ("--log-requests-level", "x"), "x"),  # int() cannot read it
        ("0.5.13", ("--max-lora-chunk-size", "48"), "48"),
        ("0.5.23", ("--dsa-triton-union", "3"), "3"),
        ("0.5.19", ("--fuseep-mode", "0"), "0"),
        ("0.5.23", ("--monokernel-backend", "nvidia"), "nvidia"),
        ("0.5.6", ("--lora-target-modules", "q_proj", "lm_head"), "lm_head"),  # lm_head joins in 0.5.7
        ("0.5.23", ("--lora-target-modules", "q_proj", "qkvo", "--tp", "2"), "qkvo"),
    ],
)
def test_a_value_the_release_does_not_take_is_blocked(version: str, flags: tuple[str, ...], value: str) -> None:
    got = choice_problems(_mapping(), version, *flags)
    assert [(status, observed) for _, status, observed in got] == [("blocked", value)], got


def test_the_refusal_says_why_an_unreadable_number_fails() -> None:
    from stackcheck.launch import gate

    d = gate.derive(
        ["python", "-m", "sglang.launch_server", "--model", "m", "--log-requests-level", "two"], _mapping(), {}
    )
    (problem,) = gate.release_choice_problems(d, _mapping(), "0.5.23")
    assert "integer" in problem.message and "'two'" in problem.message


@pytest.mark.parametrize(
    ("version", "flags"),
    [
        ("0.5.23", ("--log-requests-level", "3")),
        ("0.5.23", ("--log-requests-level", "01")),  # int('01') is 1
        ("0.5.3", ("--max-lora-chunk-size", "128")),
        ("0.5.22", ("--dsa-triton-union", "4")),
        ("0.5.16", ("--fuseep-mode", "1")),
        ("0.5.23", ("--monokernel-backend", "amd")),
        ("0.5.7", ("--lora-target-modules", "q_proj", "lm_head", "all")),
        ("0.5.23", ("--lora-target-modules",)),  # nargs='*': no value at all is taken
    ],
)
def test_a_value_the_release_takes_is_not_judged(version: str, flags: tuple[str, ...]) -> None:
    assert choice_problems(_mapping(), version, *flags) == []


def test_releases_without_the_flag_are_left_to_the_flag_check() -> None:
    # --dsa-triton-union is 0.5.22+: on 0.5.21 no run holds (release_flags reports the flag itself)
    assert choice_problems(_mapping(), "0.5.21", "--dsa-triton-union", "3") == []
