"""Shared by the planner's reference tests (tests/plan/test_plan_lean_truth.py, test_plan_kept_lookups.py): the stacks
the planner asks about, and the driver / package parts of a generated box."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from stackcheck.knowledge.loader import Manifests
from stackcheck.plan.solver import Restrict, Space, Stack, enumerate_stacks, read_box
from stackcheck.verdicts.context import Context

#: the packages a generated box moves (kept, removed, or set to a release of the manifests)
PACKAGES = ("torch", "sgl-kernel", "sglang-kernel", "flashinfer-python", "sglang")


def planner_stacks(ctx: Context, spread: int) -> list[Stack]:
    """The best stack of every SGLang release (what _upstream_ok asks) and `spread` evenly spaced others."""
    stacks = sorted(enumerate_stacks(Space(ctx, read_box(ctx)), Restrict()), key=Stack.key)
    best: dict[str, Stack] = {}
    for s in stacks:
        best.setdefault(s.sglang.version, s)
    return list(dict.fromkeys([*best.values(), *stacks[:: max(1, len(stacks) // spread)]]))


def draw_driver_and_packages(draw: st.DrawFn, facts: dict[str, Any], manifests: Manifests) -> None:
    """Maybe replace `facts`' driver (a branch of the manifests, or none loaded), and move each of PACKAGES."""
    branches = [b for b in (manifests.components.get("driver") or {}).get("branches") or [] if isinstance(b, dict)]
    if draw(st.booleans()):
        branch = draw(st.none() | st.sampled_from(branches))
        facts["driver"] = (
            {"version": None, "cuda": None, "source": "none", "error": "NVML: driver not loaded"}
            if branch is None
            else {"version": str(branch.get("first_version") or f"{branch['branch']}.0"), "cuda": branch.get("cuda"),
                  "source": "nvml"}
        )  # fmt: skip
    if isinstance(facts.get("packages"), dict):
        pkgs = dict(facts["packages"])
        for name in PACKAGES:
            what = draw(st.sampled_from(["keep", "keep", "absent", "release"]))
            releases = [str(r["version"]) for r in manifests.releases(name) if isinstance(r.get("version"), str)]
            if what == "absent":
                pkgs[name] = {"installed": False}
            elif what == "release" and releases:
                version = draw(st.sampled_from(releases))
                pkgs[name] = {"installed": True, "version": version, "dist_version": version}
        facts["packages"] = pkgs
