"""NVIDIA_REQUIRE_* parsed and judged as nvidia-container-toolkit / libnvidia-container judge them."""

from __future__ import annotations

import pytest

from stackcheck.image.require import Device, compare_versions, judge, parse_nvidia_require

CUDA13 = "cuda>=13.0 brand=tesla,driver>=535,driver<536 brand=nvidia,driver>=570,driver<571"


@pytest.mark.parametrize(
    ("env", "driver", "cuda", "devices", "satisfied"),
    [
        ({"NVIDIA_REQUIRE_CUDA": CUDA13}, "580.95.05", "13.0", [Device("9.0", "nvidia")], True),
        ({"NVIDIA_REQUIRE_CUDA": CUDA13}, "570.86.10", "12.8", [Device("9.0", "nvidia")], True),  # forward compat
        ({"NVIDIA_REQUIRE_CUDA": CUDA13}, "570.86.10", "12.8", [Device("9.0", "geforce")], False),
        ({"NVIDIA_REQUIRE_CUDA": CUDA13}, "550.54.15", "12.4", [Device("9.0", None)], False),
        ({"NVIDIA_REQUIRE_CUDA": CUDA13}, "570.86.10", "12.8", [Device("9.0", None)], None),  # brand unknown
        ({"NVIDIA_REQUIRE_CUDA": CUDA13}, None, None, [], None),
        ({"NVIDIA_REQUIRE_CUDA": CUDA13, "NVIDIA_DISABLE_REQUIRE": "true"}, "450.0", "11.0", [], True),
        ({"NVIDIA_REQUIRE_CUDA": CUDA13, "NVIDIA_DISABLE_REQUIRE": "yes"}, "450.0", "11.0", [], False),  # not a Go bool
        ({"CUDA_VERSION": "12.4.1"}, "550.54.15", "12.4", [], True),  # legacy: cuda>=12.4
        ({"CUDA_VERSION": "12.4.1"}, "535.0", "12.2", [], False),
        (
            {"NVIDIA_REQUIRE_CUDA": "cuda>=12.0", "NVIDIA_REQUIRE_ARCH": "arch>=9.0"},
            "580.1",
            "13.0",
            [Device("8.0", None)],
            False,
        ),  # every NVIDIA_REQUIRE_* must hold
        ({"NVIDIA_REQUIRE_JETPACK": "cuda>=99"}, "580.1", "13.0", [], True),  # JETPACK is not a requirement
        ({"NVIDIA_REQUIRE_CUDA": "   "}, "580.1", "13.0", [], True),  # empty: holds
        ({}, "580.1", "13.0", [], True),
    ],
)
def test_judge(
    env: dict[str, str], driver: str | None, cuda: str | None, devices: list[Device], satisfied: bool | None
) -> None:
    assert judge(parse_nvidia_require(env), driver, cuda, devices).satisfied is satisfied


def test_failed_requirement_and_invalid_expression() -> None:
    j = judge(parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": CUDA13}), "550.54.15", "12.4")
    assert j.failed == CUDA13 and "unsatisfied condition" in j.reason
    bad = parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": "cuda==13.0 gpu>=1 driver>=abc brand>tesla"})
    assert len(bad.errors) == 4
    j = judge(bad, "580.1", "13.0")
    assert j.satisfied is False and "invalid expression" in j.reason
    facts = parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": CUDA13}).to_facts()
    assert facts["requirements"][0]["alternatives"][1] == ["brand=tesla", "driver>=535", "driver<536"]


@pytest.mark.parametrize(
    ("a", "op", "b", "expected"),
    [
        ("13.0", "=", "13", True),
        ("13.0.1", ">", "13", True),
        ("535.104.05", "<", "536", True),
        ("12.10", ">", "12.9", True),
        ("13", "!=", "13.0.0", False),
        ("580", ">=", "580.0", True),
    ],
)
def test_versions_compare_by_component(a: str, op: str, b: str, expected: bool) -> None:
    assert compare_versions(a, op, b) is expected
