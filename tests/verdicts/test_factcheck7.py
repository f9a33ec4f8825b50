"""The seventh fact-check sample (tests/realworld/FACTCHECK.md), row a5: the nccl check said ok for eight B200s
whose facts list neither NCCL wheel (nvidia-nccl-cu12/-cu13) nor NCCL_VERSION, so no rule read the NCCL torch
loads. PyPI's torch 2.13.0 requires nvidia-nccl-cu13==2.29.7 (its wheel's METADATA, read with pip's report
2026-12-02); without that wheel libnccl.so.2 comes from somewhere the facts do not say (a conda package, the
system), whose version is not known, so whether it has Blackwell code is unknown, not ok."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

RULE = "nccl-in-use-unread"


def box(cc: str, n: int, env: dict[str, str] | None = None, **packages: Any) -> dict[str, Any]:
    pkgs = {"torch": {"installed": True, "version": "2.13.0+cu130", "variant": "cu130", "cuda": "13.0"}}
    for name in ("nvidia-nccl-cu12", "nvidia-nccl-cu13"):
        pkgs[name] = {"installed": False}
    pkgs.update({k.replace("_", "-"): v for k, v in packages.items()})
    return {
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "gpus": [{"index": i, "name": "GPU", "compute_capability": cc} for i in range(n)],
        "topology": {"interconnect": "nvlink", "nvswitch": True, "gpu_count": n, "p2p": "all"},
        "packages": pkgs,
        "packages_complete": True,
        "system": {"machine": "x86_64", "env": env or {}},
    }


def nccl(manifests: Manifests, facts: dict[str, Any]) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == "nccl")
    return evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=manifests, launch={"tp": 8}))  # type: ignore[arg-type]


def results(v: CheckVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"]}


def test_blackwell_gpus_without_an_nccl_wheel_or_nccl_version_are_unknown(manifests: Manifests) -> None:
    v = nccl(manifests, box("10.0", 8))
    assert v["status"] == "unknown", v
    assert results(v)[RULE] == "unknown"
    assert any("NCCL" in str(r.get("message")) for r in v["reasons"] if r.get("rule") == RULE)


def test_the_nccl_wheel_torch_requires_is_judged_as_before(manifests: Manifests) -> None:
    wheel = {"installed": True, "version": "2.29.7"}
    v = nccl(manifests, box("10.0", 8, nvidia_nccl_cu13=wheel))
    assert v["status"] == "ok" and RULE not in results(v)
    old = nccl(manifests, box("10.0", 8, nvidia_nccl_cu13={"installed": True, "version": "2.21.5"}))
    assert old["status"] == "failed"


def _ok_but_the_missing_wheel(v: CheckVerdict) -> bool:
    """The check's rules pass but igap47's torch-nccl-wheel-none, which is unknown for a pip torch with no NCCL wheel
    at all (these boxes name both wheels not installed: which libnccl.so.2 the loader takes is not read)."""
    bad = {rule: got for rule, got in results(v).items() if got not in ("ok", "pass")}
    return bad == {"torch-nccl-wheel-none": "unknown"} and v["status"] == "unknown"


def test_the_system_nccl_named_by_nccl_version_is_judged_as_before(manifests: Manifests) -> None:
    v = nccl(manifests, box("10.0", 8, env={"NCCL_VERSION": "2.26.3"}))
    assert _ok_but_the_missing_wheel(v) and RULE not in results(v), results(v)


@pytest.mark.parametrize(("cc", "n"), [("9.0", 8), ("10.0", 1)])
def test_no_rule_needs_the_version_on_hopper_or_one_gpu(manifests: Manifests, cc: str, n: int) -> None:
    v = nccl(manifests, box(cc, n))
    assert _ok_but_the_missing_wheel(v) and RULE not in results(v), results(v)
