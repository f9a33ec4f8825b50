"""The reading test_when_unknown.py fixes (a rule whose `when` is not known is met where its `require` holds) is
right only while a requirement that holds on the facts given holds however the unknown turns out: no rule may read,
in its `require`, a fact whose value the unknown part would change (a release's record, a default, a negated
`exists` of a fact simply not given). This walks that property over boxes made from the case folders with one part
taken away (a package's version, the machine, one GPU's compute capability) and fills the part back in every way
the manifests know (each release, each architecture and the pre-Ampere ones, each machine): a rule that passed while
its `when` was not known must not fail on any of them (irev38: 0 of 636 such passes in the case folders fail)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.knowledge.loader import Manifests
from stackcheck.knowledge.types import Rule
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import _rule_per_gpu, evaluate_predicate, evaluate_rules

CASES = Path(__file__).resolve().parent.parent / "cases"
BOXES = ["h200-newest", "b200", "gb10-cu130-pypi-kernel", "rtxpro6000-pcie-iommu-translated", "rtx4090-pcie-sglang044",
         "rubin-sm107-sglang0523", "b200-deepgemm-nvcc128"]  # fmt: skip
PACKAGES = ["sglang", "torch", "sgl-kernel", "sglang-kernel", "flashinfer-python", "triton", "apache-tvm-ffi"]


def _facts(case: str) -> dict[str, Any]:
    _, ctx = build_report(Options(facts_file=str(CASES / case / "facts.json")), want_plan=False)
    return dict(ctx.facts)


def _taken_away(facts: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    packages = facts.get("packages") or {}
    for name in PACKAGES:
        if isinstance(packages.get(name), dict) and packages[name].get("version"):
            f = copy.deepcopy(facts)
            f["packages"][name] = {k: v for k, v in packages[name].items() if k != "version"}
            yield f"{name} version", f
    if (facts.get("system") or {}).get("machine"):
        f = copy.deepcopy(facts)
        f["system"] = {k: v for k, v in f["system"].items() if k != "machine"}
        yield "machine", f
    if facts.get("gpus"):
        f = copy.deepcopy(facts)
        f["gpus"].append({"index": len(f["gpus"]), "name": None, "error": "NVML: Unknown Error"})
        yield "one GPU unread", f


def _filled_in(manifests: Manifests, what: str, facts: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    if what.endswith(" version"):
        name = what.removesuffix(" version")
        for release in manifests.releases(name):
            f = copy.deepcopy(facts)
            f["packages"][name] = {**f["packages"][name], "version": str(release["version"])}
            yield f"{name} {release['version']}", f
    elif what == "machine":
        for machine in ("x86_64", "aarch64"):
            f = copy.deepcopy(facts)
            f["system"] = {**f["system"], "machine": machine}
            yield machine, f
    else:
        for cc in [str(a["compute_capability"]) for a in manifests.architectures] + ["7.0", "7.5"]:
            f = copy.deepcopy(facts)
            f["gpus"][-1] = {"index": f["gpus"][-1]["index"], "name": "GPU", "compute_capability": cc}
            yield f"the unread GPU a {cc}", f


def _passes_with_when_unknown(manifests: Manifests, facts: dict[str, Any]) -> list[tuple[str, Rule]]:
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    models = ctx.gpu_models()
    out = []
    for item in [*manifests.features, *manifests.checks]:
        for rule in item.get("rules") or []:
            if "when" not in rule:
                continue
            targets = [*models, None] if _rule_per_gpu(rule) and models else [None]
            for gpu in targets:
                if (
                    evaluate_predicate(rule["when"], ctx, gpu).value is None
                    and evaluate_predicate(rule.get("require"), ctx, gpu).value is True
                ):
                    out.append((str(item["id"]), rule))
                    break
    return out


@pytest.mark.parametrize("case", BOXES)
def test_a_rule_met_while_its_when_is_unknown_fails_on_no_completion(manifests: Manifests, case: str) -> None:
    bad = []
    for what, facts in _taken_away(_facts(case)):
        passed = _passes_with_when_unknown(manifests, facts)
        if not passed:
            continue
        for label, filled in _filled_in(manifests, what, facts):
            ctx = Context(facts=filled, manifests=manifests, launch={})  # type: ignore[arg-type]
            for item, rule in passed:
                for reason in evaluate_rules({"rules": [rule]}, ctx):
                    if reason.get("result") == "fail":
                        bad.append(f"{case} without its {what}: {item}/{rule['id']} passed, fails with {label}")
    assert not bad, bad[:10]
