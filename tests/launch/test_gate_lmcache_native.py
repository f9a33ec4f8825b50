"""LMCache 0.5.4-0.5.6's lmcache_native module (igap25): imported at module level on the SGLang adapter's path
(sglang_adapter.py:26 -> lmcache/v1/gpu_connector/__init__.py:11 -> gpu_connector/utils.py:30, no try), so a
library of it that misses a torch symbol ends the --enable-lmcache start; the extension search now reads it
(readers/kernelsymbols.py EXTENSIONS lmcache_native, check extension-torch-abi-lmcache). Before, such a file was not
judged at all (the check passed on cuda_ops alone). The real 0.5.6 file needs no torch symbol: it passes against
torch 2.9.1's libraries (registry)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
CHECK = "extension-torch-abi-lmcache"
NATIVE = "lmcache/lmcache_native.cpython-312-x86_64-linux-gnu.so"
SITE = "/opt/venv/lib/python3.12/site-packages"


def _facts(tmp_path: Path, native_missing: int) -> Path:
    """h200-newest with LMCache 0.5.6 whose cuda_ops resolves and whose lmcache_native misses `native_missing`
    torch symbols."""
    doc = json.loads(H200.read_text())
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "location": SITE}
    cuda_ops = {
        "extension": "lmcache_cuda_ops", "path": "lmcache/cuda_ops.cpython-312-x86_64-linux-gnu.so",
        "torch_symbols": 65, "torch_missing_count": 0, "torch_missing": [],
    }  # fmt: skip
    native = {
        "extension": "lmcache_native", "path": NATIVE, "torch_symbols": 3, "torch_missing_count": native_missing,
        "torch_missing": ["_ZN3c105ErrorC2ENS_14SourceLocationESs"] * native_missing,
    }  # fmt: skip
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [], "extension_dirs": [SITE],
        "extensions": [cuda_ops, native],
    }  # fmt: skip
    path = tmp_path / f"facts-native-{native_missing}.json"
    path.write_text(json.dumps(doc))
    return path


def _refusing(doc: dict[str, Any]) -> dict[str, Any] | None:
    return next((f for f in doc["reasons"] if f.get("feature") == CHECK), None)


def test_lmcache_native_missing_a_torch_symbol_refuses_enable_lmcache(tmp_path: Path) -> None:
    model = str(model_dir(tmp_path, "llama", LLAMA3))
    bad = gate_json(_facts(tmp_path, 1), "--model-path", model, "--enable-lmcache", dry_run=True)
    entry = _refusing(bad)
    assert entry is not None and entry["effect"] == "crash", bad["warnings"]
    (reason,) = [r for r in entry["reasons"] if r.get("result") == "fail"]
    assert NATIVE in reason["message"] and "undefined symbol" in reason["message"], reason
    good = gate_json(_facts(tmp_path, 0), "--model-path", model, "--enable-lmcache", dry_run=True)
    assert _refusing(good) is None


@pytest.mark.registry
def test_real_lmcache_056_native_is_read_and_needs_no_torch_symbol(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from registry_wheels import extract_dynamic, fetch_wheel

    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import probe_kernel_symbols

    site = tmp_path / "site"
    for d in ("sgl_kernel", "lmcache", "torch/lib"):
        (site / d).mkdir(parents=True)
    kernel = fetch_wheel("sgl-kernel", "0.3.0")
    (site / "sgl_kernel" / "common_ops.abi3.so").symlink_to(extract_dynamic(kernel, "sgl_kernel/common_ops.abi3.so"))
    (site / "lmcache" / "__init__.py").write_text("")
    (site / NATIVE).symlink_to(extract_dynamic(fetch_wheel("lmcache", "0.5.6"), NATIVE))
    wheel = fetch_wheel("torch", "2.9.1")
    for lib in ("libtorch.so", "libtorch_cpu.so", "libtorch_cuda.so", "libc10.so", "libc10_cuda.so"):
        (site / "torch" / "lib" / lib).symlink_to(extract_dynamic(wheel, f"torch/lib/{lib}"))
    for lib in ("libtorch_python.so", "libshm.so", "libtorch_nvshmem.so"):
        (site / "torch" / "lib" / lib).symlink_to(extract_dynamic(wheel, f"torch/lib/{lib}"))
    packages = {
        "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
        "torch": {"installed": True, "version": "2.9.1", "location": str(site)},
    }
    ks = probe_kernel_symbols(packages, HostView("/"), None)
    assert ks is not None
    (native,) = [e for e in ks["extensions"] if e["extension"] == "lmcache_native"]
    assert native["path"] == NATIVE and native["torch_missing_count"] == 0, native
