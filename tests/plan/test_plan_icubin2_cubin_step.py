"""icubin2: a plan that moves FlashInfer to a release whose trtllm-gen cubins the box lacks carries the cubin step.

Each FlashInfer release reads its cubins from directories named by commit (flashinfer/artifacts.py ArtifactPath),
so the old release's files (the flashinfer-cubin package, or a complete cache) do not serve the new one. Where the
plan removes flashinfer-cubin (no release of it known for the target: install_flashinfer) or the box refuses
downloads (FLASHINFER_NO_DOWNLOAD), the step runs `python -m flashinfer download-cubin`, and the facts the plan's
verdicts are judged on say so: flashinfer-cubin not installed after the step (it was kept at the new version, with
its cubins ready, while the step uninstalled it: recommend then proposed trtllm_mha on cubins the plan removed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import Plan, Step, make_plan
from stackcheck.plan.hypothetical import apply_choice, cubins_lacking_after
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

CASES = Path(__file__).resolve().parent.parent / "cases"
_MANIFESTS = load_manifests()
STEP = "python -m flashinfer download-cubin"


def plan_of(case: str) -> tuple[Context, Plan]:
    facts = load_facts_file(str(CASES / case / "facts.json"))
    ctx = Context(facts=facts, manifests=_MANIFESTS)
    features, _ = evaluate_all(ctx)
    return ctx, make_plan(ctx, features)


def step_of(plan: Plan, component: str) -> Step | None:
    return next((s for s in plan.steps if s.component == component), None)


@pytest.mark.parametrize(("case", "want"), [("b200-cubin-package", True), ("b200-cubins-offline", True),
                                            ("b200", False)])  # fmt: skip
def test_the_flashinfer_step_carries_the_cubin_step(case: str, want: bool) -> None:
    ctx, plan = plan_of(case)
    step = step_of(plan, "flashinfer-python")
    assert step is not None and step.to != ctx.installed_version("flashinfer-python")
    assert (STEP in step.commands) is want
    if want:
        install = next(i for i, c in enumerate(step.commands) if c.startswith("pip install"))
        assert step.commands.index(STEP) > install  # after the new release is installed
        assert any("download-cubin" in w and "server's user" in w for w in step.warnings)


def test_the_planned_facts_follow_the_step() -> None:
    ctx, plan = plan_of("b200-cubin-package")
    step = step_of(plan, "flashinfer-python")
    assert step is not None and "pip uninstall -y flashinfer-cubin" in step.commands
    from stackcheck.plan.solver import Choice

    after: Any = apply_choice(ctx.facts, Choice("flashinfer", "flashinfer-python", str(step.to)), ctx)
    assert after["packages"]["flashinfer-cubin"] == {"installed": False}  # as the step leaves it
    cubins = after["flashinfer_cubins"]
    assert cubins["release"] == step.to and cubins["planned"] is True and cubins["dir_source"] == "cache"
    assert cubins["ready"]["TRTLLM_GEN_FMHA"] is True  # fetched by the step's download-cubin


def test_cubins_lacking_after() -> None:
    assert cubins_lacking_after({"flashinfer_cubins": {"dir_source": "flashinfer-cubin"}}, False)
    assert not cubins_lacking_after({"flashinfer_cubins": {"dir_source": "flashinfer-cubin"}}, True)  # kept
    assert cubins_lacking_after({"flashinfer_cubins": {"dir_source": "cache", "no_download": True}}, False)
    complete = {"TRTLLM_GEN_FMHA": {"manifest": True, "listed": 3, "missing": 0}}
    assert cubins_lacking_after({"flashinfer_cubins": {"dir_source": "cache", "families": complete}}, False)
    assert not cubins_lacking_after({"flashinfer_cubins": {"dir_source": "cache", "families": {}}}, False)
    assert not cubins_lacking_after({"flashinfer_cubins": {"error": "not read"}}, False)
    assert not cubins_lacking_after({}, False)
