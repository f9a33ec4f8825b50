"""Version handling: our specifier matching agrees with packaging's, and odd versions never raise."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
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


# ---- versions read without packaging (facts.versions._plain) ---------------------------------------------

# written the way packaging writes versions, and the ways it reads but writes otherwise (leading zeros, upper
# case, separators, 'v', an epoch, spaces, bare 'rc', 'c', '-1'), plus local tags with and without its form
_pieces = st.sampled_from(
    ["0", "1", "2", "9", "10", "01", "00", "007", ".", "a", "b", "rc", "c", "RC", "post", ".post", "-post", "dev",
     ".dev", "+", "cu130", "cpu", "nv25", "-", "_", "v", "0!", "1!", " ", "\n", "x", "CU", "gabc", "٣", "²"]
)  # fmt: skip
odd_versions = st.lists(_pieces, max_size=9).map("".join)
plain_locals = st.sampled_from(
    ["", "+cu130", "+cpu", "+cu130.post1", "+gabcdef", "+0", "+1.2", "+nv25.02", "+a0b", "+01", "+cu130.007", "+CU130"]
)
plain_versions = st.builds(lambda r, s, loc: r + s + loc, releases, suffixes, plain_locals)
any_versions = st.one_of(versions, odd_versions, plain_versions)


@settings(max_examples=4000, deadline=None)
@given(any_versions, any_versions)
@example("1_2", "12")
@example("1.0+01", "1.0+1")
@example("1.0+cu_130", "1.0rc01")
@example("1.0.post01", "1.0.post1")
@example("1.0rc1", "1.0c1")
@example("v1.0", " 1.0 ")
def test_plain_versions_read_as_packaging_reads_them(a: str, b: str) -> None:
    from stackcheck.facts import versions as v

    for text in (a, b):
        parsed = Version(text) if _valid(text) else None
        assert v.readable(text) is (parsed is not None), text
        plain = v._plain(text)
        if plain is not None:  # the fast path: packaging reads it, and its tag is packaging's own
            assert parsed is not None, text
            assert plain[4] == parsed.local, text
        assert local_tag(text) == (parsed.local if parsed is not None else None), text
    ref_a = Version(Version(a).public) if _valid(a) else None
    ref_b = Version(Version(b).public) if _valid(b) else None
    assert v.same_public(a, b) is (ref_a == ref_b), (a, b)


def _valid(text: str) -> bool:
    from packaging.version import InvalidVersion

    if len(text) > 200:
        return False
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("2.9.1+cu130", "2.9.1", True),
        ("2.9.1", "2.9.1.0", True),  # trailing zeros do not count
        ("2.9", "2.9.1", False),
        ("0.3.16.post3", "0.3.16.post3", True),
        ("0.3.16.post3", "0.3.16", False),
        ("0.4.0rc3", "0.4.0", False),
        ("0.4.0rc3", "0.4.0rc3+cu128", True),
        ("1.0.dev1", "1.0", False),
        ("1.0a1", "1.0b1", False),
        ("0", "0.0", True),
        ("02.9", "2.9", True),  # packaging's reading, not ours (leading zero): still the same answer
        ("x", "y", True),  # neither is a version: public() is None for both
        ("x", "1.0", False),
    ],
)
def test_same_public_known_pairs(a: str, b: str, same: bool) -> None:
    from stackcheck.facts.versions import same_public

    assert same_public(a, b) is same
    assert same_public(b, a) is same


def test_minor_of_reads_the_first_two_numbers() -> None:
    # (moved from torchao_gate._minor, irev61; torchao_gate and kernel_symbols both read a torch's minor with it)
    from stackcheck.facts.versions import minor_of

    assert minor_of("2.10.0+cu128") == (2, 10) and minor_of("2.8.0.dev20250601") == (2, 8)
    assert minor_of("2.9") == (2, 9) and minor_of("12.8.1") == (12, 8)
    assert minor_of("2") is None and minor_of("x2.9") is None and minor_of("") is None
    assert minor_of("1" * 10 + ".1") is None
