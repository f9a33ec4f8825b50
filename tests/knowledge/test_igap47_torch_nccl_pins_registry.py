"""igap47: torch's NCCL pins (components.json, a variant's `nccl`: the manifests' torch.nccl, which the nccl check's
torch-nccl-wheel-pin-cu12 / -cu13 read) against the real METADATA of PyPI's torch wheels, read through PEP 658 (the
file's URL plus `.metadata`, from PyPI's JSON simple index): Requires-Dist nvidia-nccl-cuNN==V of the x86_64 cp312
wheel is the pin of the release's PyPI build (`pypi_variant`). The other CUDA builds are on download.pytorch.org
only, which did not resolve from the machine this was written on (2026-12-06): their pins stay unknown where no
release's METADATA was read, and UNPINNED lists them, so recording one is a deliberate edit here."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests

MANIFESTS = load_manifests([])
TORCH: dict[str, Any] = MANIFESTS.doc("components.json")["packages"]["torch"]

#: the recorded CUDA 12 / 13 builds with no NCCL pin (the nccl check is unknown on them: fail closed), igap47
UNPINNED = {
    ("2.4.0", "cu124"),
    ("2.4.1", "cu124"),
    ("2.5.0", "cu121"),
    ("2.5.1", "cu121"),
    ("2.6.0", "cu126"),
    ("2.7.0", "cu128"),
    ("2.7.1", "cu128"),
    ("2.11.0", "cu126"),
    ("2.11.0", "cu128"),
    ("2.12.0", "cu132"),
    ("2.12.1", "cu132"),
    ("2.13.0", "cu132"),
    ("2.14.0", "cu126"),
    ("2.14.1", "cu126"),
    ("2.15.0", "cu126"),
}


def _variants() -> list[tuple[str, dict[str, Any]]]:
    return [(str(r["version"]), v) for r in TORCH["releases"] for v in r.get("variants") or []]


def test_the_unpinned_cuda_builds_are_the_listed_ones() -> None:
    got = {
        (version, str(v["variant"]))
        for version, v in _variants()
        if str(v.get("cuda", "")).split(".")[0] in ("12", "13") and not v.get("nccl")
    }
    assert got == UNPINNED


def _pypi_metadata_pins() -> dict[str, str]:
    """version -> the nvidia-nccl-cuNN==V pin of PyPI's cp312 manylinux x86_64 wheel (PEP 658 metadata)."""
    req = urllib.request.Request(
        "https://pypi.org/simple/torch/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            index = json.load(resp)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        pytest.skip(f"PyPI's simple index not reachable: {exc}")
    wanted = {str(r["version"]) for r in TORCH["releases"] if r.get("pypi_variant")}
    pins: dict[str, str] = {}
    for entry in index.get("files") or []:
        m = re.fullmatch(r"torch-([^-]+)-cp312-cp312-manylinux[^-]*x86_64\.whl", str(entry.get("filename")))
        if not m or m.group(1) not in wanted:
            continue
        try:
            with urllib.request.urlopen(str(entry["url"]) + ".metadata", timeout=60) as resp:
                text = resp.read().decode()
        except (urllib.error.URLError, TimeoutError, OSError):
            continue  # (a file PyPI serves no metadata for: not judged)
        found = re.search(r"^Requires-Dist: nvidia-nccl-cu\d+\s*\(?==([0-9.]+)", text, re.MULTILINE)
        if found:
            pins[m.group(1)] = found.group(1)
    return pins


@pytest.mark.registry
def test_the_pypi_builds_pins_are_their_metadata() -> None:
    pins = _pypi_metadata_pins()
    if not pins:
        pytest.skip("no torch METADATA read from PyPI")
    for release in TORCH["releases"]:
        version, build = str(release["version"]), release.get("pypi_variant")
        if version not in pins:
            continue
        variant = next(v for v in release["variants"] if v["variant"] == build)
        assert variant.get("nccl") == pins[version], (version, build, variant.get("nccl"), pins[version])
    # read on 2026-12-06 (igap47): 2.6.0 to 2.14.0's PyPI builds
    assert {"2.8.0", "2.10.0", "2.11.0", "2.13.0"} <= set(pins), sorted(pins)
