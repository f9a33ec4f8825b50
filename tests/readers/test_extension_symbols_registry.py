"""The extension half of the kernel symbol probe on real wheels: torchao 0.13.0's _C*.abi3.so (its __init__ loads
them with torch.ops.load_library; built for torch 2.8) against the libraries of torch 2.8.0 (every torch symbol
resolves: no false failure on a working pair) and of torch 2.7.1 (c10::cuda::SetDevice(signed char, bool), torch
2.8's, is missing from _C.abi3.so and _C_cutlass_90a.abi3.so; _C_cutlass_100a.abi3.so does not need it). Only the
parts of each library the loader reads are unpacked (tests/registry_wheels.extract_dynamic)."""

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
TORCHAO = ("_C.abi3.so", "_C_cutlass_100a.abi3.so", "_C_cutlass_90a.abi3.so")
SET_DEVICE = "_ZN3c104cuda9SetDeviceEab"


def _site(tmp_path: Path, torch: str) -> Path:
    site = tmp_path / f"site-{torch}"
    for d in ("sgl_kernel", "torchao", "torch/lib"):
        (site / d).mkdir(parents=True)
    kernel = fetch_wheel("sgl-kernel", "0.3.0")
    (site / "sgl_kernel" / "common_ops.abi3.so").symlink_to(extract_dynamic(kernel, "sgl_kernel/common_ops.abi3.so"))
    ao = fetch_wheel("torchao", "0.13.0")
    for name in TORCHAO:
        (site / "torchao" / name).symlink_to(extract_dynamic(ao, f"torchao/{name}"))
    wheel = fetch_wheel("torch", torch)
    for name in TORCH_LIBS:
        (site / "torch" / "lib" / name).symlink_to(extract_dynamic(wheel, f"torch/lib/{name}"))
    return site


@pytest.mark.parametrize(
    ("torch", "missing"),
    [
        ("2.8.0", {n: [] for n in TORCHAO}),
        ("2.7.1", {TORCHAO[0]: [SET_DEVICE], TORCHAO[1]: [], TORCHAO[2]: [SET_DEVICE]}),
    ],
)
def test_torchao_0130_against_real_torch(tmp_path: Path, torch: str, missing: dict[str, list[str]]) -> None:
    site = _site(tmp_path, torch)
    packages = {
        "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
        "torch": {"installed": True, "version": torch, "location": str(site)},
    }
    ks = probe_kernel_symbols(packages, HostView("/"), None)
    assert ks is not None and ks["extension_dirs"] == [str(site)]
    got = {e["path"].split("/", 1)[1]: e for e in ks["extensions"] if e["extension"] == "torchao"}
    assert set(got) == set(TORCHAO)
    for name, want in missing.items():
        assert got[name]["torch_symbols"] > 0 and got[name]["torch_missing"] == want, (name, got[name])


def test_lmcache_056_cuda_ops_is_found_and_judged_against_real_torch(tmp_path: Path) -> None:
    """irev53: LMCache 0.5.6 ships lmcache/cuda_ops.cpython-312-x86_64-linux-gnu.so, no c_ops; the probe reads it
    (extension lmcache_cuda_ops) instead of reporting LMCache's library absent. Against torch 2.9.1's libraries it
    needs names that release does not export (it was built against a later torch; first among them
    c10::cuda::c10_cuda_check_implementation with an unsigned line number): a load LMCache catches (degraded)."""
    site = tmp_path / "site"
    for d in ("sgl_kernel", "lmcache", "torch/lib"):
        (site / d).mkdir(parents=True)
    kernel = fetch_wheel("sgl-kernel", "0.3.0")
    (site / "sgl_kernel" / "common_ops.abi3.so").symlink_to(extract_dynamic(kernel, "sgl_kernel/common_ops.abi3.so"))
    lm = fetch_wheel("lmcache", "0.5.6")
    name = "cuda_ops.cpython-312-x86_64-linux-gnu.so"
    (site / "lmcache" / "__init__.py").write_text("")
    (site / "lmcache" / name).symlink_to(extract_dynamic(lm, f"lmcache/{name}"))
    wheel = fetch_wheel("torch", "2.9.1")
    for lib in (*TORCH_LIBS, "libtorch_python.so", "libshm.so", "libtorch_nvshmem.so"):
        (site / "torch" / "lib" / lib).symlink_to(extract_dynamic(wheel, f"torch/lib/{lib}"))
    packages = {
        "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
        "torch": {"installed": True, "version": "2.9.1", "location": str(site)},
    }
    ks = probe_kernel_symbols(packages, HostView("/"), None, sys_path=[str(site)])
    assert ks is not None
    (cu,) = [e for e in ks["extensions"] if e["extension"].startswith("lmcache")]
    assert cu["extension"] == "lmcache_cuda_ops" and cu["path"] == f"lmcache/{name}"
    assert cu["torch_symbols"] == 65 and cu["torch_missing_count"] == 6, cu
    assert cu["torch_missing"][0] == "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jb"
