"""igap52: SGLang's requirements of quack-kernels, tilelang and nvidia-mathdx (components.json packages.sglang
releases' `requires`, which the planner's SGLang step installs: stackcheck/plan/solver.py pinned_additions /
ranged_additions) against the real METADATA of every release's wheel (pip download --no-deps, the cp312 x86_64 build
or the pure one): the same specifier where the wheel requires the package, absent where it does not, never under an
environment marker or an extra; and the line the package note cites for each."""

from __future__ import annotations

import re
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts

from stackcheck.assembly.pipeline import load_manifests

MANIFESTS = load_manifests([])
SGLANG: dict[str, Any] = MANIFESTS.doc("components.json")["packages"]["sglang"]
NAMES = ("quack-kernels", "tilelang", "nvidia-mathdx")
VERSIONS = [str(r["version"]) for r in SGLANG["releases"]]


def _note() -> str:
    return str(
        next(n for n in SGLANG["notes"] if n.startswith("quack-kernels, tilelang and nvidia-mathdx pins (igap52"))
    )


def _cited() -> dict[tuple[str, str], tuple[str, int]]:
    """(release, package) -> (specifier, METADATA line) as the package note cites them ('tilelang==0.1.8 0.5.12 :262,
    0.5.13 :263; ...')."""
    out: dict[tuple[str, str], tuple[str, int]] = {}
    body = _note().split("each unconditional (no environment marker, no extra): ", 1)[1].split(". 0.5.1-0.5.7", 1)[0]
    for group in body.split("; "):
        head = re.match(r"([a-z-]+)((?:==|>=)[0-9.]+) ", group)
        assert head is not None, group
        for version, line in re.findall(r"(0\.5\.\d+) :(\d+)", group[head.end() - 1 :]):
            out[(version, head.group(1))] = (head.group(2), int(line))
    return out


def _requires_dist(version: str) -> dict[str, tuple[str, str | None, int]]:
    """name -> (specifier, marker or None, line) of the wheel's Requires-Dist lines naming NAMES."""
    texts = read_texts(fetch_wheel("sglang", version), lambda n: n.endswith(".dist-info/METADATA"))
    assert len(texts) == 1, sorted(texts)
    out: dict[str, tuple[str, str | None, int]] = {}
    for number, line in enumerate(next(iter(texts.values())).splitlines(), start=1):
        if not line.startswith("Requires-Dist:"):
            continue
        requirement, _, marker = line.split(":", 1)[1].partition(";")
        got = re.fullmatch(r"\s*([A-Za-z0-9._-]+)\s*(\[[^\]]*\])?\s*\(?([^)]*)\)?\s*", requirement)
        assert got is not None, line
        name = re.sub(r"[-_.]+", "-", got.group(1)).lower()
        if name in NAMES:
            assert name not in out, (version, name)
            out[name] = (got.group(3).replace(" ", ""), marker.strip() or None, number)
    return out


@pytest.mark.registry
@pytest.mark.parametrize("version", VERSIONS)
def test_the_manifest_requirements_are_the_wheels(version: str) -> None:
    release = next(r for r in SGLANG["releases"] if r["version"] == version)
    read = _requires_dist(version)
    cited = _cited()
    for name in NAMES:
        recorded = (release.get("requires") or {}).get(name)
        if name not in read:
            assert recorded is None, (version, name, recorded)
            assert (version, name) not in cited
            continue
        spec, marker, line = read[name]
        assert marker is None, (version, name, marker)  # unconditional: the plain install brings it
        assert name not in ((release.get("requires_read") or {}).get("markers") or {})
        assert recorded == spec, (version, name, recorded, spec)
        assert cited[(version, name)] == (spec, line), (version, name)


def test_the_note_cites_every_recorded_requirement() -> None:
    """Offline: every recorded requirement of the three has its line in the note, with the same specifier."""
    cited = _cited()
    recorded = {
        (str(r["version"]), name): str(spec)
        for r in SGLANG["releases"]
        for name, spec in (r.get("requires") or {}).items()
        if name in NAMES
    }
    assert {k: v[0] for k, v in cited.items()} == recorded
