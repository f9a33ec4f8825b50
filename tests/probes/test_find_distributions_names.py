"""find_distributions reads a search-path directory's entries by their names' last dotted part (one slice per entry);
the distributions it finds, editable or not, are the ones the reading by endswith of each suffix found, on generated
directories whose names mix every suffix, near misses and dots in odd places."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from stackcheck.probes.packages import find_distributions, normalise

SUFFIXES = (".dist-info", ".egg-info", ".egg-link", ".pth", ".py", ".so", "", ".dist-infos", "-info", ".egg")


def _reference(listing: list[str], names: set[str]) -> tuple[list[tuple[str, str]], set[str]]:
    """(candidates, editable names) as the reading by endswith picked them."""
    editable: set[str] = set()
    candidates: list[tuple[str, str]] = []
    for item in listing:
        if item.startswith("__editable__.") and item.endswith(".pth"):
            editable.add(normalise(item[len("__editable__.") : -len(".pth")].split("-")[0]))
            continue
        for suffix in (".dist-info", ".egg-info", ".egg-link"):
            if item.endswith(suffix):
                stem = item[: -len(suffix)]
                dist_name = normalise(stem if suffix == ".egg-link" else stem.split("-")[0])
                if dist_name in names:
                    candidates.append((dist_name, item))
                break
    return sorted(candidates, key=lambda c: c[1]), editable


@pytest.mark.parametrize("seed", range(6))
def test_the_entries_read_are_the_endswith_readings(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    stems = ["torch", "Flash_Attn", "sgl.kernel", "a.b-c", "vllm", "x", "__editable__.torch", "__editable__.sgl_kernel"]
    site = tmp_path / "site-packages"
    site.mkdir()
    listing: set[str] = set()
    for _ in range(60):
        stem = rng.choice(stems) + rng.choice(["", "-1.0", "-2.5.1.post1", ".dist-info", "-0.1.dev0"])
        listing.add(stem + rng.choice(SUFFIXES))
    listing.discard("")
    for name in listing:
        (site / name).mkdir()  # (a directory: no METADATA, so each candidate is a record with its error)
    names = {normalise(s.split("-")[0]) for s in stems} | {"__editable__.torch"}
    found = find_distributions(names, [str(site)])
    want, editable = _reference(sorted(listing), names)
    # each name's records in order: a dist-info / egg-info entry read as itself, an egg-link as its target (None here)
    got = {n: [r.meta_dir for r in records] for n, records in found.items()}
    expected: dict[str, list[str | None]] = {}
    for n, item in want:
        expected.setdefault(n, []).append(None if item.endswith(".egg-link") else str(site / item))
    assert got == expected
    assert {n for n, records in found.items() if any(r.editable for r in records)} == {
        n for n in expected if n in editable or any(i.endswith(".egg-link") for m, i in want if m == n)
    }
