"""Compute capability 10.7 (Rubin, SM107) in the manifests: its first CUDA is the later of the disagreeing
sources, and on a Rubin box no feature is ok unless a source covers 10.7 itself.

SGLang admits GPUs by their major (10 for B200, B300 and Rubin alike), so a feature whose kernel hop is
judged only by a major, or not judged at all, would pass on 10.7 by accident. The rule checked here: every
kernel hop of an ok feature has a rule that passed on the 10.7 GPU with evidence for 10.7 itself, that is
a rule written for SM107 (`gpu.sm == 107` in its `when`), a comparison of `gpu.sm` with a list that holds 107
(a gate read from a release naming kSM_107), or a `covered_by` whose covering targets are each one that
architectures.json records, with its source, as running on 10.7."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from stackcheck.commands.explain import release_facts
from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context, GpuModel, assumed_gpus
from stackcheck.verdicts.engine import evaluate_check, evaluate_feature, evaluate_predicate
from stackcheck.verdicts.kernel_path import applicable_hops

ROOT = Path(__file__).resolve().parent.parent.parent
FACTS = ROOT / "tests" / "cases" / "rubin-sm107-sglang0523" / "facts.json"
RUBIN = GpuModel("10.7", "NVIDIA Graphics Device", tuple(range(8)))

#: features whose kernel hop names no kernel of their own, and why they need no 10.7 source
NO_KERNEL_OF_THEIR_OWN = {
    "cuda-graph": "CUDA graphs are a driver/runtime feature; the kernels captured are the other features'",
}

_TARGET = re.compile(r"\b(?:sm|compute)_\d+[a-z]?\b")


def _sm107(manifests: Manifests) -> dict[str, Any]:
    return next(dict(a) for a in manifests.architectures if a.get("compute_capability") == "10.7")


def _reads(pred: Any, fact: str, ops: tuple[str, ...]) -> list[dict[str, Any]]:
    """The comparisons of `fact` by one of `ops` inside a predicate."""
    if isinstance(pred, dict):
        own = [pred] if pred.get("fact") == fact and pred.get("op") in ops else []
        return own + [p for v in pred.values() for p in _reads(v, fact, ops)]
    if isinstance(pred, list):
        return [p for v in pred for p in _reads(v, fact, ops)]
    return []


def _covers_10_7(rule: dict[str, Any], reason: dict[str, Any], sourced: set[str]) -> bool:
    """The rule passed on the 10.7 GPU with evidence for 10.7 itself (see the module's docstring)."""
    if any(p.get("value") == 107 for p in _reads(rule.get("when"), "gpu.sm", ("==",))):
        return True
    if _reads(rule.get("require"), "gpu.sm", ("in", "==")):
        return True  # it passed with gpu.sm = 107: the list (or value) holds 107
    if _reads(rule.get("require"), "gpu.cc", ("covered_by",)):
        via = _TARGET.findall(str(reason.get("observed", "")))
        return bool(via) and set(via) <= sourced
    return False


def unsourced_ok(manifests: Manifests, ctx: Context, tp: int = 8) -> list[str]:
    """Every feature that is ok on the box while one of its kernel hops has no evidence for 10.7 (at TP 1 the
    features that read launch.tp are no-ops, as in test_feature_paths)."""
    sourced = {t["target"] for t in _sm107(manifests)["targets"] if t.get("source")}
    problems: list[str] = []
    for feature in manifests.features:
        if tp == 1 and "launch.tp" in json.dumps(feature.get("rules")):
            continue
        verdict = evaluate_feature(feature, ctx)
        if verdict["status"] != "ok" or feature["id"] in NO_KERNEL_OF_THEIR_OWN:
            continue
        rules = {r["id"]: r for r in feature.get("rules") or []}
        passed = {r["rule"]: r for r in verdict.get("reasons") or [] if r.get("result") == "pass"}
        kernel_hops = [h for h in applicable_hops(feature, ctx) if h.get("hop") == "kernel"]
        if not kernel_hops:
            problems.append(f"{feature['id']}: ok, but no kernel hop of its path describes this box")
        for hop in kernel_hops:
            names = [n for n in hop.get("rules") or [] if n in passed]
            if not any(_covers_10_7(dict(rules[n]), dict(passed[n]), sourced) for n in names):
                check = str(hop.get("check", ""))[:70]
                problems.append(f"{feature['id']}: ok, but its kernel hop {check!r} has no 10.7 source")
    return problems


def _rubin_box(manifests: Manifests, **packages: str) -> Context:
    facts = copy.deepcopy(load_facts_file(FACTS))
    for name, version in packages.items():
        facts["packages"][name] = {"installed": True, "version": version, "dist_version": version}
    # (icubin1: FlashInfer's trtllm-gen cubins on the box, so the walk judges the architecture hops, not the download)
    release = facts["packages"]["flashinfer-python"]["version"]
    families = ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_BMM", "TRTLLM_GEN_GEMM", "DEEPGEMM")
    facts["flashinfer_cubins"] = {"release": release, "ready": dict.fromkeys(families, True)}
    return Context(facts=facts, manifests=manifests, launch={"tp": 8})


def test_min_cuda_is_the_later_source(manifests: Manifests) -> None:
    arch = _sm107(manifests)
    assert arch["id"] == "sm107" and arch["min_cuda"] == "13.4" and arch["inferred"] is True
    assert "13.3" in arch["note"] and "13.4" in arch["note"]  # both sources named, and why the later one
    assert {"FI-4217", "PT-190654", "TRITON-380-PTXAS", "TRITON-390-PTXAS"} <= set(arch["source"])


@pytest.mark.parametrize(("triton", "status"), [("3.7.1", "failed"), ("3.8.0", "failed"), ("3.9.0", "ok")])
def test_triton_ptxas_on_rubin_follows_the_bundled_ptxas(manifests: Manifests, triton: str, status: str) -> None:
    """3.7.1 bundles ptxas-blackwell 13.1, 3.8.0 13.3.33 (read: 'sm_107a is not defined'), 3.9.0 13.4.59 (read:
    assembles sm_107a): a ptxas older than the first CUDA for 10.7 fails, and a 13.3 ptxas fails with it."""
    check = next(c for c in manifests.checks if c["id"] == "triton-ptxas")
    verdict = evaluate_check(check, _rubin_box(manifests, triton=triton))
    assert verdict["status"] == status, verdict["reasons"]
    if status == "failed":
        text = " ".join(str(r.get("message")) for r in verdict["reasons"] if r.get("result") == "fail")
        assert "sm_107a" in text and "13.4" in text


@pytest.mark.parametrize(
    ("targets", "runs"),
    [
        (["sm_100a", "sm_103a"], False),  # arch-specific: B200 / B300 only
        (["sm_120", "sm_120f", "compute_120"], False),  # another major
        (["sm_100"], True),  # same major, lower minor
        (["sm_100f"], True),  # the SM100 family
        (["compute_90"], True),  # PTX, JIT-compiled forward
    ],
)
def test_which_targets_run_on_10_7(manifests: Manifests, targets: list[str], runs: bool) -> None:
    ctx = _rubin_box(manifests)
    out = evaluate_predicate({"fact": "gpu.cc", "op": "covered_by", "value": targets}, ctx, RUBIN)
    assert out.value is runs


def test_every_target_that_runs_on_10_7_is_recorded_with_a_source(manifests: Manifests) -> None:
    arch = _sm107(manifests)
    assert all(t.get("source") for t in arch["targets"])
    ctx = _rubin_box(manifests)
    for name in arch["incompatible_targets"]:
        assert evaluate_predicate({"fact": "gpu.cc", "op": "covered_by", "value": [name]}, ctx, RUBIN).value is False


def test_rubin_box_no_feature_ok_without_a_source_covering_10_7(manifests: Manifests) -> None:
    ctx = _rubin_box(manifests)
    assert unsourced_ok(manifests, ctx) == []
    ok = {f["id"] for f in manifests.features if evaluate_feature(f, ctx)["status"] == "ok"}
    assert ok  # the walk judged something: B200-era features with a 10.7 source pass
    assert "attention-trtllm-mla" in ok  # FlashInfer 0.7.2's TllmGenFmhaRunner lists kSM_107
    for unknown in ("deepgemm", "mxfp4-moe", "nvfp4", "attention-fa4", "flashinfer-allreduce-fusion"):
        assert evaluate_feature(next(f for f in manifests.features if f["id"] == unknown), ctx)["status"] == "unknown"


@pytest.mark.parametrize(
    ("gpus", "tp", "topology"),
    [
        (8, 8, {"interconnect": "nvlink", "nvswitch": True, "p2p": "all", "same_model": True, "gpu_count": 8}),
        (8, 8, {"interconnect": "pcie-switch", "nvswitch": False, "p2p": "all", "same_model": True, "gpu_count": 8}),
        (1, 1, {"interconnect": "single-gpu", "same_model": True, "gpu_count": 1}),
    ],
)
def test_every_sglang_release_on_rubin(manifests: Manifests, gpus: int, tp: int, topology: dict[str, Any]) -> None:
    """The boxes `stackcheck explain` builds (each SGLang release with its pins) on 10.7: the same rule."""
    problems = []
    for rel in manifests.releases("sglang"):
        version = str(rel.get("version"))
        box = {"gpus": assumed_gpus(manifests, f"10.7x{gpus}"), "topology": topology}
        facts = release_facts(box, manifests, version, None, None)
        ctx = Context(facts=facts, manifests=manifests, launch={"tp": tp})  # type: ignore[arg-type]
        problems += [f"sglang {version}: {p}" for p in unsourced_ok(manifests, ctx, tp)]
    assert problems == []


@pytest.mark.parametrize(
    ("feature_id", "rule_id"),
    [
        ("deepgemm", "sm107-kernel"),  # no kernel hop of 0.4.10's path: passes on `gpu.sm >= 90` alone
        ("nvfp4", "sm107-kernel"),  # SGLang's is_blackwell_supported() admits major 10
        ("attention-fa4", "sm107-kernel"),  # the vendored interface asserts the major only
        ("nccl-nvls", "sm107-nvls"),  # "Hopper or newer"
    ],
)
def test_a_major_10_pass_without_a_10_7_source_is_reported(manifests: Manifests, feature_id: str, rule_id: str) -> None:
    """Take out a feature's SM107 rule: it passes on the major alone, and the walk says so."""
    bare = copy.deepcopy(manifests)
    feature = next(f for f in bare.docs["features.json"]["features"] if f["id"] == feature_id)
    assert any(r["id"] == rule_id for r in feature["rules"])
    feature["rules"] = [r for r in feature["rules"] if r["id"] != rule_id]
    for hop in feature["path"]:
        hop["rules"] = [n for n in hop.get("rules") or [] if n != rule_id]
    ctx = _rubin_box(bare)
    assert evaluate_feature(feature, ctx)["status"] == "ok"
    problems = unsourced_ok(bare, ctx)
    assert [p for p in problems if p.startswith(f"{feature_id}:")], problems


def test_the_rubin_case_records_these_verdicts() -> None:
    expected = json.loads((FACTS.parent / "expected.json").read_text(encoding="utf-8"))
    assert expected["checks"]["triton-ptxas"] == "failed"
    assert expected["checks"]["torch-arch"] == "ok"  # torch's sm_100 SASS runs on 10.7 (PyTorch PR #190654)
