"""ifc52 (beside the fifty-second sample's x rows), the mirror of igap50: nixl 0.7.1-1.0.1 import nixl_cu13 whenever it
is installed, whatever torch's CUDA is, and nixl-cu13 0.7.1's bundled UCX CUDA module
(nixl_cu13.libs/ucx/libucm_cuda.so) and its UCX_MO / GDS / LIBFABRIC plugins NEED libcudart.so.13 (readelf -d).
Beside a torch of CUDA 12 that soname is loaded only where the loader finds it; without it UCX runs without CUDA,
which aborted the process for the other major on the lent H100 (ifc52: not run in this direction, unknown). On
the parent every unknown box here passed the gate's transfer-package check ("nixl is installed"). The sixteenth
session ran this direction on the lent H100 (bench/nixl_cu13_on_cuda12.py: the same abort, at create_backend): a
read release (0.7.1) without the library found now fails."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, MOONCAKE_SYSTEM_LIBS, NIXL_SYSTEM_LIBS, gate_tp8, model_dir, release_box

CHECK = "transfer-package"
NIXL = ("--disaggregation-mode", "decode", "--disaggregation-transfer-backend", "nixl")
CUDART13 = "libcudart.so.13"
FOUND = {**MOONCAKE_SYSTEM_LIBS, **NIXL_SYSTEM_LIBS, "libcudart.so.12": "/usr/local/cuda-12.8/lib64/libcudart.so.12"}
MISSING = {"installed": False}


def _pkg(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version, "dist_version": version}


def _check(
    tmp_path: Path, packages: Mapping[str, Any], libs: Mapping[str, Any], torch_cuda: str = "12.8"
) -> dict[str, Any]:
    """The transfer-package check of a NIXL decode launch (Llama 3, --tp 8) on h200-newest at SGLang 0.5.14 (no
    nixl_thread_sync_t import: ifc52's api_floor does not apply) with `packages` over nixl / nixl-cu12 / nixl-cu13 not
    installed, torch of CUDA `torch_cuda` and cuda_libs `libs` (a key left out: not looked for)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    facts = release_box(tmp_path, "0.5.14", "9.0")
    doc = json.loads(facts.read_text())
    listed = doc["facts"]["packages"]
    listed.update({"nixl": MISSING, "nixl-cu12": MISSING, "nixl-cu13": MISSING, "mooncake-transfer-engine": MISSING})
    listed.update(packages)
    listed["torch"]["cuda"] = torch_cuda
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", **libs}
    facts.write_text(json.dumps(doc))
    decision = gate_tp8(facts, model_dir(tmp_path, "m", LLAMA3), *NIXL)
    found = [c for c in (decision.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    assert found, decision.get("preflight")
    check: dict[str, Any] = found[0]
    check["decision"] = decision["decision"]
    return check


CU13_FIRST = {"nixl": _pkg("0.7.1"), "nixl-cu13": _pkg("0.7.1")}


@pytest.mark.parametrize(
    "packages",
    [CU13_FIRST, {**CU13_FIRST, "nixl-cu12": _pkg("0.7.1")}],  # (read: nixl-cu13 0.7.1 NEEDs it; cu13 taken first)
)
def test_nixl_cu13_071_beside_a_cuda12_torch_without_cudart13_fails(tmp_path: Path, packages: dict[str, Any]) -> None:
    # fails on the parent (unknown, "this direction was not run"): run on the lent H100, the UCX abort
    check = _check(tmp_path, packages, {**FOUND, CUDART13: None})
    assert check["status"] == "fail", check
    assert check["decision"] == "refuse"
    assert CUDART13 in check["message"] and "SIGABRT" in check["message"], check["message"]


@pytest.mark.parametrize(
    ("packages", "libs", "words"),
    [
        (CU13_FIRST, FOUND, "was not probed"),  # libcudart.so.13 not looked for
        ({"nixl": _pkg("1.0.1"), "nixl-cu13": _pkg("1.0.1")}, {**FOUND, CUDART13: None}, "1.0.1"),  # release not read
    ],
)
def test_nixl_cu13_taken_first_beside_a_cuda12_torch_without_cudart13_is_unknown(
    tmp_path: Path, packages: dict[str, Any], libs: dict[str, Any], words: str
) -> None:
    # fails on the parent (16be29e3): ok, "nixl is installed"
    check = _check(tmp_path, packages, libs)
    assert check["status"] == "unknown", check
    assert CUDART13 in check["message"] and words in check["message"], check["message"]


@pytest.mark.parametrize(
    ("packages", "libs", "torch_cuda"),
    [
        (CU13_FIRST, {**FOUND, CUDART13: "/usr/local/cuda-13.0/lib64/libcudart.so.13"}, "12.8"),  # the loader finds it
        (CU13_FIRST, {**FOUND, CUDART13: None}, "13.0"),  # torch of CUDA 13 has loaded it
        ({"nixl": _pkg("0.7.1"), "nixl-cu12": _pkg("0.7.1")}, {**FOUND, CUDART13: None}, "12.8"),  # no nixl-cu13
        ({"nixl": _pkg("1.1.0"), "nixl-cu12": _pkg("1.1.0"), "nixl-cu13": _pkg("1.1.0")}, {**FOUND, CUDART13: None},
         "12.8"),  # 1.1.0+ take torch's major: nixl_cu12
        ({"nixl": _pkg("0.6.1")}, {**FOUND, CUDART13: None}, "12.8"),  # nixl's own CUDA 12 package
    ],
)  # fmt: skip
def test_what_loads_no_nixl_cu13_ucx_without_its_runtime_passes(
    tmp_path: Path, packages: dict[str, Any], libs: dict[str, Any], torch_cuda: str
) -> None:
    check = _check(tmp_path, packages, libs, torch_cuda)
    assert check["status"] == "ok", check
