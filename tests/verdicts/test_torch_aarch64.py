"""Review 2: torch's aarch64 wheels are other builds than the x86_64 ones (components.json `archs_aarch64`, from
build_cuda.sh's aarch64 lists: cu130 has no sm_75 or sm_86, cu124 only sm_90), but torch.archs read the x86_64
list on every machine: a T4G (cc 7.5, AWS g5g, an aarch64 host) with torch 2.9.1+cu130 was told torch-cuda-arch
ok, and torch would have no kernel for it. An Arm box is now judged by the aarch64 list, a box of unknown machine
only where both lists serve its GPUs alike."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context, Missing, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature


def _ctx(manifests: Manifests, cc: str, torch: str, machine: str | None) -> Context:
    facts: dict[str, Any] = {
        "gpus": assumed_gpus(manifests, f"{cc}x1"),
        "packages": {"torch": {"installed": True, "version": torch}},
    }
    if machine is not None:
        facts["system"] = {"machine": machine}
    return Context(facts=facts, manifests=manifests, launch={})  # type: ignore[arg-type]


def test_an_arm_box_is_judged_by_the_aarch64_wheel_of_torch(manifests: Manifests) -> None:
    archs, where = _ctx(manifests, "7.5", "2.9.1+cu130", "aarch64").torch_archs()
    assert "sm_75" not in archs and "sm_110" in archs and where.endswith("aarch64")
    archs, where = _ctx(manifests, "7.5", "2.9.1+cu130", "x86_64").torch_archs()
    assert "sm_75" in archs and not where.endswith("aarch64")


def test_an_unknown_machine_gets_a_torch_answer_only_where_both_wheels_agree(manifests: Manifests) -> None:
    with pytest.raises(Missing, match=r"system\.machine"):
        _ctx(manifests, "7.5", "2.9.1+cu130", None).torch_archs()  # sm_75: x86_64 only
    with pytest.raises(Missing, match=r"system\.machine"):
        _ctx(manifests, "8.0", "2.5.1+cu124", None).torch_archs()  # cu124 aarch64: sm_90 only
    assert "sm_90" in _ctx(manifests, "9.0", "2.9.1+cu130", None).torch_archs()[0]  # both carry sm_90


def test_the_verdict_on_a_t4g_with_torch_cu130(manifests: Manifests) -> None:
    feature = next(f for f in manifests.features if f["id"] == "torch-cuda-arch")

    def status(machine: str | None) -> str:
        return str(evaluate_feature(feature, _ctx(manifests, "7.5", "2.9.1+cu130", machine))["status"])

    assert (status("aarch64"), status("x86_64"), status(None)) == ("blocked", "ok", "unknown")


def test_both_wheels_covering_the_gpu_alike_need_no_machine(manifests: Manifests) -> None:
    """torch 2.11.0+cu130: the wheels carry other targets (sm_120a, sm_121a on x86_64 only; compute_120 on aarch64
    only) but both run SASS on cc 12.0, so the verdict needs no machine (an image audited for an RTX PRO 6000 fleet,
    examples/ci/image-audit.sh, whose facts name no machine)."""
    for cc in ("12.0", "9.0", "10.0", "8.6"):  # 8.6: sm_86 SASS on x86_64, sm_80 SASS (which runs on 8.6) on aarch64
        assert _ctx(manifests, cc, "2.11.0+cu130", None).torch_archs()[0]
    with pytest.raises(Missing, match=r"system\.machine"):
        _ctx(manifests, "7.5", "2.11.0+cu130", None).torch_archs()  # sm_75 on x86_64 only


def test_an_arm_box_without_an_aarch64_list_is_unknown(manifests: Manifests) -> None:
    """Where only the x86_64 wheel's targets are recorded (torch cu118, cu126; sgl-kernel 0.3.5's cu124 build), an
    Arm box gets unknown, not the x86_64 answer: an aarch64 build carries its own targets (cu124's: sm_90 only)."""
    with pytest.raises(Missing, match="x86_64 wheel only"):
        _ctx(manifests, "8.0", "2.4.0+cu118", "aarch64").torch_archs()
    assert "sm_80" in _ctx(manifests, "8.0", "2.4.0+cu118", "x86_64").torch_archs()[0]
    facts: dict[str, Any] = {
        "gpus": assumed_gpus(manifests, "8.0x1"),
        "packages": {"sgl-kernel": {"installed": True, "version": "0.3.5+cu124"}},
        "system": {"machine": "aarch64"},
    }
    ctx = Context(facts=facts, manifests=manifests, launch={})  # type: ignore[arg-type]
    with pytest.raises(Missing, match="aarch64 build can carry others"):
        ctx.package_archs("sgl-kernel")
