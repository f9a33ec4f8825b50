"""components.json's cuda host_gnu_max (igap24) read against the real wheels: each release's include/crt/host_config.h
stops a GCC newer than the recorded major ('#if __GNUC__ > N' then '#error -- unsupported GNU version!'). A wheel
whose limit moved, or a record without its wheel's line numbers, fails here."""

from __future__ import annotations

import re
import zipfile
from typing import Any

import pytest
from registry_wheels import fetch_wheel

from stackcheck.knowledge.loader import load

WHEELS = {
    "12.0": ("nvidia-cuda-nvcc-cu12", "12.0.140"),
    "12.1": ("nvidia-cuda-nvcc-cu12", "12.1.105"),
    "12.2": ("nvidia-cuda-nvcc-cu12", "12.2.140"),
    "12.3": ("nvidia-cuda-nvcc-cu12", "12.3.107"),
    "12.4": ("nvidia-cuda-nvcc-cu12", "12.4.131"),
    "12.5": ("nvidia-cuda-nvcc-cu12", "12.5.82"),
    "12.6": ("nvidia-cuda-nvcc-cu12", "12.6.85"),
    "12.8": ("nvidia-cuda-nvcc-cu12", "12.8.93"),
    "12.9": ("nvidia-cuda-nvcc-cu12", "12.9.86"),
    "13.0": ("nvidia-cuda-crt", "13.0.88"),
    "13.1": ("nvidia-cuda-crt", "13.1.115"),
}


def _limits() -> dict[str, dict[str, Any]]:
    releases = (load([], env={}).components.get("cuda") or {}).get("releases") or []
    return {str(r["version"]): r["host_gnu_max"] for r in releases if "host_gnu_max" in r}


def test_every_recorded_limit_has_its_wheel_here() -> None:
    assert set(_limits()) == set(WHEELS)


@pytest.mark.registry
@pytest.mark.parametrize("cuda", sorted(WHEELS))
def test_host_config_h_limit(cuda: str) -> None:
    dist, version = WHEELS[cuda]
    with zipfile.ZipFile(fetch_wheel(dist, version)) as whl:
        name = next(n for n in whl.namelist() if n.endswith("include/crt/host_config.h"))
        text = whl.read(name).decode("utf-8", "replace")
    found = re.search(r"#if __GNUC__ > (\d+)\s*\n\s*\n?#error -- unsupported GNU version!", text)
    assert found is not None, (cuda, name)
    limit = _limits()[cuda]
    assert limit["major"] == int(found.group(1)), cuda
    line = text.count("\n", 0, found.start()) + 1
    title = limit["source"]["title"]
    assert f"{dist} {version} wheel, {name}:{line}-" in title, (title, line)
