"""versions.candidates_of: the one reading of `packages.NAME.candidates` (the releases a report narrows a package
of unknown version to), used by the engine's sweeps (engine.package_candidates) and the package checks
(package_checks._release_reading), which read it line for line apart until imend."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.facts.versions import candidates_of


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ({"installed": True, "candidates": ["0.6.12", "0.6.11.post1"]}, ["0.6.12", "0.6.11.post1"]),  # order kept
        ({"candidates": ["0.3.8", "0.3.7", "0.3.8"]}, ["0.3.8", "0.3.7"]),  # a repeat dropped, the first place kept
        ({"candidates": ["0.3.7rc1", "2.9.1+cu130"]}, ["0.3.7rc1", "2.9.1+cu130"]),  # pre-releases, local tags read
        ({"candidates": []}, None),  # an empty list narrows nothing
        ({"candidates": ["0.3.8", "not a version"]}, None),  # one unreadable entry: the whole list unused
        ({"candidates": ["0.3.8", 38]}, None),  # not a string
        ({"candidates": "0.3.8"}, None),  # not a list
        ({"installed": True, "version": "0.3.8"}, None),  # no candidates
        (None, None),  # no entry
        (["0.3.8"], None),  # an entry that is not a mapping
    ],
)
def test_candidates_of(entry: Any, expected: list[str] | None) -> None:
    assert candidates_of(entry) == expected


def test_the_sweep_and_the_package_checks_read_candidates_alike(manifests: Any) -> None:
    """engine.package_candidates and the package checks' reading name the same releases in the same order (a
    repeat dropped): the Mooncake runtime-library check's observed text lists exactly the sweep's candidates."""
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import package_candidates
    from stackcheck.verdicts.package_checks import _release_reading

    entry: dict[str, Any] = {"installed": True, "candidates": ["0.3.9", "0.3.8", "0.3.9"]}
    facts: Any = {"packages": {"mooncake-transfer-engine": entry}}
    ctx = Context(facts=facts, manifests=manifests, launch={})
    assert package_candidates(ctx, "mooncake-transfer-engine") == ["0.3.9", "0.3.8"]
    lib = {"needs_versions": ">=0.3.7", "read_versions": ">=0.3.5,<=0.3.13.post1"}
    version, found, needs, read = _release_reading(lib, entry, "mooncake-transfer-engine")
    assert version == "one of 0.3.9, 0.3.8" and found.endswith("(packages.mooncake-transfer-engine.candidates)")
    assert needs is True and read is True
    entry["candidates"] = ["0.3.9", "0.3.x"]
    assert package_candidates(ctx, "mooncake-transfer-engine") is None
    assert _release_reading(lib, entry, "mooncake-transfer-engine")[0] is None  # the release is not given
