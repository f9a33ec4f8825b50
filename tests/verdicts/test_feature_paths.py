"""Every feature records its path to the kernel (features.json `path`), and no verdict is ok without it.

The zero-false-pass invariant: wherever the shipped manifests say a feature is ok, on an architecture of
architectures.json with an SGLang release of components.json and that release's pinned packages (the boxes
`stackcheck explain` builds), the feature's path has, for that release and that GPU, a hop of every kind
(admission, dispatch and kernel for SGLang features; kernel for the others), none of them inferred. Where a
hop is not established the rules must say unknown there, not ok.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from stackcheck.commands.explain import release_facts
from stackcheck.knowledge.loader import Manifests
from stackcheck.knowledge.types import Feature
from stackcheck.verdicts.context import Context, assumed_gpus
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.kernel_path import HOP_ORDER, applicable_hops, hop_result, path_summary

ROOT = Path(__file__).resolve().parent.parent.parent


def _uses_tp(feature: Feature) -> bool:
    return "launch.tp" in json.dumps(feature.get("rules"))


def _boxes(manifests: Manifests) -> Iterator[tuple[str, dict[str, Any], int]]:
    """(label, facts, tp): 8 GPUs behind NVSwitch or on PCIe at TP 8, and one GPU at TP 1."""
    for arch in manifests.architectures:
        cc = str(arch.get("compute_capability"))
        topologies = {
            "nvswitch": {"interconnect": "nvlink", "nvswitch": True, "p2p": "all", "same_model": True, "gpu_count": 8},
            "pcie": {
                "interconnect": "pcie-switch",
                "nvswitch": False,
                "p2p": "all",
                "same_model": True,
                "gpu_count": 8,
            },
        }
        for name, topology in topologies.items():
            yield f"{cc} {name} tp8", {"gpus": assumed_gpus(manifests, f"{cc}x8"), "topology": topology}, 8
        one = {"interconnect": "single-gpu", "same_model": True, "gpu_count": 1}
        yield f"{cc} single tp1", {"gpus": assumed_gpus(manifests, f"{cc}x1"), "topology": one}, 1


def _ok_points(manifests: Manifests) -> Iterator[tuple[str, Feature, Context, dict[str, Any]]]:
    for label, base, tp in _boxes(manifests):
        for rel in manifests.releases("sglang"):
            version = str(rel.get("version"))
            facts = release_facts(base, manifests, version, None, None)
            ctx = Context(facts=facts, manifests=manifests, launch={"tp": tp})  # type: ignore[arg-type]
            for feature in manifests.features:
                if tp == 1 and _uses_tp(feature):
                    continue  # a TP-only feature on one GPU is a no-op, there is no path to walk
                verdict = evaluate_feature(feature, ctx)
                if verdict["status"] == "ok":
                    yield f"{feature['id']} on cc {label}, sglang {version}", feature, ctx, dict(verdict)


def test_every_feature_records_its_path(manifests: Manifests) -> None:
    for feature in manifests.features:
        path = feature.get("path")
        assert isinstance(path, list) and path, f"{feature['id']}: no path to the kernel"
        kinds = {h["hop"] for h in path}
        wanted = {"admission", "dispatch", "kernel"} if "sglang" in feature.get("needs", []) else {"kernel"}
        assert wanted <= kinds, f"{feature['id']}: path lacks {sorted(wanted - kinds)}"


def test_no_ok_verdict_without_a_sourced_path(manifests: Manifests) -> None:
    problems: list[str] = []
    checked = 0
    for where, feature, ctx, verdict in _ok_points(manifests):
        checked += 1
        hops = applicable_hops(feature, ctx)
        wanted = ("admission", "dispatch", "kernel") if "sglang" in feature.get("needs", []) else ("kernel",)
        for kind in wanted:
            if not any(h["hop"] == kind and not h.get("inferred") for h in hops):
                problems.append(f"{where}: ok, but no established {kind} hop covers it")
        for hop in hops:
            if hop.get("inferred"):
                problems.append(f"{where}: ok, but the {hop['hop']} hop {hop['check']!r} is inferred")
            result = hop_result(hop, verdict.get("reasons") or [])
            assert result in ("pass", "not reached", "no rule"), (where, hop["check"], result)
    assert checked > 0
    assert not problems, f"{len(problems)} ok verdicts without a sourced path:\n" + "\n".join(sorted(problems)[:60])


def test_hops_are_ordered_and_judged(manifests: Manifests) -> None:
    feature = next(f for f in manifests.features if f["id"] == "attention-trtllm-mla")
    facts = release_facts(
        {"gpus": assumed_gpus(manifests, "12.0x8"), "topology": {"interconnect": "pcie-switch"}},
        manifests,
        "0.5.9",
        None,
        None,
    )
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 8})  # type: ignore[arg-type]
    verdict = evaluate_feature(feature, ctx)
    assert (verdict["status"], verdict["effect"]) == ("blocked", "crash")
    summary = path_summary(feature, ctx, verdict["reasons"])
    kinds = [h["hop"] for h in summary]
    assert kinds == sorted(kinds, key=HOP_ORDER.index)
    by_kind = {(h["hop"], h["result"]) for h in summary}
    assert ("admission", "pass") in by_kind  # SGLang 0.5.9 admits major 12 ...
    assert ("kernel", "fail") in by_kind  # ... and FlashInfer's TllmGenFmhaRunner refuses sm_120
    # the same on a B200: every hop passes, once FlashInfer's trtllm-gen cubins are known to be there (icubin1: not
    # read, the first kernel may download them or raise under FLASHINFER_NO_DOWNLOAD: unknown)
    facts["gpus"] = assumed_gpus(manifests, "10.0x8")
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 8})  # type: ignore[arg-type]
    verdict = evaluate_feature(feature, ctx)
    assert verdict["status"] == "unknown" and any(r.get("rule") == "fmha-cubins" for r in verdict["reasons"])
    release = facts["packages"]["flashinfer-python"]["version"]
    facts["flashinfer_cubins"] = {"release": release, "ready": {"TRTLLM_GEN_FMHA": True}}
    ctx = Context(facts=facts, manifests=manifests, launch={"tp": 8})  # type: ignore[arg-type]
    verdict = evaluate_feature(feature, ctx)
    assert verdict["status"] == "ok", verdict["reasons"]
    assert all(
        h["result"] in ("pass", "no rule", "not reached") for h in path_summary(feature, ctx, verdict["reasons"])
    )
