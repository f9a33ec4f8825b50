"""plan --to sglang==R with a package SGLang R pins exactly installed beside it (sgl-deep-ep, pinned by 0.5.18-0.5.23
in components.json from their Requires-Dist): `pip install sglang==R` brings it to R's pin, so the facts after the
plan hold the pinned version (never the old one beside the new SGLang: a mismatched pair) and the SGLang step says
so. On the parent the facts after the plan kept the old sgl-deep-ep and the step said nothing."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import Plan
from stackcheck.plan.planner import plan_and_facts
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

BOX = Path(__file__).parent.parent / "cases" / "h200-newest" / "facts.json"
_MANIFESTS = load_manifests([], env={})


def _facts(sglang: str, deep_ep: str | None) -> dict[str, Any]:
    doc = json.loads(BOX.read_text())
    facts: dict[str, Any] = copy.deepcopy(doc["facts"])
    pkgs = facts["packages"]
    pkgs["sglang"].update(version=sglang, dist_version=sglang)
    if deep_ep is not None:
        pkgs["sgl-deep-ep"] = {"installed": True, "version": deep_ep, "dist_version": deep_ep,
                               "location": pkgs["sglang"]["location"], "editable": False, "copies": 1}  # fmt: skip
    return facts


def _plan(facts: dict[str, Any], to: str) -> tuple[Plan, Any]:
    ctx = Context(facts=facts, manifests=_MANIFESTS)  # type: ignore[arg-type]  # a facts document, read as JSON
    features, _ = evaluate_all(ctx)
    return plan_and_facts(ctx, features, pins={"sglang": to}, upstream=False)


def _pin(release: str, name: str) -> str:
    rel = next(r for r in _MANIFESTS.releases("sglang") if r.get("version") == release)
    return str(rel["requires"][name]).removeprefix("==")


@pytest.mark.parametrize(
    ("installed", "box_ep", "to"), [("0.5.18", "0.1.0", "0.5.19"), ("0.5.23", "0.1.2.post1", "0.5.18")]
)
def test_sgl_deep_ep_follows_the_target_pin(installed: str, box_ep: str, to: str) -> None:
    # fails on the parent: the facts after the plan kept box_ep
    plan, after = _plan(_facts(installed, box_ep), to)
    want = _pin(to, "sgl-deep-ep")
    assert want != box_ep
    assert after is not None and after["packages"]["sgl-deep-ep"]["version"] == want, after["packages"]["sgl-deep-ep"]
    step = next(s for s in plan.steps if s.component == "sglang")
    assert any(f"sgl-deep-ep {box_ep} with {want}" in w for w in step.warnings), step.warnings


def test_a_binary_read_of_the_old_build_is_dropped() -> None:
    # the architectures read from the old build's files no longer describe the box after the step
    facts = _facts("0.5.18", "0.1.0")
    facts["binaries"] = {"sgl-deep-ep": {"archs": ["sm_90"]}}
    _, after = _plan(facts, "0.5.19")
    assert after is not None and "sgl-deep-ep" not in (after.get("binaries") or {})


def test_same_pin_or_not_installed_left_alone() -> None:
    # passes on the parent too: 0.5.19 and 0.5.20 pin the same sgl-deep-ep; a package not installed is not added
    plan, _ = _plan(_facts("0.5.19", _pin("0.5.20", "sgl-deep-ep")), "0.5.20")
    step = next(s for s in plan.steps if s.component == "sglang")
    assert not any("sgl-deep-ep" in w for w in step.warnings), step.warnings
    _, after2 = _plan(_facts("0.5.18", None), "0.5.19")
    assert after2 is not None and "sgl-deep-ep" not in after2["packages"]
