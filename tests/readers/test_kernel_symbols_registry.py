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
