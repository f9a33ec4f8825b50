"""The release_symbols table of extension-torch-abi-lmcache (manifests/checks.json) against the real wheels it was
read in: each listed LMCache release's lmcache/c_ops (its cp310, cp311 and cp312 wheels) needs the listed
c10::cuda::SetDevice form and not the other, and each listed torch minor's torch/lib/libc10_cuda.so (one patch
release per minor) defines the listed form and not the other, read with the project's own ELF reader
(stackcheck/readers/elf.py)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry_wheels import extract_dynamic, fetch_wheel

from stackcheck.knowledge.loader import Manifests
from stackcheck.readers.elf import DynamicSymbols, ElfFile

pytestmark = pytest.mark.registry

#: the torch patch release each minor of the table was read in, and the CPython of the wheel read (None: 3.12)
TORCH_READ = {
    "2.5": ("2.5.1", "3.10"),
    "2.6": ("2.6.0", "3.10"),
    "2.7": ("2.7.1", None),
    "2.8": ("2.8.0", None),
    "2.9": ("2.9.1", None),
    "2.10": ("2.10.0", None),
    "2.11": ("2.11.0", None),
    "2.12": ("2.12.0", None),
    "2.13": ("2.13.0", None),
    "2.14": ("2.14.1", None),
}


def _table(manifests: Manifests) -> dict[str, object]:
    spec = next(c for c in manifests.checks if c["id"] == "extension-torch-abi-lmcache")
    return dict(spec["extension"]["release_symbols"])


def _symbols(path: Path) -> tuple[ElfFile, DynamicSymbols]:
    elf = ElfFile(path)
    return elf, DynamicSymbols(elf)


@pytest.mark.parametrize("python", ["3.10", "3.11", "3.12"])
def test_each_lmcache_release_needs_the_listed_set_device(manifests: Manifests, python: str) -> None:
    table = _table(manifests)
    releases = table["releases"]
    assert isinstance(releases, dict) and set(releases) == {
        "0.3.1",
        "0.3.2",
        "0.3.3",
        "0.3.4",
        "0.3.5",
        "0.3.6",
        "0.3.7",
        "0.3.9",
    }
    forms = set(releases.values())
    for version, symbol in releases.items():
        wheel = fetch_wheel("lmcache", version, python)
        with zipfile.ZipFile(wheel) as z:
            members = [n for n in z.namelist() if n.startswith("lmcache/c_ops.") and n.endswith(".so")]
        assert len(members) == 1, (version, python, members)
        elf, syms = _symbols(extract_dynamic(wheel, members[0]))
        try:
            undefined = set(syms.undefined())
        finally:
            elf.close()
        assert symbol in undefined, (version, python)
        assert not (forms - {symbol}) & undefined, (version, python)


def test_each_torch_minor_exports_the_listed_set_device(manifests: Manifests) -> None:
    exports = _table(manifests)["torch_exports"]
    assert isinstance(exports, dict) and set(exports) == set(TORCH_READ)
    forms = set(exports.values())
    for minor, symbol in exports.items():
        version, python = TORCH_READ[minor]
        wheel = fetch_wheel("torch", version, python)
        elf, syms = _symbols(extract_dynamic(wheel, "torch/lib/libc10_cuda.so"))
        try:
            assert syms.defines(symbol), version
            assert not any(syms.defines(other) for other in forms - {symbol}), version
        finally:
            elf.close()
