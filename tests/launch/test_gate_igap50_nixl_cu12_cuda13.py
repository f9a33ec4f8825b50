"""igap50: nixl 0.7.1 imports nixl_cu13, else nixl_cu12 (and `pip install nixl` brings nixl-cu12 whatever torch's CUDA
is), whose bundled UCX CUDA module NEEDs libcudart.so.12. Beside a torch of CUDA 13 and with no libcudart.so.12 on the
loader's path UCX runs without CUDA, and the first add_remote_agent aborts the process (run on the lent H100,
2026-12-06, bench/nixl_cu12_on_cuda13.py; preflight.json transfer_packages, the nixl entry's
backend_runtime_library). On the parent every refused box here passed the gate's transfer-package check."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
NIXL = ("--disaggregation-mode", "prefill", "--disaggregation-transfer-backend", "nixl")
CUDART12 = "libcudart.so.12"
FOUND = {**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS}


def _gate(
    tmp_path: Path,
    libs: Mapping[str, str | None],
    *,
    torch_cuda: str = "13.0",
    nixl: str = "0.7.1",
    cu12: Mapping[str, Any] | None = None,
    cu13: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """gate_tp8 of a Llama 3 on h200-newest at SGLang 0.5.23 (torch of CUDA `torch_cuda`) with nixl `nixl`, nixl-cu12
    `cu12` (default 0.7.1 installed), nixl-cu13 `cu13` (default not installed; {} drops it from the list) and
    cuda_libs `libs` (a key left out: not looked for)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    # SGLang 0.5.14: 0.5.15+ also need nixl's Python API of 1.2.0 (ifc52's api_floor), which these releases predate
    facts = release_box(tmp_path, "0.5.14", "9.0")
    doc = json.loads(facts.read_text())
    packages = doc["facts"]["packages"]
    if torch_cuda:
        packages["torch"]["cuda"] = torch_cuda
    else:  # not given
        packages["torch"].pop("cuda", None)
    packages.update({"nixl": {"installed": True, "version": nixl},
                     "nixl-cu12": dict(cu12 if cu12 is not None else {"installed": True, "version": "0.7.1"}),
                     "nixl-cu13": dict(cu13 if cu13 is not None else {"installed": False}),
                     "mooncake-transfer-engine": {"installed": False}})  # fmt: skip
    if cu13 == {}:
        del packages["nixl-cu13"]
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    return gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *NIXL)


def _check(doc: dict[str, Any]) -> dict[str, Any]:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, doc.get("preflight")
    check: dict[str, Any] = found[0]
    return check


@pytest.mark.parametrize("cu12", ["0.7.1", "0.8.0", "1.5.1"])
def test_nixl_cu12_on_cuda13_without_cudart12_is_refused(tmp_path: Path, cu12: str) -> None:
    # fails on the parent: ok and allowed (the first add_remote_agent aborts the prefill server)
    doc = _gate(tmp_path, {**FOUND, CUDART12: None}, cu12={"installed": True, "version": cu12})
    check = _check(doc)
    assert check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert f"nixl-cu12 {cu12}" in check["message"] and "SIGABRT" in check["message"]
    assert "nixl-cu13" in check["message"] and "torch of CUDA 13" in check["message"]


@pytest.mark.parametrize(
    ("torch_cuda", "cu13", "libs"),
    [
        ("12.8", None, {**FOUND, CUDART12: None}),  # torch of CUDA 12 has loaded libcudart.so.12 (inferred)
        ("13.0", {"installed": True, "version": "0.7.1"}, {**FOUND, CUDART12: None}),  # nixl takes nixl_cu13 first
        ("13.0", None, {**FOUND, CUDART12: "/opt/cu12/lib/libcudart.so.12"}),  # the loader finds it
    ],
)
def test_cu12_torch_nixl_cu13_or_cudart12_found_pass(
    tmp_path: Path, torch_cuda: str, cu13: Mapping[str, Any] | None, libs: Mapping[str, str | None]
) -> None:
    doc = _gate(tmp_path, libs, torch_cuda=torch_cuda, cu13=cu13)
    check = _check(doc)
    assert check["status"] == "ok", check


@pytest.mark.parametrize(
    ("nixl", "cu12", "cu13", "libs", "words"),
    [
        ("0.7.1", None, None, FOUND, "was not probed"),  # libcudart.so.12 not looked for
        ("0.7.1", {"installed": True, "version": "1.6.0"}, None, {**FOUND, CUDART12: None}, "not read"),
        ("0.7.1", None, {}, {**FOUND, CUDART12: None}, "whether nixl-cu13 is installed"),
        ("1.6.0", None, None, {**FOUND, CUDART12: None}, "was not read"),  # a nixl release not read
    ],
)
def test_what_is_not_read_is_unknown(
    tmp_path: Path,
    nixl: str,
    cu12: Mapping[str, Any] | None,
    cu13: Mapping[str, Any] | None,
    libs: Mapping[str, str | None],
    words: str,
) -> None:
    doc = _gate(tmp_path, libs, nixl=nixl, cu12=cu12, cu13=cu13)
    check = _check(doc)
    assert check["status"] == "unknown", check
    assert words in check["message"] and CUDART12 in check["message"]
    assert doc["decision"] == "refuse"


@pytest.mark.parametrize("nixl", ["0.6.1", "0.7.0"])
def test_nixl_with_its_own_cuda12_ucx_on_cuda13_without_cudart12_is_refused(tmp_path: Path, nixl: str) -> None:
    """nixl 0.6.1 and 0.7.0 ship their own UCX build, whose CUDA module NEEDs libcudart.so.12: each run on the lent
    H100 (2026-12-06, fifteenth session) aborted at add_remote_agent without one (unknown on the parent: read, not
    run), and completed a WRITE with one on LD_LIBRARY_PATH (the pass below)."""
    doc = _gate(tmp_path / "without", {**FOUND, CUDART12: None}, nixl=nixl)
    check = _check(doc)
    assert check["status"] == "fail", check
    assert doc["decision"] == "refuse"
    assert f"nixl {nixl}" in check["message"] and "SIGABRT" in check["message"] and "nixl-cu13" in check["message"]
    found = _gate(tmp_path / "with", {**FOUND, CUDART12: "/opt/cu12/lib/libcudart.so.12"}, nixl=nixl)
    assert _check(found)["status"] == "ok"


@pytest.mark.parametrize("nixl", ["0.7.1", "0.8.0", "1.0.1"])
def test_every_forwarder_that_takes_cu13_first_is_judged(tmp_path: Path, nixl: str) -> None:
    """nixl 0.7.1-1.0.1 (every release read) import nixl_cu13, else nixl_cu12."""
    check = _check(_gate(tmp_path, {**FOUND, CUDART12: None}, nixl=nixl))
    assert check["status"] == "fail", check
    assert "SIGABRT" in check["message"]


def test_a_forwarder_of_torchs_major_without_nixl_cu13_is_refused(tmp_path: Path) -> None:
    """nixl 1.1.0-1.5.2 import the backend of torch's CUDA major: nixl_cu13 for this torch, ImportError without it."""
    check = _check(_gate(tmp_path, {**FOUND, CUDART12: None}, nixl="1.5.2"))
    assert check["status"] == "fail", check
    assert "nixl-cu13 is not installed" in check["message"] and "ImportError" in check["message"]


@pytest.mark.parametrize("nixl", ["1.1.0", "1.5.2"])
def test_a_forwarder_of_torchs_major_with_nixl_cu13_passes(tmp_path: Path, nixl: str) -> None:
    """Beside a CUDA 13 torch these releases load nixl_cu13, whatever nixl-cu12 links: no libcudart.so.12 needed."""
    doc = _gate(tmp_path, {**FOUND, CUDART12: None}, nixl=nixl, cu13={"installed": True, "version": nixl})
    assert _check(doc)["status"] == "ok"


def test_a_forwarder_of_torchs_major_with_torchs_cuda_not_given(tmp_path: Path) -> None:
    """nixl 1.5.2 with nixl-cu12 only and torch's CUDA build not given: which backend it imports is not known."""
    doc = _gate(tmp_path / "one", {**FOUND, CUDART12: None}, torch_cuda="", nixl="1.5.2")
    check = _check(doc)
    assert check["status"] == "unknown" and "packages.torch.cuda" in check["message"], check
    each = {"installed": True, "version": "1.5.2"}
    both = _gate(tmp_path / "both", {**FOUND, CUDART12: None}, torch_cuda="", nixl="1.5.2", cu12=each, cu13=each)
    assert _check(both)["status"] == "ok"


def _entry() -> dict[str, Any]:
    from stackcheck.knowledge.loader import load

    found = [e for e in load().preflight["transfer_packages"]["entries"] if e.get("transfer_backend") == "nixl"]
    entry: dict[str, Any] = found[0]
    return entry


def _needed(wheel: Path, suffix: str) -> list[str]:
    """The NEEDED names of the wheel's member ending in `suffix` (read by stackcheck's own ELF reader)."""
    import tempfile
    import zipfile

    from stackcheck.readers.libs import read_object

    with zipfile.ZipFile(wheel) as z:
        member = next(n for n in z.namelist() if n.endswith(suffix))
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(z.extract(member, tmp))
            return list(read_object(path).needed)


@pytest.mark.registry
@pytest.mark.parametrize(
    ("dist", "version", "item"),
    [("nixl-cu12", "0.7.1", "backend_runtime_library"), ("nixl", "0.6.1", "runtime_library"),
     ("nixl", "0.7.0", "runtime_library")],
)  # fmt: skip
def test_wheels_ucx_cuda_module_needs_libcudart_12(dist: str, version: str, item: str) -> None:
    """The bundled UCX CUDA module (libucm_cuda.so.0.0.0) of each release the items' needs_versions name NEEDs
    libcudart.so.12, and the wheel brings none (more releases: STACKCHECK_REGISTRY_ALL; all 16 of nixl-cu12 were
    read by igap50)."""
    import zipfile

    from registry_wheels import fetch_wheel

    from stackcheck.facts.versions import version_in

    lib = _entry()[item]
    assert version_in(version, lib["needs_versions"]), version
    wheel = fetch_wheel(dist, version)
    assert lib["soname"] in _needed(wheel, "ucx/libucm_cuda.so.0.0.0")
    with zipfile.ZipFile(wheel) as z:
        assert not [n for n in z.namelist() if "libcudart" in Path(n).name]


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.7.1", "1.0.1", "1.1.0", "1.5.2"])
def test_forwarders_import_order(version: str) -> None:
    """nixl's forwarder (py3-none-any): 0.7.1-1.0.1 try nixl_cu13 then nixl_cu12 whatever torch is; 1.1.0 on import
    the backend of torch's CUDA major and raise ImportError without it; none ships a compiled module."""
    import zipfile

    from registry_wheels import fetch_wheel

    from stackcheck.facts.versions import version_in

    lib = _entry()["backend_runtime_library"]
    with zipfile.ZipFile(fetch_wheel("nixl", version)) as z:
        assert not [n for n in z.namelist() if n.endswith(".so")]
        text = z.read("nixl/__init__.py").decode()
    first = version_in(version, lib["forwarder_versions"])
    assert first is not version_in(version, lib["torch_major_versions"])
    assert text.index('"nixl_cu13"') < text.index('"nixl_cu12"')
    assert ("is not installed" in text) is not first  # the ImportError of the torch-major releases
