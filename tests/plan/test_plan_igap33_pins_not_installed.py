"""igap33: the plan's SGLang step installs what the target release pins where the box lacks it entirely.

`pip install sglang==R` installs every Requires-Dist of R that carries no marker, whether or not the box had the
package: transformers==X (0.5.3-0.5.23), torchao==0.9.0 / 0.17.0 (0.5.3-0.5.17) (sglang wheels' METADATA,
components.json `requires`; 0.5.1 and 0.5.2 keep both under the runtime-common extra: `requires_read.markers`). On
the parent the facts after the plan moved only packages the box had installed (solver.pinned_companions), so a box
whose packages probe listed transformers and torchao as not installed kept them so after a plan to SGLang 0.5.14, and
the planned stack's checks said "not installed" (transformers-installed, torchao-installed: crashes pip would not
leave). Boxes from tests/plan_cases/writeup-before-default (SGLang 0.5.9, torch 2.9.1)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan import Plan
from stackcheck.plan.planner import plan_and_facts
from stackcheck.plan.solver import pinned_additions
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all, evaluate_check

BOX = Path(__file__).parent.parent / "plan_cases" / "writeup-before-default" / "facts.json"
_MANIFESTS = load_manifests([], env={})


def _facts(**installed: str | None) -> dict[str, Any]:
    """The box with each named package listed by the probe as not installed (None) or installed at a version."""
    facts: dict[str, Any] = copy.deepcopy(json.loads(BOX.read_text())["facts"])
    for name, version in installed.items():
        key = name.replace("_", "-")
        entry = {"installed": True, "version": version, "dist_version": version}
        facts["packages"][key] = {"installed": False} if version is None else entry
    return facts


def _plan(facts: dict[str, Any], to: str) -> tuple[Plan, Any]:
    ctx = Context(facts=facts, manifests=_MANIFESTS)  # type: ignore[arg-type]  # a facts document, read as JSON
    features, _ = evaluate_all(ctx)
    return plan_and_facts(ctx, features, pins={"sglang": to}, upstream=False)


def _reasons(facts: dict[str, Any], check_id: str) -> list[str]:
    check = next(c for c in _MANIFESTS.checks if c["id"] == check_id)
    verdict = evaluate_check(check, Context(facts=facts, manifests=_MANIFESTS))  # type: ignore[arg-type]
    return [str(r.get("rule")) for r in verdict["reasons"] if r.get("result") == "fail"]


def _release(version: str) -> dict[str, Any]:
    return dict(next(r for r in _MANIFESTS.releases("sglang") if str(r.get("version")) == version))


@pytest.mark.parametrize(
    ("to", "transformers", "torchao"), [("0.5.14", "5.8.1", "0.17.0"), ("0.5.10", "5.3.0", "0.9.0")]
)
def test_a_pinned_package_the_box_lacks_is_installed_after_the_sglang_step(
    to: str, transformers: str, torchao: str
) -> None:
    facts = _facts(transformers=None, torchao=None)
    assert "transformers-installed" in _reasons(facts, "sglang-start-imports")  # the box as it is: a crash
    plan, after = _plan(facts, to)
    assert after is not None and plan.error is None
    assert after["packages"]["transformers"]["installed"] is True
    assert after["packages"]["transformers"]["version"] == transformers
    assert after["packages"]["torchao"]["version"] == torchao
    assert "transformers-installed" not in _reasons(after, "sglang-start-imports")
    assert "torchao-installed" not in _reasons(after, "torchao-import")
    step = next(s for s in plan.steps if s.component == "sglang")
    pin = f"sglang {to} pins transformers=={transformers}"
    assert any(f"pip also installs transformers {transformers} ({pin})" in w for w in step.warnings), step.warnings


def test_a_pin_under_an_extra_is_not_installed_by_the_plain_install() -> None:
    # 0.5.2's METADATA: transformers==4.56.1 and torchao==0.9.0 only under extra == "runtime-common"
    packages = _facts(transformers=None, torchao=None)["packages"]
    assert pinned_additions(_release("0.5.2"), packages) == {}
    assert pinned_additions(_release("0.5.3"), packages) == {"transformers": "4.57.0", "torchao": "0.9.0"}


def test_only_packages_listed_as_not_installed_are_added() -> None:
    # a package the facts do not name at all is not known to be absent; an installed one is pinned_companions' case;
    # the planner's own components (torch, the kernel package, FlashInfer) have their own steps
    packages = _facts(transformers=None)["packages"]
    packages.pop("torchao", None)
    packages["sgl-kernel"] = {"installed": False}
    packages["flashinfer-python"] = {"installed": False}
    assert pinned_additions(_release("0.5.14"), packages) == {"transformers": "5.8.1"}
    packages["transformers"] = {"installed": True, "version": "5.6.0"}
    assert pinned_additions(_release("0.5.14"), packages) == {}
