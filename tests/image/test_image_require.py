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


# ---- the stack check, from the facts of an image read by the tests --------------------------------------
def _image_facts(tmp_path, env: list[str]) -> dict[str, object]:  # type: ignore[no-untyped-def]
    from imagebuild import docker_save, layer_tar

    from stackcheck.image import open_image

    image = docker_save(tmp_path / "r.tar", [layer_tar([("file", "etc/os-release", b"x")])], env=env)
    with open_image(image) as view:
        return view.info.to_facts()


@pytest.mark.parametrize(
    ("env", "driver", "status", "text"),
    [
        (["NVIDIA_REQUIRE_CUDA=" + CUDA13], {"version": "580.95.05", "cuda": "13.0"}, "ok", None),
        (["NVIDIA_REQUIRE_CUDA=" + CUDA13], {"version": "550.54.15", "cuda": "12.4"}, "failed", "unmet: cuda>=13.0"),
        (["NVIDIA_REQUIRE_CUDA=" + CUDA13], {}, "unknown", "cannot be judged"),
        (["CUDA_VERSION=12.8.0"], {"version": "535.1", "cuda": "12.2"}, "failed", "unmet: cuda>=12.8"),
        (["PATH=/usr/bin"], {"version": "535.1", "cuda": "12.2"}, "skipped", None),
    ],
)
def test_image_nvidia_require_check(tmp_path, env, driver, status, text) -> None:  # type: ignore[no-untyped-def]
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_check

    manifests = load([])
    check = next(c for c in manifests.checks if c["id"] == "image-nvidia-require")
    facts = {
        "image": _image_facts(tmp_path, env),
        "driver": driver,
        "gpus": [{"index": 0, "compute_capability": "9.0"}],
        "container_toolkit": {"mode": "legacy", "libnvidia_container": "1.17.8", "disable_require": False},
    }
    verdict = evaluate_check(check, Context(facts, manifests, {}))  # type: ignore[arg-type]
    assert verdict["status"] == status
    del facts["container_toolkit"]  # the host's toolkit not read: a refusal is not certain (cdi does not check)
    unread = evaluate_check(check, Context(facts, manifests, {}))  # type: ignore[arg-type]
    assert unread["status"] == ("unknown" if status == "failed" else status)
    if text:
        assert any(text in str(r.get("observed", "")) + str(r.get("message", "")) for r in verdict["reasons"])
    host_only = evaluate_check(check, Context({"driver": driver}, manifests, {}))
    assert host_only["status"] == "skipped"  # a host audit: no image, nothing to judge
