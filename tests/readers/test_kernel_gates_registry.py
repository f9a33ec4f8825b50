"""The kernel-side tables of the manifests against the real wheels (registry tests, cached, skipped offline).

- every gate of gates.json with a probe, read by stackcheck's own reader from the real wheel of each release
  below, equals the value gates.json records for that release (the C/C++ header check in FlashInfer's
  TllmGenFmhaRunner, the XQA guards, the fmha_v2 majors, the FA4 interfaces of SGLang and sgl-kernel);
- the manifest-only gates (no probe) against what the test reads itself from the same wheels: the paged-KV
  refusals of the FA4 interfaces, the symmetric-memory world sizes, whether a kernel wheel ships deep_gemm;
- the per-library targets of components.json (`libs` of the PyPI variant) against stackcheck's binary
  reader on the wheel's shared objects.
"""

from __future__ import annotations

import ast
import json
import re
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from registry_wheels import extract, fetch_wheel

from stackcheck.readers.binaries import scan_file
from stackcheck.readers.sourcetables import compare_with_release, normalise_name, read_table

REPO = Path(__file__).resolve().parent.parent.parent
#: Releases read per package: spread over the release ranges of the gates.
VERSIONS = {
    "flashinfer-python": ["0.6.3", "0.6.12", "0.6.17", "0.7.2"],
    "sglang": ["0.5.9", "0.5.14", "0.5.17", "0.5.23"],
    "sgl-kernel": ["0.3.21"],
}
#: Files the manifest-only gates are checked against (besides the probed gates' own files).
EXTRA_FILES = (
    "sglang/srt/distributed/device_communicators/all_reduce_utils.py",
    "sglang/jit_kernel/flash_attention/cute/interface.py",
    "sglang/jit_kernel/flash_attn/cute/interface.py",
    "sglang/kernels/ops/attention/flash_attn/cute/interface.py",
    "sgl_kernel/_fa4_interface.py",
)

pytestmark = pytest.mark.registry


def _gates() -> list[dict[str, Any]]:
    return list(json.loads((REPO / "manifests" / "gates.json").read_text())["gates"])


def _release(gate: dict[str, Any], version: str) -> dict[str, Any] | None:
    hits = [r for r in gate["releases"] if Version(version) in SpecifierSet(r["versions"], prereleases=True)]
    assert len(hits) <= 1, (gate["id"], version)
    return hits[0] if hits else None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, str], Path]:
    """(dist, version) -> a directory holding the wheel's text sources (as installed under site-packages)."""
    made: dict[tuple[str, str], Path] = {}

    def make(dist: str, version: str) -> Path:
        if (dist, version) not in made:
            wheel = fetch_wheel(dist, version)
            root = tmp_path_factory.mktemp(f"{dist}-{version}")
            wanted = {f for g in _gates() if g.get("probe") for f in g["probe"]["files"]} | set(EXTRA_FILES)
            made[(dist, version)] = extract(wheel, root, wanted.__contains__)
        return made[(dist, version)]

    return make


def test_probed_gates_agree_with_the_real_wheels(site: Callable[[str, str], Path]) -> None:
    problems: list[str] = []
    checked = 0
    for gate in _gates():
        package = normalise_name(gate["package"])
        if gate.get("probe") is None or package not in VERSIONS:
            continue
        for version in VERSIONS[package]:
            rel = _release(gate, version)
            got = read_table(gate["probe"], site(package, version))
            if rel is None:
                continue
            checked += 1
            if got["status"] != "ok":
                problems.append(f"{gate['id']} {package} {version}: {got['status']}: {got['reason']}")
            elif compare_with_release(got["value"], rel["value"]) != "same":
                problems.append(f"{gate['id']} {package} {version}: read {got['value']}, gates.json {rel['value']}")
    assert checked >= 15, checked
    assert not problems, "\n".join(problems)


def _paged_refusals(root: Path, files: list[str]) -> list[int]:
    """Majors named by 'paged KV not supported on SM N.0' in the first of `files` that exists."""
    for rel in files:
        path = root / rel
        if path.is_file():
            found = re.findall(r"[Pp]aged KV not supported on SM (\d+)\.0", path.read_text())
            return sorted({int(x) for x in found})
    raise AssertionError(f"none of {files} under {root}")


FA4_FILES = [
    "sglang/jit_kernel/flash_attention/cute/interface.py",
    "sglang/jit_kernel/flash_attn/cute/interface.py",
    "sglang/kernels/ops/attention/flash_attn/cute/interface.py",
]


@pytest.mark.parametrize("version", ["0.5.9", "0.5.17", "0.5.23"])
def test_sglang_fa4_paged_kv_refusals(site: Callable[[str, str], Path], version: str) -> None:
    gate = next(g for g in _gates() if g["id"] == "sglang.fa4_paged_kv_refused_majors")
    rel = _release(gate, version)
    assert rel is not None
    assert _paged_refusals(site("sglang", version), FA4_FILES) == sorted(rel["value"])


def test_sgl_kernel_fa4_paged_kv_refusals(site: Callable[[str, str], Path]) -> None:
    gate = next(g for g in _gates() if g["id"] == "sgl-kernel.fa4_paged_kv_refused_majors")
    rel = _release(gate, "0.3.21")
    assert rel is not None
    assert _paged_refusals(site("sgl-kernel", "0.3.21"), ["sgl_kernel/_fa4_interface.py"]) == sorted(rel["value"])


@pytest.mark.parametrize("version", ["0.5.9", "0.5.14", "0.5.23"])
def test_symm_mem_world_sizes(site: Callable[[str, str], Path], version: str) -> None:
    """The inner keys of the size table, read here with ast (test side), equal the manifest-only gate."""
    path = site("sglang", version) / "sglang/srt/distributed/device_communicators/all_reduce_utils.py"
    table = next(
        node.value
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES" for t in node.targets)
    )
    assert isinstance(table, ast.Dict)
    inner = {
        ast.literal_eval(k): sorted(ast.literal_eval(kk) for kk in v.keys if kk is not None)
        for k, v in zip(table.keys, table.values, strict=True)
        if k is not None and isinstance(v, ast.Dict)
    }
    gate = next(g for g in _gates() if g["id"] == "sglang.torch_symm_mem_world_sizes")
    rel = _release(gate, version)
    assert rel is not None
    assert all(sizes == sorted(rel["value"]) for sizes in inner.values()), inner


#: Shared objects larger than this (flash_ops: 0.8-1.1 GB uncompressed) are read only with
#: STACKCHECK_TEST_BIG_WHEELS=1: unpacking them dominates the test run.
BIG_MEMBER = 100 * 1024 * 1024


@pytest.mark.parametrize(("dist", "version"), [("sgl-kernel", "0.3.21"), ("sglang-kernel", "0.4.10")])
def test_kernel_wheel_deep_gemm_and_libs(dist: str, version: str) -> None:
    """components.json `libs` of the PyPI variant and the deep_gemm gate, against the real wheel."""
    import os

    everything = os.environ.get("STACKCHECK_TEST_BIG_WHEELS") == "1"
    wheel = fetch_wheel(dist, version)
    components = json.loads((REPO / "manifests" / "components.json").read_text())
    rel = next(r for r in components["packages"][dist]["releases"] if r["version"] == version)
    variant = next(v for v in rel["variants"] if v["variant"] == rel["pypi_variant"])
    gate = next(g for g in _gates() if g["id"] == f"{dist}.bundles_deep_gemm")
    gate_rel = _release(gate, version)
    assert gate_rel is not None
    read: dict[str, set[str]] = {}
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory() as tmp:
        names = zf.namelist()
        assert any(n.startswith("deep_gemm/include/") for n in names) is gate_rel["value"]
        skipped: set[str] = set()
        for info in zf.infolist():
            name = info.filename
            if name.startswith("sgl_kernel/") and name.endswith(".so"):
                if info.file_size > BIG_MEMBER and not everything:
                    skipped.add(name.rsplit("/", 1)[-1].split(".", 1)[0])
                    continue
                target = Path(tmp) / "lib.so"
                target.write_bytes(zf.read(name))
                entry = scan_file(target, name)
                if entry is not None:
                    stem = name.rsplit("/", 1)[-1].split(".", 1)[0]
                    read.setdefault(stem, set()).update([*entry["sass"], *entry["ptx"]])
    recorded = {k: sorted(v) for k, v in variant["libs"].items() if k not in skipped or k in read}
    assert {k: sorted(v) for k, v in read.items()} == recorded
    assert set(read) | skipped == set(variant["libs"])
    if not skipped:
        assert sorted(variant["archs"]) == sorted({t for v in read.values() for t in v})
