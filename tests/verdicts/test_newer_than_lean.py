"""Context.newer_than_manifests reads Manifests.newer_than_every_release (iperf28: the releases walked from the newest,
stopped at the first the version is not newer than) instead of parsing every release for newest_release: held equal
to the straightforward reading (the installed version against the parsed newest release) on generated versions of
every package the features need, around each release the manifests record, with and without newest_release asked
first, and on manifests whose releases are listed in another order or hold an unreadable version."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.facts.versions import parse_version, public
from stackcheck.knowledge.loader import Manifests, load
from stackcheck.verdicts.context import Context

M = load([], env={})


def _reference(manifests: Manifests, name: str, installed: str | None) -> str | None:
    """The reading before iperf28: newest_release parsed, compared with the installed version's public part."""
    if installed is None:
        return None
    known = [v for v in (parse_version(str(r.get("version", ""))) for r in manifests.releases(name)) if v is not None]
    if not known:
        return None
    iv, nv = public(installed), parse_version(str(max(known)))
    return installed if iv is not None and nv is not None and iv > nv else None


def _packages() -> list[str]:
    names = {a for f in M.features for need in f.get("needs") or [] for a in str(need).split("|")}
    return sorted(n for n in names if M.releases(n))


def _around(version: str) -> list[str]:
    """Versions at, just below and just above a release, and local, pre-, post- and dev- variants of it."""
    v = parse_version(version)
    assert v is not None
    release = list(v.release)
    bumped = [*release[:-1], release[-1] + 1]
    lower = [*release[:-1], release[-1] - 1] if release[-1] > 0 else [*release, 0]
    out = [version, f"{version}+cu130", f"{version}.post1", f"{version}.dev0", f"{version}rc1"]
    out += [".".join(map(str, bumped)), ".".join(map(str, bumped)) + "rc1", ".".join(map(str, lower))]
    out += [".".join(map(str, [release[0] + 1, 0])), "not-a-version"]
    return out


def _ctx(manifests: Manifests, name: str, installed: str) -> Context:
    facts: dict[str, Any] = {"packages": {name: {"installed": True, "version": installed}}}
    return Context(facts=facts, manifests=manifests)  # type: ignore[arg-type]


def test_packages_are_many() -> None:
    assert len(_packages()) >= 4


@pytest.mark.parametrize("asked_first", [False, True])
def test_equal_to_the_newest_release_reading(asked_first: bool) -> None:
    manifests = load([], env={})
    n = newer = 0
    for name in _packages():
        if asked_first:
            manifests.newest_release(name)
        for rel in manifests.releases(name):
            for installed in _around(str(rel.get("version"))):
                got = _ctx(manifests, name, installed).newer_than_manifests(name)
                assert got == _reference(manifests, name, installed), (name, installed, asked_first)
                n += 1
                newer += got is not None
    assert n > 500
    assert 0 < newer < n  # both answers are read


def test_other_orders_and_unreadable_releases() -> None:
    manifests = load([], env={})
    name = "sglang"
    releases = manifests.releases(name)
    versions = [str(r.get("version")) for r in releases]
    newest = manifests.newest_release(name)
    assert newest is not None
    for order in (list(reversed(releases)), releases[len(releases) // 2 :] + releases[: len(releases) // 2]):
        shuffled = load([], env={})
        shuffled._releases[name] = [*order, {"version": "not a version"}]
        for installed in [*_around(newest), *versions[:3]]:
            got = _ctx(shuffled, name, installed).newer_than_manifests(name)
            assert got == _reference(shuffled, name, installed), (installed, order[0].get("version"))
    empty = load([], env={})
    empty._releases[name] = [{"version": "?"}]
    assert _ctx(empty, name, "99.0").newer_than_manifests(name) is None
    assert _reference(empty, name, "99.0") is None


def test_newest_release_itself_is_not_newer() -> None:
    for name in _packages():
        newest = M.newest_release(name)
        assert newest is not None
        assert _ctx(M, name, newest).newer_than_manifests(name) is None
        above = _around(newest)[5]
        assert _ctx(M, name, above).newer_than_manifests(name) == above
