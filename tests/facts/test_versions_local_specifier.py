"""igap44 (issue 16): version_in dropped the installed version's local tag before every clause, so `==2.9.1+cu128`
did not hold for 2.9.1+cu128 (and held for nothing), and `===2.9.1` held for 2.9.1+cu128. PEP 440: a specifier
version with a local label compares the candidate's label too (strict equality of the normalised label); one without
ignores the candidate's; `===` is string equality of the whole version. packaging's SpecifierSet is the reference.
No manifest specifier names a local label today, so no verdict changes (tests/cases/update_expected.py)."""

from __future__ import annotations

import itertools

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackcheck.facts.versions import version_in, version_in_settled

VERSIONS = ["2.9.1", "2.9.1+cu128", "2.9.1+cu130", "2.9.1+CU128", "2.9.1+cu128.post1", "2.9.0+cu128", "2.9.2",
            "2.9.1.post1+cu128", "2.9.1rc1+cu128", "1!2.9.1+cu128", "2.9.1+cu-128"]  # fmt: skip
SPECS = ["==2.9.1+cu128", "!=2.9.1+cu128", "==2.9.1", "!=2.9.1", "===2.9.1", "===2.9.1+cu128", ">=2.9.1", ">2.9.1",
         "<=2.9.1", "<2.9.2", "==2.9.*", "==2.9.1+cu128,>=2.9", "~=2.9.0", "==2.9.1+cu_128",
         "==1!2.9.1+cu128"]  # fmt: skip


@pytest.mark.parametrize(("version", "spec"), list(itertools.product(VERSIONS, SPECS)))
def test_agrees_with_packaging(version: str, spec: str) -> None:
    want = SpecifierSet(spec, prereleases=True).contains(Version(version), prereleases=True)
    assert version_in(version, spec) is want, (version, spec)


@pytest.mark.parametrize(
    ("version", "spec", "want"),
    [
        ("2.9.1+cu128", "==2.9.1+cu128", True),  # before: False (the installed tag was dropped)
        ("2.9.1+cu130", "==2.9.1+cu128", False),
        ("2.9.1", "==2.9.1+cu128", False),
        ("2.9.1+cu128", "!=2.9.1+cu128", False),  # before: True
        ("2.9.1+cu128", "===2.9.1", False),  # before: True
        ("2.9.1+cu128", "==2.9.1", True),
    ],
)
def test_a_local_tag_in_the_specifier_is_compared(version: str, spec: str, want: bool) -> None:
    assert version_in(version, spec) is want
    assert version_in_settled(version, spec) is want
