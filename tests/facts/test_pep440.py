"""stackcheck.facts.pep440.Version against packaging.version.Version: the same texts read, the same attributes and
normal form, the same order and equality (and equal hashes where equal), on generated versions in every spelling
PEP 440 accepts and on odd texts."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from packaging.version import InvalidVersion as RefInvalid
from packaging.version import Version as Ref

from stackcheck.facts.pep440 import InvalidVersion, Version

_num = st.integers(min_value=0, max_value=30).map(str) | st.sampled_from(["00", "007", "010", "12345678901234567890"])
_sep = st.sampled_from(["", ".", "-", "_"])
_release = st.lists(_num, min_size=1, max_size=5).map(".".join)
_pre = st.one_of(
    st.just(""),
    st.builds(
        lambda s1, w, s2, n: s1 + w + s2 + n,
        _sep,
        st.sampled_from(["a", "alpha", "b", "beta", "c", "rc", "pre", "preview", "RC", "Alpha", "PREVIEW"]),
        _sep,
        st.one_of(st.just(""), _num),
    ),
)
_post = st.one_of(
    st.just(""),
    st.builds(lambda n: "-" + n, _num),
    st.builds(
        lambda s1, w, s2, n: s1 + w + s2 + n,
        _sep,
        st.sampled_from(["post", "rev", "r", "POST", "Rev"]),
        _sep,
        st.one_of(st.just(""), _num),
    ),
)
_dev = st.one_of(
    st.just(""),
    st.builds(
        lambda s1, w, s2, n: s1 + w + s2 + n, _sep, st.sampled_from(["dev", "DEV"]), _sep, st.one_of(st.just(""), _num)
    ),
)
_local_part = st.one_of(_num, st.sampled_from(["cu130", "cpu", "nv25", "gabc", "a0b", "CU128", "0a", "z"]))
_local = st.one_of(
    st.just(""),
    st.builds(
        lambda first, rest: "+" + first + "".join(s + p for s, p in rest),
        _local_part,
        st.lists(st.tuples(st.sampled_from([".", "-", "_"]), _local_part), max_size=3),
    ),
)
_epoch = st.one_of(st.just(""), st.builds(lambda n: n + "!", _num))
_space = st.sampled_from(["", " ", "\t", "\n "])
well_formed = st.builds(
    lambda sp1, v, e, r, pre, post, dev, loc, sp2: sp1 + v + e + r + pre + post + dev + loc + sp2,
    _space,
    st.sampled_from(["", "v", "V"]),
    _epoch,
    _release,
    _pre,
    _post,
    _dev,
    _local,
    _space,
)
_pieces = st.sampled_from(
    ["0", "1", "9", "10", "01", ".", "..", "a", "b", "rc", "c", "post", "-post", "r", "rev", "dev", "+", "cu130",
     "-", "_", "v", "!", "0!", " ", "x", "٣", "²", "K", "ſ", "ı", "+-", "++", "1.", ".1"]
)  # fmt: skip
odd = st.lists(_pieces, max_size=10).map("".join)
texts = st.one_of(well_formed, odd)

ATTRIBUTES = ("epoch", "release", "pre", "post", "dev", "local", "public", "base_version", "is_prerelease",
              "is_postrelease", "is_devrelease", "major", "minor", "micro")  # fmt: skip


def _read(cls: type, error: type[Exception], text: str) -> Any:
    try:
        return cls(text)
    except error:
        return None


@settings(max_examples=4000, deadline=None)
@given(texts)
@example("1.0+01")
@example("1.0-1")
@example("1.0.post")
@example("1!2.0rc.dev")
@example(" v1.0_PREVIEW-3.REV_4-dev+CU_130 ")
@example("1.0+\u212a")  # the Kelvin sign, which folds to k: not ASCII, refused
@example("1.0a-")
@example("1.0a.post1")
@example("1.0-dev")
@example("1.0a-1")
def test_a_version_reads_as_packaging_reads_it(text: str) -> None:
    ref, ours = _read(Ref, RefInvalid, text), _read(Version, InvalidVersion, text)
    assert (ours is None) is (ref is None), text
    if ref is None or ours is None:
        return
    assert str(ours) == str(ref), text
    for name in ATTRIBUTES:
        assert getattr(ours, name) == getattr(ref, name), (text, name)


_normal = st.builds(
    lambda r, pre, post, dev, loc: r + pre + post + dev + loc,
    _release,
    st.sampled_from(["", "a0", "b1", "rc2", "rc01"]),
    st.sampled_from(["", ".post0", ".post3"]),
    st.sampled_from(["", ".dev0", ".dev10"]),
    st.sampled_from(["", "+cu130", "+cpu", "+cu130.post1", "+0", "+1.2", "+nv25.02", "+a0b", "+01", "+CU130"]),
)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(texts, _normal))
@example("0.3.14.post1+cu128")
@example("2.14.1+cu132")
@example("0.6.17.dev0")
def test_parse_version_builds_what_the_full_reading_gives(text: str) -> None:
    # versions.parse_version builds a version in normal form from versions._PLAIN's parts (Version.normal)
    from stackcheck.facts import versions

    versions.parse_version.cache_clear()
    ours, full = versions.parse_version(text), _read(Version, InvalidVersion, text)
    assert (ours is None) is (full is None), text
    if ours is None:
        return
    assert str(ours) == str(full) and ours.key() == full.key() and hash(ours) == hash(full), text
    for name in ATTRIBUTES:
        assert getattr(ours, name) == getattr(full, name), (text, name)


@settings(max_examples=4000, deadline=None)
@given(well_formed, well_formed)
@example("1.0", "1.0.0")
@example("1.0.dev0", "1.0a0")
@example("1.0a1.dev0", "1.0a1")
@example("1.0.post1.dev0", "1.0.post1")
@example("1.0", "1.0.post0.dev0")
@example("1.0+abc", "1.0+1")
@example("1.0+1.a", "1.0+1")
@example("1!0.1", "2.0")
@example("1.0rc1", "1.0c1")
def test_versions_order_as_packaging_orders_them(a: str, b: str) -> None:
    ra, rb = _read(Ref, RefInvalid, a), _read(Ref, RefInvalid, b)
    oa, ob = _read(Version, InvalidVersion, a), _read(Version, InvalidVersion, b)
    if ra is None or rb is None or oa is None or ob is None:
        assert (ra is None, rb is None) == (oa is None, ob is None), (a, b)
        return
    for op in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"):
        assert getattr(oa, op)(ob) == getattr(ra, op)(rb), (a, b, op)
    if oa == ob:
        assert hash(oa) == hash(ob), (a, b)


def test_a_sorted_list_of_generated_versions_is_packagings_order() -> None:
    # every combination of the parts that order differently, sorted by both: the same sequence
    parts = itertools.product(
        ["", "1!"], ["1", "1.0", "1.0.1", "2"], ["", "a1", "b0", "rc2"], ["", ".post0", ".post3"],
        ["", ".dev0", ".dev2"], ["", "+cpu", "+1", "+cu130.2", "+cu130.a"],
    )  # fmt: skip
    written = ["".join(p) for p in parts]
    by_ref = sorted(written, key=lambda t: (Ref(t), t))
    by_ours = sorted(written, key=lambda t: (Version(t), t))
    assert by_ours == by_ref


@pytest.mark.parametrize("bad", [None, 1, b"1.0"])
def test_what_is_not_text_is_refused(bad: object) -> None:
    with pytest.raises((InvalidVersion, TypeError)):
        Version(bad)  # type: ignore[arg-type]


def test_other_types_do_not_compare() -> None:
    assert Version("1.0") != "1.0"
    with pytest.raises(TypeError):
        _ = Version("1.0") < "1.1"  # type: ignore[operator]
