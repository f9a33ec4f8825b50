"""ifc37, the thirty-seventh fact-check sample (row a3): audit said extension-torch-abi-lmcache ok for LMCache 0.4.3
beside torch 2.11.0 from PyPI, judging only its torch symbols. LMCache 0.4.3's c_ops links libcudart.so.12 (DT_NEEDED,
no RUNPATH) while that torch is built with CUDA 13.0 and brings libcudart.so.13 (read in the wheels, 2026-12-05):
the import loads c_ops only where the loader finds a CUDA 12 runtime on its own path, which the facts do not say.
The probe now records the CUDA runtime an extension links (`cuda_runtime`) and the check judges it: torch's own
major passes, another is unknown (never ok)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import write_so

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report
from stackcheck.readers.fsview import HostView
from stackcheck.readers.kernelsymbols import probe_kernel_symbols

ALLOC = "_ZN3c1019UndefinedTensorImpl10_singletonE"
C_OPS = "lmcache/c_ops.cpython-312-x86_64-linux-gnu.so"


def _site(root: Path, needed: list[str]) -> Path:
    site = root / "site"
    lib = site / "torch" / "lib"
    lib.mkdir(parents=True)
    write_so(lib / "libc10.so", defined=[ALLOC])
    (site / "sgl_kernel").mkdir()
    write_so(site / "sgl_kernel" / "common_ops.abi3.so", undefined=[ALLOC], needed=["libc10.so"])
    (site / "lmcache").mkdir()
    write_so(site / C_OPS, undefined=[ALLOC, "memcpy"], needed=needed)
    return site


def _section(tmp_path: Path, needed: list[str]) -> dict[str, Any]:
    site = _site(tmp_path, needed)
    packages = {
        "sgl-kernel": {"installed": True, "version": "0.3.21", "location": str(site)},
        "torch": {"installed": True, "version": "2.11.0", "location": str(site)},
    }
    section = probe_kernel_symbols(packages, HostView("/"), None)
    assert section is not None
    return section


def test_the_probe_records_the_cuda_runtime_an_extension_links(tmp_path: Path) -> None:
    section = _section(tmp_path, ["libc10.so", "libcudart.so.12", "libstdc++.so.6"])
    (lm,) = [e for e in section["extensions"] if e["extension"] == "lmcache"]
    assert lm["cuda_runtime"] == ["libcudart.so.12"] and lm["torch_missing_count"] == 0


def test_no_runtime_linked_no_key(tmp_path: Path) -> None:
    section = _section(tmp_path, ["libc10.so"])
    (lm,) = [e for e in section["extensions"] if e["extension"] == "lmcache"]
    assert "cuda_runtime" not in lm


def _check(tmp_path: Path, runtime: list[str] | None, torch_cuda: str | None) -> dict[str, Any]:
    ext: dict[str, Any] = {"extension": "lmcache", "path": C_OPS, "torch_symbols": 64, "torch_missing_count": 0}
    if runtime is not None:
        ext["cuda_runtime"] = runtime
    torch: dict[str, Any] = {"installed": True, "version": "2.11.0"}
    if torch_cuda is not None:
        torch.update(version=f"2.11.0+cu{torch_cuda.replace('.', '')}", cuda=torch_cuda)
    facts = {
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}],
        "packages": {"sgl-kernel": {"installed": True, "version": "0.3.21"}, "torch": torch},
        "kernel_symbols": {
            "package": "sgl-kernel",
            "version": "0.3.21",
            "files": [{"path": "sgl_kernel/common_ops.abi3.so", "torch_symbols": 2, "torch_missing_count": 0}],
            "extension_dirs": ["/site"],
            "extensions": [ext],
        },
    }
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    report, _ = build_report(Options(facts_file=str(path), launch={"enable_lmcache": True}))
    return next(dict(c) for c in report["checks"] if c["id"] == "extension-torch-abi-lmcache")


def test_a_cuda_12_extension_beside_a_cuda_13_torch_is_not_ok(tmp_path: Path) -> None:
    c = _check(tmp_path, ["libcudart.so.12"], "13.0")
    assert c["status"] == "unknown", c
    (r,) = [r for r in c["reasons"] if r.get("rule") == "cuda-runtime"]
    assert r["result"] == "unknown" and "libcudart.so.12: cannot open shared object file" in r["message"]


@pytest.mark.parametrize(
    ("runtime", "cuda"), [(["libcudart.so.12"], "12.8"), (None, "13.0"), (["libcudart.so.12"], None)]
)
def test_the_same_major_none_linked_or_torch_cuda_unknown_stays_ok(
    tmp_path: Path, runtime: list[str] | None, cuda: str | None
) -> None:
    c = _check(tmp_path, runtime, cuda)
    assert c["status"] == "ok", c


def test_lmcache_cuda_ops_loaded_inside_a_try_is_not_judged_by_it(tmp_path: Path) -> None:
    """LMCache 0.5.4-0.5.6's cuda_ops (libcudart.so.13) beside torch 2.8.0+cu128: LMCache loads it inside a try and
    stays on torch ops, so a runtime it may not find degrades at most; the rule stays out (the gate allowed these
    launches before, and must still)."""
    facts_check = _check(tmp_path, ["libcudart.so.13"], "12.8")
    assert facts_check["status"] == "unknown"  # c_ops would be judged
    path = tmp_path / "facts.json"
    doc = json.loads(path.read_text())
    (ext,) = doc["facts"]["kernel_symbols"]["extensions"]
    ext.update(extension="lmcache_cuda_ops", path="lmcache/cuda_ops.cpython-312-x86_64-linux-gnu.so")
    path.write_text(json.dumps(doc))
    report, _ = build_report(Options(facts_file=str(path), launch={"enable_lmcache": True}))
    c = next(c for c in report["checks"] if c["id"] == "extension-torch-abi-lmcache")
    assert c["status"] == "ok" and not any(r.get("rule") == "cuda-runtime" for r in c["reasons"]), c
