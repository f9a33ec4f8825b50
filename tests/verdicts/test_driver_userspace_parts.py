"""driver-userspace-match on a hand-written two-part driver.version (issue 16, igap18): compared with the user-space
release on the parts both give (same_release): a difference there fails, equal there is unknown (the part left out
may differ), never ok. On igap18's parent '570.124' against '570.124.06' failed (the rule compared whole strings);
igap18 made it ok, which read a truncated version as a match (the review's question)."""

from __future__ import annotations

from typing import Any

import pytest
from verdicts.test_driver_userspace_match import verdict as match_verdict

from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.types import CheckVerdict

RULE = "userspace-equals-kernel-module"


def verdict(manifests: Manifests, version: str, userspace: str) -> CheckVerdict:
    """The check on one H200 whose driver facts are the two versions (test_driver_userspace_match's reading)."""
    return match_verdict(manifests, {"version": version, "userspace_version": userspace})


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
