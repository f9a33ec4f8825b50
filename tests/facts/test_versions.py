"""Version handling: our specifier matching agrees with packaging's, and odd versions never raise."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from stackcheck.facts.versions import (
    compare_numeric,
    cuda_from_tag,
    local_tag,
    numeric_tuple,
    parse_specifier,
    public,
    tag_from_cuda,
    variant_of,
    version_in,
)

segments = st.integers(min_value=0, max_value=12)
releases = st.lists(segments, min_size=1, max_size=4).map(lambda xs: ".".join(map(str, xs)))
suffixes = st.sampled_from(["", "rc1", "a2", "b1", ".post1", ".dev0", ".post2.dev1", "rc2.post1"])
locals_ = st.sampled_from(["", "+cu130", "+cu128", "+cpu", "+cu130.post1", "+gabcdef"])
versions = st.builds(lambda r, s, loc: r + s + loc, releases, suffixes, locals_)
ops = st.sampled_from(["==", "!=", ">=", "<=", ">", "<", "~="])
targets = st.builds(lambda r, s: r + s, releases, suffixes)
clauses = st.one_of(
    st.builds(lambda o, t: o + t, ops, targets),
    st.builds(lambda o, r: o + r + ".*", st.sampled_from(["==", "!="]), releases),
)
specs = st.lists(clauses, min_size=1, max_size=3).map(",".join)


@settings(max_examples=3000, deadline=None)
@given(versions, specs)
def test_specifier_matching_agrees_with_packaging(version: str, spec: str) -> None:
    try:
        reference = SpecifierSet(spec)
    except InvalidSpecifier:
        assert parse_specifier(spec) is None
        return
    ours = version_in(version, spec)
    if ours is None:  # we refuse some specifiers packaging accepts only if they are malformed for us too
        assert parse_specifier(spec) is None
        return
    assert ours == reference.contains(Version(Version(version).public), prereleases=True), (version, spec)


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("2.9.1+cu130", "==2.9.1", True),
        ("0.3.21+cu130", ">=0.3.16.post4", True),
        ("0.5.9", ">=0.5.3,<0.5.14", True),
        ("0.5.14", ">=0.5.3,<0.5.14", False),
        ("0.5.9.dev0+gabcdef", "<0.5.9", False),  # PEP 440: <V excludes pre-releases of V
        ("0.5.9.dev0+gabcdef", ">=0.5.9.dev0", True),
        ("0.6.4", "==0.6.3", False),
        ("2.9.1+cu130.post1", "==2.9.1", True),
    ],
)
def test_known_cases(version: str, spec: str, expected: bool) -> None:
    assert version_in(version, spec) is expected


@given(st.text(max_size=40), st.text(max_size=40))
def test_garbage_never_raises(a: str, b: str) -> None:
    version_in(a, b)
    parse_specifier(b)
    public(a)
    local_tag(a)
    numeric_tuple(a)
    compare_numeric(a, b)
    cuda_from_tag(a)
    tag_from_cuda(a)
    variant_of(a)


def test_driver_and_cuda_versions() -> None:
    assert numeric_tuple("580.159.04") == (580, 159, 4)
    assert compare_numeric("580.95.05", "580.65.06") == 1
    assert compare_numeric("13.0", "13.0.0") == 0
    assert cuda_from_tag("cu130") == "13.0"
    assert cuda_from_tag("cu92") == "9.2"
    assert cuda_from_tag("cpu") is None
    assert tag_from_cuda("12.8.1") == "cu128"
    assert variant_of("0.3.21+cu130") == "cu130"
    assert variant_of("2.9.1+cpu") == "cpu"
    assert variant_of("0.5.9.dev0+gabcdef") is None
