"""driver-userspace-match on a hand-written two-part driver.version (issue 16, igap18): compared with the user-space
release on the parts both give (same_release): a difference there fails, equal there is unknown (the part left out
may differ), never ok. On igap18's parent '570.124' against '570.124.06' failed (the rule compared whole strings);
igap18 made it ok, which read a truncated version as a match (the review's question)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

ID = "driver-userspace-match"
RULE = "userspace-equals-kernel-module"


def verdict(manifests: Manifests, version: str, userspace: str) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == ID)
    driver: dict[str, Any] = {"version": version, "userspace_version": userspace}
    facts: dict[str, Any] = {"gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}]}
    facts["driver"] = copy.deepcopy(driver)
    return evaluate_check(spec, Context(facts=facts, manifests=manifests, launch={}))  # type: ignore[arg-type]


def reason(v: CheckVerdict) -> dict[str, Any]:
    return next(dict(r) for r in v["reasons"] if r.get("rule") == RULE)


@pytest.mark.parametrize(("version", "userspace"), [("570.124", "570.124.06"), ("570.124.06", "570.124")])
def test_two_parts_equal_to_three_are_not_decided(manifests: Manifests, version: str, userspace: str) -> None:
    """Equal on the parts both give is not a match: the part left out may differ (570.124.04 against 570.124.06 is
    the mismatch the module refuses), so the verdict is unknown, never ok, and no longer failed (igap18's case)."""
    v = verdict(manifests, version, userspace)
    assert v["status"] == "unknown", v
    assert "570.124" in str(reason(v).get("observed") or reason(v).get("message") or v), v


@pytest.mark.parametrize(
    ("version", "userspace"),
    [("570.124", "570.133.07"), ("570.124", "580.124.06"), ("570.124.06", "570.124.04"), ("570.124.06", "570.124.6")],
)
def test_a_real_mismatch_still_fails(manifests: Manifests, version: str, userspace: str) -> None:
    v = verdict(manifests, version, userspace)
    assert v["status"] == "failed" and reason(v)["result"] == "fail", v


@pytest.mark.parametrize(("version", "userspace"), [("570", "570.124.06"), ("570.x", "570.124.06")])
def test_too_little_to_compare_is_unknown(manifests: Manifests, version: str, userspace: str) -> None:
    assert verdict(manifests, version, userspace)["status"] == "unknown"
