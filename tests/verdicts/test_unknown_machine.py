"""A box whose facts do not name its machine (a partial facts file, `explain --assume-gpu`): the x86_64 and the
aarch64 wheel of one release can carry other targets and libraries (components.json `archs_aarch64`,
`libs_aarch64`), so a compiled-targets lookup answers only where both wheels serve the box's GPUs alike. Before,
such a box was judged by the x86_64 wheel: attention-fa3 on a GH200 with SGLang 0.5.14+ said ok (sglang-kernel
0.4.4+ ship no FA3 library on aarch64), and GB10 with sgl-kernel 0.3.21+cu130 was judged by a wheel it cannot have."""

from __future__ import annotations

import json
from typing import Any

import pytest
from release_box import judge

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context, Missing, assumed_gpus


def _ctx(manifests: Manifests, cc: str, packages: dict[str, Any], machine: str | None) -> Context:
    facts: dict[str, Any] = {"gpus": assumed_gpus(manifests, f"{cc}x1"), "packages": packages}
    if machine is not None:
        facts["system"] = {"machine": machine}
    return Context(facts=facts, manifests=manifests, launch={})  # type: ignore[arg-type]


@pytest.mark.parametrize("sglang", ["0.5.14", "0.5.20", "0.5.23"])
def test_fa3_on_hopper_is_unknown_when_the_machine_is_not_known(manifests: Manifests, sglang: str) -> None:
    v = judge(manifests, "attention-fa3", "9.0", sglang, machine=None)
    assert v["status"] == "unknown", v["reasons"]
    assert "system.machine" in json.dumps(v["reasons"])
    assert judge(manifests, "attention-fa3", "9.0", sglang, machine="x86_64")["status"] == "ok"
    assert judge(manifests, "attention-fa3", "9.0", sglang, machine="aarch64")["status"] == "blocked"


def test_fa3_keeps_its_answer_where_both_wheels_agree(manifests: Manifests) -> None:
    """sgl-kernel 0.3.21 (SGLang 0.5.9) ships flash_ops with sm_90a in both wheels: no machine needed."""
    assert judge(manifests, "attention-fa3", "9.0", "0.5.9", machine=None)["status"] == "ok"


def test_targets_that_serve_the_gpu_alike_need_no_machine(manifests: Manifests) -> None:
    """sgl-kernel 0.3.21+cu130: the wheels differ (sm_121a on aarch64 only, among others), but not for cc 12.0."""
    pkgs = {"sgl-kernel": {"installed": True, "version": "0.3.21+cu130"}}
    archs, where = _ctx(manifests, "12.0", pkgs, None).package_archs("sgl-kernel")
    assert "sm_120a" in archs and "aarch64" not in where
    with pytest.raises(Missing, match=r"system\.machine"):
        _ctx(manifests, "12.1", pkgs, None).package_archs("sgl-kernel")  # GB10: only the aarch64 wheel has sm_121a
    assert "sm_121a" in _ctx(manifests, "12.1", pkgs, "aarch64").package_archs("sgl-kernel")[0]
    assert "sm_121a" not in _ctx(manifests, "12.1", pkgs, "x86_64").package_archs("sgl-kernel")[0]


def test_a_library_read_on_x86_64_only_is_unknown_without_the_machine(manifests: Manifests) -> None:
    """sgl-kernel 0.3.9.post2 has its x86_64 libraries recorded and not its aarch64 ones."""
    pkgs = {"sgl-kernel": {"installed": True, "version": "0.3.9.post2"}}
    with pytest.raises(Missing, match="x86_64 wheel"):
        _ctx(manifests, "9.0", pkgs, None).package_lib_archs("sgl-kernel", "flash_ops")
    assert "sm_90a" in _ctx(manifests, "9.0", pkgs, "x86_64").package_lib_archs("sgl-kernel", "flash_ops")[0]


@pytest.mark.parametrize(("said", "expected"), [("arm64", "aarch64"), ("AMD64", "x86_64"), ("ppc64le", None)])
def test_machine_names(manifests: Manifests, said: str, expected: str | None) -> None:
    assert _ctx(manifests, "9.0", {}, said).machine() == expected
