"""DeepEP's deep_ep_cpp and the NVSHMEM host library it links (igap11, item 3; check moe-a2a-package).

DeepEP's setup.py links libnvshmem_host.so.N by name with -Wl,-rpath,{NVSHMEM_DIR or the nvidia.nvshmem wheel}/lib
(deepseek-ai/DeepEP setup.py at 9249c25 :19-36, :55; at 723716f the real file name, the same RPATH). Where the loader
finds that soname nowhere (the RPATH, LD_LIBRARY_PATH, the ld.so cache, the default directories), import deep_ep fails
and SGLang raises 'DeepEP is not installed' at model load. The packages probe reads the module's DT_NEEDED and
DT_RPATH / DT_RUNPATH (packages.deep-ep.extension_links) and looks each library up; the check judges that. The ELF
files are written by tests/elfwriter.py in the same shape (NEEDED, RPATH), not copied."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import write_so
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, release_box

A2A = "moe-a2a-package"
SO = "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"
NVSHMEM = "libnvshmem_host.so.3"


def _site(tmp_path: Path, rpath: str | None, runpath: str | None = None, wheel: bool = False) -> Path:
    sp = tmp_path / "lib" / "python3.12" / "site-packages"
    meta = sp / "deep_ep-1.2.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: deep_ep\nVersion: 1.2.1\n")
    write_so(sp / SO, needed=[NVSHMEM, "libcudart.so.12", "libc10.so"], rpath=rpath, runpath=runpath)
    if wheel:
        lib = sp / "nvidia" / "nvshmem" / "lib"
        lib.mkdir(parents=True)
        write_so(lib / NVSHMEM, soname=NVSHMEM)
    return sp


def _links(sp: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    from stackcheck.probes.packages import extension_links, find_distributions, package_facts
    from stackcheck.readers.fsview import HostView

    entry = package_facts("deep-ep", find_distributions({"deep-ep"}, [str(sp)])["deep-ep"])
    links = extension_links(entry, env or {}, HostView())
    return {**entry, "extension_links": links}


def test_probe_reads_the_rpath_and_finds_the_wheel_copy(tmp_path: Path) -> None:
    # fails on the parent: no extension_links
    sp = _site(tmp_path, rpath=f"{tmp_path}/lib/python3.12/site-packages/nvidia/nvshmem/lib", wheel=True)
    record = _links(sp)["extension_links"][SO]
    assert record["needed"] == [NVSHMEM] and record["found"] == {NVSHMEM: str(sp / "nvidia/nvshmem/lib" / NVSHMEM)}


def test_probe_expands_origin_and_reads_ld_library_path(tmp_path: Path) -> None:
    sp = _site(tmp_path, rpath="$ORIGIN/nvidia/nvshmem/lib", wheel=True)
    assert _links(sp)["extension_links"][SO]["found"][NVSHMEM] == str(sp / "nvidia/nvshmem/lib" / NVSHMEM)
    other = _site(tmp_path / "b", rpath="/opt/nvshmem-gone/lib")
    lib = tmp_path / "b" / "nvshmem" / "lib"
    lib.mkdir(parents=True)
    write_so(lib / NVSHMEM, soname=NVSHMEM)
    found = _links(other, {"LD_LIBRARY_PATH": str(lib)})["extension_links"][SO]["found"]
    assert found == {NVSHMEM: str(lib / NVSHMEM)}


def _gate(
    tmp_path: Path, entry: dict[str, Any], torch_cuda: str | None = None, packages: dict[str, Any] | None = None
) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"]["deep-ep"] = {"installed": True, "version": "1.2.1", **entry}
    doc["facts"]["packages"].update(packages or {})
    if torch_cuda is not None:
        doc["facts"]["packages"]["torch"]["cuda"] = torch_cuda
    box.write_text(json.dumps(doc))
    out = gate_tp8(box, model_dir(tmp_path, "qwen3moe", QWEN3_MOE), "--moe-a2a-backend", "deepep")
    return next(c for c in (out.get("preflight") or {}).get("checks") or [] if c.get("check") == A2A)


def _host_has_nvshmem() -> bool:
    from stackcheck.probes.cudalibs import probe_cuda_libs
    from stackcheck.readers.fsview import HostView

    return probe_cuda_libs({}, HostView(), (NVSHMEM,)).get(NVSHMEM) is not None


def test_nvshmem_gone_refused(tmp_path: Path) -> None:
    # fails on the parent: ok for any deep_ep_cpp present (the nvidia-nvshmem wheel uninstalled, DeepEP kept)
    if _host_has_nvshmem():
        pytest.skip(f"this host's loader finds a {NVSHMEM} (ld.so cache or default directories)")
    sp = _site(tmp_path, rpath=f"{tmp_path}/lib/python3.12/site-packages/nvidia/nvshmem/lib")
    check = _gate(tmp_path / "g", _links(sp), packages={"nvidia-nvshmem-cu12": {"installed": False}})
    assert check["status"] == "fail" and NVSHMEM in check["observed"] and "DeepEP is not installed" in check["message"]


def test_nvshmem_in_its_rpath_ok_of_torchs_major(tmp_path: Path) -> None:
    # a guard (ok on the parent too): the new reading passes the working install
    sp = _site(tmp_path, rpath="$ORIGIN/nvidia/nvshmem/lib", wheel=True)
    check = _gate(tmp_path / "g", _links(sp), "12.8", packages={"nvidia-nvshmem-cu12": {"installed": True}})
    assert check["status"] == "ok" and NVSHMEM in check["message"]


def test_unknown_where_not_decided(tmp_path: Path) -> None:
    # fails on the parent (ok): links not read, a copy only torch's wheels have, another CUDA major's wheel
    files = {"extension_files": [SO]}
    assert _gate(tmp_path / "a", files)["status"] == "unknown"
    sp = _site(tmp_path / "b", rpath="/opt/nvshmem-gone/lib", wheel=True)
    check = _gate(tmp_path / "b" / "g", _links(sp))
    assert _host_has_nvshmem() or (check["status"] == "unknown" and "torch may have loaded" in check["message"])
    sp = _site(tmp_path / "c", rpath="$ORIGIN/nvidia/nvshmem/lib", wheel=True)
    check = _gate(tmp_path / "c" / "g", _links(sp), "13.0", packages={"nvidia-nvshmem-cu12": {"installed": True}})
    assert check["status"] == "unknown" and "CUDA 12" in check["message"] and "CUDA 13" in check["message"]
    error = {"extension_files": [SO], "extension_links": {SO: {"error": "truncated"}}}
    assert _gate(tmp_path / "d", error)["status"] == "unknown"
