"""imend2: package_checks._unsettled (why a package check's version answer is None, in words) reads the straddled
release from versions.settled, the helper imend added for this, not from straddled_final beside it: the words are
the same for a pre-release or dev build at a range's bound, and for a version the facts do not give."""

from __future__ import annotations

import pytest

from stackcheck.verdicts.package_checks import _unsettled

NOT_GIVEN = "the facts do not give the installed version"


@pytest.mark.parametrize(
    ("version", "spec", "final"),
    [("0.12.0rc1", ">=0.12.0", "0.12.0"), ("0.7.1.dev3", ">=0.7.1", "0.7.1"), ("5.13.0rc1+g1a", "<5.13.0", "5.13.0")],
)
def test_a_build_at_the_bound_is_named(version: str, spec: str, final: str) -> None:
    assert _unsettled(version, spec) == (
        f"{version} is a pre-release or dev build of {final}, whose code is {final}'s or the release's before it: "
        "which is not known"
    )


@pytest.mark.parametrize(("version", "spec"), [(None, ">=0.12.0"), ("0.12.0", ">=0.12.0"), ("0.13.0rc1", ">=0.12.0")])
def test_otherwise_the_version_is_not_given(version: str | None, spec: str) -> None:
    assert _unsettled(version, spec) == NOT_GIVEN
