"""The kernel symbol probe on real wheels: sgl-kernel 0.3.0's common_ops.abi3.so (built for torch 2.8.0, as
components.json pairs them) against the libraries of torch 2.8.0 (every torch symbol resolves) and of torch
2.7.1 (c10::cuda::SetDevice(signed char, bool) is missing: sglang issue #9173's 'undefined symbol:
_ZN3c104cuda9SetDeviceEab'). Only the parts of each library the loader reads are unpacked (sparse files,
tests/registry_wheels.extract_dynamic)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry_wheels import extract_dynamic, fetch_wheel

from stackcheck.readers.fsview import HostView
from stackcheck.readers.kernelsymbols import probe_kernel_symbols

pytestmark = pytest.mark.registry

TORCH_LIBS = ("libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so", "libc10_cuda.so")


def _site(tmp_path: Path, torch: str) -> Path:
    site = tmp_path / f"site-{torch}"
    (site / "sgl_kernel").mkdir(parents=True)
    (site / "torch" / "lib").mkdir(parents=True)
    kernel = fetch_wheel("sgl-kernel", "0.3.0")
    (site / "sgl_kernel" / "common_ops.abi3.so").symlink_to(extract_dynamic(kernel, "sgl_kernel/common_ops.abi3.so"))
    wheel = fetch_wheel("torch", torch)
    for name in TORCH_LIBS:
        (site / "torch" / "lib" / name).symlink_to(extract_dynamic(wheel, f"torch/lib/{name}"))
    return site


@pytest.mark.parametrize(("torch", "missing"), [("2.8.0", []), ("2.7.1", ["_ZN3c104cuda9SetDeviceEab"])])
def test_sgl_kernel_030_against_real_torch(tmp_path: Path, torch: str, missing: list[str]) -> None:
    site = _site(tmp_path, torch)
    packages = {
        "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
        "torch": {"installed": True, "version": torch, "location": str(site)},
    }
    ks = probe_kernel_symbols(packages, HostView("/"), None)
    assert ks is not None and "error" not in ks, ks
    (f,) = ks["files"]
    assert f["torch_symbols"] == 112  # nm -D --undefined-only, c10/at/torch/caffe2 namespaces: 112 names
    assert f["driver_symbols"] == 19  # cuGreenCtxCreate, cuGetProcAddress_v2, ...: 19 names
    assert f["torch_libs"] == ["libtorch.so", "libc10.so", "libc10_cuda.so", "libtorch_cpu.so", "libtorch_cuda.so"]
    assert f["torch_missing"] == missing and f["torch_missing_count"] == len(missing)
    assert ks["bytes_read"] < 4_000_000, ks["bytes_read"]  # the tables are never read whole


def _functorch_site(tmp_path: Path, with_python: bool) -> Path:
    """torch 2.8.0's functorch/_C (a real extension: DT_NEEDED libtorch_python.so first, and THPVariableClass and
    THPVariable_Wrap(at::TensorBase const&) undefined, both exported by that library, nm -D) standing in for
    common_ops, beside torch 2.8.0's libraries, libtorch_python.so included or left out."""
    site = tmp_path / f"site-functorch-{with_python}"
    (site / "sgl_kernel").mkdir(parents=True)
    (site / "torch" / "lib").mkdir(parents=True)
    # the cp310 build: its functorch/_C leaves the THP names undefined (the cp312 build's binds none of torch's)
    wheel = fetch_wheel("torch", "2.8.0", python="3.10")
    ext = extract_dynamic(wheel, "functorch/_C.cpython-310-x86_64-linux-gnu.so")
    (site / "sgl_kernel" / "common_ops.abi3.so").symlink_to(ext)
    for name in (*TORCH_LIBS, "libshm.so", *(("libtorch_python.so",) if with_python else ())):
        (site / "torch" / "lib" / name).symlink_to(extract_dynamic(wheel, f"torch/lib/{name}"))
    return site


def test_python_binding_names_of_a_real_extension(tmp_path: Path) -> None:
    """Every THP* name of functorch/_C resolves in torch 2.8.0's libtorch_python.so (before, THP names were not
    torch's and were never looked up); with that library not in torch/lib, they are unknown, not missing."""
    for with_python in (True, False):
        site = _functorch_site(tmp_path, with_python)
        packages = {
            "sgl-kernel": {"installed": True, "version": "0.0.0", "location": str(site)},
            "torch": {"installed": True, "version": "2.8.0", "location": str(site)},
        }
        ks = probe_kernel_symbols(packages, HostView("/"), None)
        assert ks is not None and "error" not in ks, ks
        (f,) = ks["files"]
        if with_python:
            assert f["torch_libs"][0] == "libtorch_python.so" and f["torch_missing_count"] == 0, f
        else:
            assert f["torch_unread"] == ["libtorch_python.so"] and "torch_missing_count" not in f, f
            assert "THPVariable" in f["torch_error"], f
