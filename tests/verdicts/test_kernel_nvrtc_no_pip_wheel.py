"""kernel-runtime-libs, rule nvrtc-12-no-pip-wheel: a CUDA 12 sgl-kernel beside a CUDA 12 torch on x86_64 where
neither the loader nor a pip NVRTC wheel can supply libnvrtc.so.12 (sglang#10951's shape) fails the check; boxes
that do have one, or that the rule does not judge, are left as they were (ok or unknown, never a new failure)."""

from __future__ import annotations

import copy
from typing import Any

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

NUMA = "/usr/lib/x86_64-linux-gnu/libnuma.so.1"
RULE = "nvrtc-12-no-pip-wheel"


def verdict(manifests: Manifests, facts: dict[str, Any]) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == "kernel-runtime-libs")
    return evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=manifests, launch={}))  # type: ignore[arg-type]


def rule_result(v: CheckVerdict) -> str | None:
    return next((str(r.get("result")) for r in v["reasons"] if r.get("rule") == RULE), None)


def h100_box(torch: str = "2.9.1+cu128", kernel: str = "0.3.21") -> dict[str, Any]:
    """One H100 on x86_64 with a pip CUDA 12 torch and sgl-kernel; no NVRTC anywhere (the failing shape)."""
    cuda = "13.0" if torch.endswith("cu130") else "12.8"
    return {
        "driver": {"version": "570.172.08", "cuda": "12.8"},
        "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}],
        "packages": {
            "torch": {"installed": True, "version": torch, "cuda": cuda, "variant": torch.rpartition("+")[2]},
            "sgl-kernel": {"installed": True, "version": kernel},
            "sglang-kernel": {"installed": False},
            "nvidia-cuda-nvrtc-cu12": {"installed": False},
            "nvidia-cuda-nvrtc": {"installed": False},
            "nvidia-cuda-runtime-cu12": {"installed": True, "version": "12.8.90"},
        },
        "system": {"machine": "x86_64", "env": {}},
        "cuda_libs": {"libcudart.so.12": None, "libnvrtc.so.12": None, "libnuma.so.1": NUMA},
    }


def test_no_nvrtc_on_the_loader_and_no_pip_wheel_fails(manifests: Manifests) -> None:
    v = verdict(manifests, h100_box())
    assert v["status"] == "failed" and rule_result(v) == "fail"
    reason = next(r for r in v["reasons"] if r.get("rule") == RULE)
    assert "libnvrtc.so.12: cannot open shared object file" in str(reason["message"])
    assert reason.get("effect") == "crash"
    # an older pair on another GPU: sgl-kernel 0.2.5 beside torch 2.7.1+cu126 on an A100
    old = h100_box("2.7.1+cu126", "0.2.5")
    old["gpus"][0].update(name="NVIDIA A100-SXM4-80GB", compute_capability="8.0")
    old["packages"]["torch"]["cuda"] = "12.6"
    assert rule_result(verdict(manifests, old)) == "fail"


def test_a_pip_nvrtc_wheel_or_a_loader_copy_passes(manifests: Manifests) -> None:
    facts = h100_box()
    facts["packages"]["nvidia-cuda-nvrtc-cu12"] = {"installed": True, "version": "12.8.93"}
    v = verdict(manifests, facts)
    assert rule_result(v) == "pass" and v["status"] == "ok"
    facts = h100_box()
    facts["cuda_libs"]["libnvrtc.so.12"] = "/usr/local/cuda-12.8/targets/x86_64-linux/lib/libnvrtc.so.12"
    v = verdict(manifests, facts)
    assert rule_result(v) in (None, "not-applicable") and v["status"] == "ok"


def test_boxes_the_rule_does_not_judge_stay_as_they_were(manifests: Manifests) -> None:
    arm = h100_box()
    arm["system"]["machine"] = "aarch64"  # aarch64 torch builds bundle their CUDA libraries: not read
    assert rule_result(verdict(manifests, arm)) in (None, "not-applicable")
    newer_kernel = h100_box()
    newer_kernel["packages"]["sglang-kernel"] = {"installed": True, "version": "0.4.3"}  # not read here
    assert rule_result(verdict(manifests, newer_kernel)) in (None, "not-applicable")
    cu13 = h100_box("2.9.1+cu130")  # a CUDA 13 torch: rule nvrtc-12 judges it
    v = verdict(manifests, cu13)
    assert rule_result(v) in (None, "not-applicable") and "nvrtc-12" in [
        r.get("rule") for r in v["reasons"] if r.get("result") == "fail"
    ]
    not_looked = h100_box()
    del not_looked["cuda_libs"]["libnvrtc.so.12"]  # a facts file that did not look for it
    assert rule_result(verdict(manifests, not_looked)) in (None, "not-applicable")


def test_pip_wheels_not_known_is_unknown_not_ok(manifests: Manifests) -> None:
    facts = h100_box()
    for name in ("nvidia-cuda-nvrtc-cu12", "nvidia-cuda-nvrtc"):
        del facts["packages"][name]  # a hand-written facts file that says nothing about them
    facts["packages_complete"] = False  # (set when a hand-written document is read: stackcheck.facts.model)
    v = verdict(manifests, facts)
    assert rule_result(v) == "unknown" and v["status"] == "unknown"
    facts["packages_complete"] = True  # a saved report of a stackcheck that did not look for the NVRTC wheels
    assert rule_result(verdict(manifests, facts)) in (None, "not-applicable")
