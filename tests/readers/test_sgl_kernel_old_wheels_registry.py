"""sgl-kernel 0.1.0-0.3.4.post1 in components.json against their real PyPI wheels (registry tests, cached in
tests/registry_wheels.py's cache, skipped offline): a few of the 31 releases by default, every one with
STACKCHECK_REGISTRY_ALL=1.

- `libs` and `archs` of the PyPI variant: stackcheck's fatbin reader on each sgl_kernel/*.so (SASS only);
- the CUDA runtime libraries the kernel-runtime-libs rules assume a CUDA 12 build needs (DT_NEEDED, read by
  stackcheck's ELF reader): libcudart.so.12 and libnvrtc.so.12 in every library;
- kernel-runtime-libs' libnuma range: common_ops needs libnuma.so.1 exactly when the rule's version range holds;
- driver-api's green-context range: common_ops links cuGreenCtxCreate/cuGreenCtxDestroy exactly when the rule's
  version range holds (binutils `nm -D`; skipped where nm is not installed);
- the torch pin's ABI hint: c10::cuda::SetDevice is imported as `...SetDeviceEab` (torch 2.8's signature) exactly
  by the releases pinned to torch 2.8.0, as `...SetDeviceEa` by those pinned to 2.6.0 or 2.7.1.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import fetch_wheel, run_all

from stackcheck.facts.versions import version_in
from stackcheck.readers.binaries import scan_file
from stackcheck.readers.elf import ElfFile

REPO = Path(__file__).resolve().parent.parent.parent
#: One release per torch pairing and the green-context edges (0.2.5 without it, 0.2.6 the first with it).
FEW = ["0.1.5", "0.2.5", "0.2.6", "0.3.0"]

pytestmark = pytest.mark.registry


def _old_releases() -> list[dict[str, Any]]:
    data = json.loads((REPO / "manifests" / "components.json").read_text(encoding="utf-8"))
    releases = data["packages"]["sgl-kernel"]["releases"]
    newest = next(i for i, r in enumerate(releases) if r["version"] == "0.3.5")
    return [r for r in releases[:newest]]


def _green_range() -> str:
    checks = json.loads((REPO / "manifests" / "checks.json").read_text(encoding="utf-8"))["checks"]
    rule = next(r for c in checks if c["id"] == "driver-api" for r in c["rules"] if r["id"] == "green-context")
    return str(rule["when"]["value"])


def _numa_range() -> str:
    checks = json.loads((REPO / "manifests" / "checks.json").read_text(encoding="utf-8"))["checks"]
    rule = next(r for c in checks if c["id"] == "kernel-runtime-libs" for r in c["rules"] if r["id"] == "libnuma")
    return str(rule["when"]["all"][0]["value"])


def _params() -> list[str]:
    versions = [str(r["version"]) for r in _old_releases()]
    return versions if run_all() else [v for v in versions if v in FEW]


@pytest.mark.parametrize("version", _params())
def test_old_sgl_kernel_release_against_its_wheel(version: str) -> None:
    rel = next(r for r in _old_releases() if r["version"] == version)
    (build,) = rel["variants"]
    wheel = fetch_wheel("sgl-kernel", version)
    assert wheel.name in build["libs_source"]["title"]
    nm = shutil.which("nm")
    libs: dict[str, list[str]] = {}
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory(prefix="sgl-kernel-") as tmp:
        for name in sorted(n for n in zf.namelist() if n.startswith("sgl_kernel/") and n.endswith(".so")):
            target = Path(tmp) / Path(name).name
            target.write_bytes(zf.read(name))
            entry = scan_file(target, name)
            assert entry is not None and not entry.get("error"), name
            assert entry["ptx"] == [], name  # SASS only: no JIT path to a newer GPU
            lib = Path(name).name.split(".")[0]
            libs[lib] = sorted(entry["sass"])
            with ElfFile(str(target)) as elf:
                needed = elf.dynamic().needed
            assert {"libcudart.so.12", "libnvrtc.so.12"} <= set(needed), name
            if lib == "common_ops":  # kernel-runtime-libs' libnuma rule: linked exactly inside its range
                assert ("libnuma.so.1" in needed) == bool(version_in(version, _numa_range())), (version, needed)
            if nm is None:
                continue
            out = subprocess.run([nm, "-D", "--undefined-only", str(target)], capture_output=True, text=True)
            undefined = {line.split()[-1].split("@")[0] for line in out.stdout.splitlines() if line.strip()}
            if lib == "common_ops":
                green = {"cuGreenCtxCreate", "cuGreenCtxDestroy"} <= undefined
                assert green == bool(version_in(version, _green_range())), (version, green)
            set_device = {s for s in undefined if s.startswith("_ZN3c104cuda9SetDevice")}
            if set_device:
                torch_28 = set_device == {"_ZN3c104cuda9SetDeviceEab"}
                assert torch_28 == (rel["requires"]["torch"] == "==2.8.0"), (name, set_device)
    assert libs == {k: sorted(v) for k, v in build["libs"].items()}
    assert sorted(build["archs"]) == sorted({a for targets in libs.values() for a in targets})
    if nm is None:
        pytest.skip("binutils nm is not installed: the symbol checks were not run")
