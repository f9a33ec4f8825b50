"""The installers, one plug-in family (stackcheck.plan.installers): every component a step can change has
one, and each writes the commands of its package manager for the box: the driver with apt, dnf or a
comment by the box's OS, flashinfer-python with flashinfer-cubin kept at its version or removed."""

from __future__ import annotations

import copy
import shlex
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import Plan, Step, make_plan
from stackcheck.plan.installers import INSTALLERS
from stackcheck.plan.installers.interface import q
from stackcheck.plan.steps import STEP_ORDER
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

BEFORE = Path(__file__).parent.parent / "plan_cases" / "writeup-before-default" / "facts.json"
_MANIFESTS = load_manifests([], env={})


def _plan(facts: Any) -> Plan:
    ctx = Context(facts=facts, manifests=_MANIFESTS)
    features, _ = evaluate_all(ctx)
    return make_plan(ctx, features)


def _step(plan: Plan, component: str) -> Step:
    return next(s for s in plan.steps if s.component == component)


def test_every_step_kind_has_an_installer() -> None:
    """A component the steps can change without an installer would fail at plan time; one registered that no
    step reaches is dead."""
    assert set(INSTALLERS) == set(STEP_ORDER) - {"patch"}


@pytest.mark.parametrize(
    ("os_text", "first", "alternative"),
    [
        ("Ubuntu 24.04.2 LTS", ["sudo apt-get update", "sudo apt-get install -y nvidia-driver-580-server-open"], True),
        ("Rocky Linux 9.5 (Blue Onyx)", ["sudo dnf module install -y nvidia-driver:580-open"], False),
        ("Arch Linux", None, False),
    ],
)
def test_driver_installer_follows_the_os(os_text: str, first: list[str] | None, alternative: bool) -> None:
    facts = copy.deepcopy(load_facts_file(str(BEFORE)))
    facts["system"]["os"] = os_text
    step = _step(_plan(facts), "driver")
    if first is None:
        assert len(step.commands) == 1 and step.commands[0].startswith("# install the NVIDIA driver branch 580")
    else:
        assert list(step.commands) == first
    assert bool(step.alternatives) == alternative
    for alt in step.alternatives:
        assert all(shlex.split(c) for c in alt.commands)
    assert step.warnings[0].startswith("drain the node first") and step.warnings[-1].startswith("reboot required")


def test_flashinfer_cubin_kept_at_the_version_or_removed() -> None:
    """flashinfer-cubin must match flashinfer-python: installed at the new version when the manifests know
    that release, else uninstalled (with a warning) rather than left mismatched. The default plan of the
    write-up box and one pinned to an older flashinfer take the two branches (shipped manifests)."""
    facts = load_facts_file(str(BEFORE))
    ctx = Context(facts=facts, manifests=_MANIFESTS)
    features, _ = evaluate_all(ctx)
    outcomes = set()
    for pins in (None, {"flashinfer": "0.6.12"}):
        plan = make_plan(ctx, features, pins=pins)
        step = _step(plan, "flashinfer-python")
        known = any(str(r.get("version")) == step.to for r in _MANIFESTS.releases("flashinfer-cubin"))
        install = step.commands[-1]
        assert install.startswith("pip install 'flashinfer-python[") or install.startswith(
            "pip install flashinfer-python"
        )
        if known:
            assert f"flashinfer-cubin=={step.to}" in install and len(step.commands) == 1
            outcomes.add("kept")
        else:
            assert step.commands[0] == "pip uninstall -y flashinfer-cubin" and "flashinfer-cubin" not in install
            assert any("removed rather than left mismatched" in w for w in step.warnings)
            outcomes.add("removed")
    assert outcomes == {"kept", "removed"}


@given(st.text(max_size=12) | st.text(alphabet="ab'\" $@%+=:,./-_\t\né", max_size=12))
def test_q_quotes_as_shlex_does(text: str) -> None:
    # q writes a shell word as shlex.quote does, without importing shlex on the planner's path
    assert q(text) == shlex.quote(text)
