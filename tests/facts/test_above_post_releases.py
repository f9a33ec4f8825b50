"""imend3: one "release just above V's post releases" (versions.above_post_releases) for both its readers: the
engine's version operator (post_between: a `<=V` / `>V` rule pair that judges V.postN by neither side) and the launch
refusals' per-release entries (refusals._post_between_entries: a post release no entry takes). Before, the refusals
built it themselves (V padded to three parts, then `.1`) and post_between with the width of its specifier's clauses;
now both write V padded to the most parts any clause they read has, then `.1`. Proved over the real post releases
(sglang 0.5.3.post1-3, 0.5.6.post1-2, 0.5.12.post1, flashinfer 0.6.18.post1, the manifests' own) against every
specifier the manifests hold: the answer of every clause is the one the old widths gave, and the one a much finer
release (V.0.0.0.0.1) gets, so no verdict of the shipped data moves; where a clause is finer than three parts, the
refusals' old width read a release past it."""

from __future__ import annotations

import re
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackcheck.facts.versions import above_post_releases, post_between, version_in
from stackcheck.knowledge.loader import load
from stackcheck.launch.refusals import _for_release, _post_between_entries

MANIFESTS = load([], env={})

# real post releases: SGLang's (pypi.org/project/sglang/#history: 0.5.3.post1-3, 0.5.6.post1-2, 0.5.12.post1,
# 0.5.4.post3, 0.5.15.post1 as imend2 listed them), flashinfer-python 0.6.18.post1, and every one the manifests name
_NAMED = ["0.5.3.post1", "0.5.3.post2", "0.5.3.post3", "0.5.6.post1", "0.5.6.post2", "0.5.12.post1", "0.5.4.post3",
          "0.5.15.post1", "0.6.18.post1"]  # fmt: skip


def _strings(node: Any, out: list[str]) -> list[str]:
    if isinstance(node, dict):
        for value in node.values():
            _strings(value, out)
    elif isinstance(node, list):
        for value in node:
            _strings(value, out)
    elif isinstance(node, str):
        out.append(node)
    return out


def _specs() -> list[str]:
    """Every string of the manifests that packaging reads as a specifier set with an ordered clause."""
    seen = set()
    for text in _strings([MANIFESTS.launch, MANIFESTS.features, MANIFESTS.checks], []):
        if text in seen or not re.match(r"^\s*(<=|>=|<|>|==|!=|~=)\s*\d", text) or len(text) > 200:
            continue
        try:
            SpecifierSet(text)
        except ValueError:
            continue
        seen.add(text)
    return sorted(seen)


def _release_lists(node: Any, out: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Every per-release list of launch.json (entries with `versions`)."""
    if isinstance(node, dict):
        for value in node.values():
            _release_lists(value, out)
    elif isinstance(node, list):
        if node and all(isinstance(e, dict) and isinstance(e.get("versions"), str) for e in node):
            out.append(node)
        for value in node:
            _release_lists(value, out)
    return out


SPECS = _specs()
LISTS = _release_lists(MANIFESTS.launch, [])
REAL = sorted(
    {*_NAMED, *(s for s in _strings([MANIFESTS.components], []) if re.fullmatch(r"\d+(\.\d+)+\.post\d+", s))},
    key=Version,
)


def _old_refusals_above(version: str) -> str:
    """The refusals' own release above before imend3: V's release padded to three parts, then `.1`."""
    release = Version(version).release
    return ".".join(map(str, release)) + ".0" * max(0, 3 - len(release)) + ".1"


def test_the_data_is_read() -> None:
    assert len(SPECS) > 300 and len(LISTS) > 200 and len(REAL) > 30, (len(SPECS), len(LISTS), len(REAL))
    assert "0.5.3.post3" in REAL and "0.6.18.post1" in REAL


@pytest.mark.parametrize(
    ("version", "specs", "expected"),
    [
        ("0.5.3.post1", [], ("0.5.3", "0.5.3.1")),
        ("0.5.3.post2", ["<=0.5.3", ">0.5.3"], ("0.5.3", "0.5.3.1")),
        ("0.5.3.post1.dev0", ["<=0.5.3"], ("0.5.3", "0.5.3.1")),
        ("0.6.18.post1+cu130", [">=0.6.18"], ("0.6.18", "0.6.18.1")),
        ("0.5.post1", [], ("0.5", "0.5.1")),
        ("0.5.post1", ["<=0.5.0"], ("0.5", "0.5.0.1")),  # the old refusals' width, from the clause
        ("0.5.3.post1", ["<=0.5.3", ">0.5.3,<0.5.3.0.2"], ("0.5.3", "0.5.3.0.0.1")),  # a finer clause, a finer release
        ("0.5.3.post1", ["==0.5.3.0.*"], ("0.5.3", "0.5.3.0.1")),  # a wildcard's prefix counts
        ("0.5.3.post1", ["<=0.5.3,===foo", "not a specifier"], ("0.5.3", "0.5.3.1")),  # neither adds a width
        ("1!0.5.3.post1", ["<=1!0.5.3"], ("1!0.5.3", "1!0.5.3.1")),
        ("0.5.3", ["<=0.5.3"], None),
        ("0.5.3rc1.post1", ["<=0.5.3"], None),  # a post release of a pre-release: straddled_final's case
        ("not a version", [], None),
    ],
)
def test_above_post_releases(version: str, specs: list[str], expected: tuple[str, str] | None) -> None:
    assert above_post_releases(version, specs) == expected


@pytest.mark.parametrize("version", REAL)
def test_each_clause_answers_as_before_and_as_a_finer_release(version: str) -> None:
    """For every specifier of the manifests: the release above that post_between reads (its own clauses' width) and
    the one the refusals read (every entry's width) get the answer the old widths gave and the answer of a release
    just above V's post releases at a width finer than any clause (V.0.0.0.0.1): no verdict moves."""
    base = str(Version(version).public).split(".post")[0]
    finer = base + ".0.0.0.0.1"
    assert Version(f"{base}.post99") < Version(finer) < Version(_old_refusals_above(version))
    for spec in SPECS:
        s = SpecifierSet(spec)
        want = s.contains(Version(finer), prereleases=True)
        got = above_post_releases(version, [spec])
        assert got is not None and got[0] == base
        assert version_in(got[1], spec) is want, (version, spec, got)
        widths = [len(Version(c.version).release) for c in s if "*" not in c.version]
        old_width = max([len(Version(base).release), *widths])
        old = ".".join(map(str, [*Version(base).release, *[0] * (old_width - len(Version(base).release)), 1]))
        assert old == got[1], (version, spec)  # post_between's own width, unchanged
    for entries in LISTS:
        got = above_post_releases(version, [e["versions"] for e in entries])
        assert got is not None
        old = _old_refusals_above(version)
        assert _for_release(entries, got[1]) is _for_release(entries, old), (version, entries)
        assert _for_release(entries, got[1]) is next(
            (e for e in entries if SpecifierSet(e["versions"]).contains(Version(finer), prereleases=True)), None
        ), (version, entries)


def test_post_between_reads_an_arbitrary_equality_clause() -> None:
    # before: an `===` clause's target was read as a version for the width, and post_between failed (AssertionError,
    # an internal error of the audit) on a user manifest's rule `<=0.5.3,===foo`
    assert post_between("0.5.3.post1", "<=0.5.3,===foo") is None  # False for 0.5.3 and above: False stands
    assert post_between("0.5.3.post1", "<=0.5.3,!=0.5.2") == "0.5.3"


def test_a_refusal_entry_finer_than_three_parts_is_read_at_its_width() -> None:
    # entries split inside 0.5.3's gap (`>0.5.3,<0.5.3.1` refuses, nothing else does): the release just above
    # 0.5.3's post releases is taken by the refusing entry; before, the refusals' width-3 release 0.5.3.1 fell past
    # it, no entry applied, and the rule said nothing for 0.5.3.post1 (a false pass)
    refusing = {"versions": ">0.5.3,<0.5.3.1", "applies": True}
    entries = [{"versions": "<=0.5.3", "applies": False}, refusing, {"versions": ">=0.5.3.1", "applies": False}]
    assert _post_between_entries(entries, "0.5.3.post1") == ("0.5.3", [refusing])
    assert _post_between_entries(entries[:1] + entries[2:], "0.5.3.post1") is None
