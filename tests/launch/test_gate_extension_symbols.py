"""Other packages' compiled torch extensions that a launch loads (facts.kernel_symbols.extensions, the checks
extension-torch-abi-*): the gate refuses a launch whose flag loads an extension built against another torch
(--enable-lmcache with LMCache's c_ops missing a c10 symbol, LMCache#1294's shape), and the same box passes the
launches that do not load it; a degraded one (torchao catches its own load failure) only warns.

The facts are the h200-newest case (H200, SGLang 0.5.23, sglang-kernel 0.4.10, torch 2.14.1+cu130) with the
kernel symbol probe's section written in its shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import LLAMA3, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
MISSING = "_ZN3c105ErrorC2ENS_14SourceLocationESs"


#: where LMCache 0.5.6's multi-process connector finds its server under SGLang 0.5.21-0.5.23 (without it the launch
#: stops with ValueError 'LMCache MP config must define mp_host': rule lmcache-unified-mp-host, igap44)
MP = ("--lmcache-config-file", "/etc/lmcache/mp.yaml")


def _facts(tmp_path: Path, missing: int, extension: str = "lmcache") -> Path:
    doc = json.loads(H200.read_text())
    common = {
        "path": "sgl_kernel/sm90/common_ops.abi3.so", "torch_symbols": 107, "driver_symbols": 19,
        "torch_missing_count": 0, "torch_missing": [], "driver_missing_count": 0, "driver_missing": [],
    }  # fmt: skip
    ext = {
        "extension": extension, "path": f"{extension}/c_ops.cpython-312-x86_64-linux-gnu.so", "torch_symbols": 40,
        "torch_missing_count": missing, "torch_missing": [MISSING] * min(missing, 1),
    }  # fmt: skip
    # LMCache installed at the release SGLang 0.5.23 (the case's) imports from (lmcache-sglang-adapter); the case
    # lists no lmcache, and --enable-lmcache without it is refused on its own (ifc37)
    doc["facts"]["packages"]["lmcache"] = {"installed": True, "version": "0.5.6", "location": "/x"}
    site = "/opt/venv/lib/python3.12/site-packages"
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [common], "extension_dirs": [site],
        "extensions": [ext], "libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    }  # fmt: skip
    path = tmp_path / f"facts-{extension}-{missing}.json"
    path.write_text(json.dumps(doc))
    return path


def _check(doc: dict[str, Any], check: str) -> list[dict[str, Any]]:
    return [r for f in doc["reasons"] if f.get("check") == check or f.get("feature") == check for r in f["reasons"]]


def test_lmcache_launch_is_refused_where_c_ops_misses_a_torch_symbol(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    broken = _facts(tmp_path, 1)
    doc = gate_json(broken, "--model-path", str(model), "--enable-lmcache", dry_run=True)
    assert doc["decision"] == "refuse", doc["decision"]
    (reason,) = [r for r in _check(doc, "extension-torch-abi-lmcache") if r.get("result") == "fail"]
    assert reason["effect"] == "crash" and reason["observed"] == "1 of 40 missing", reason
    assert MISSING in reason["message"] and "c10::Error::Error" in reason["message"]
    # the same box, a launch without --enable-lmcache: LMCache is never imported, judged as the plain box
    other = gate_json(broken, "--model-path", str(model), dry_run=True)
    plain = gate_json(_facts(tmp_path, 0), "--model-path", str(model), dry_run=True)
    assert other["decision"] == plain["decision"], (other["decision"], plain["decision"])
    assert not any(r.get("result") == "fail" for r in _check(other, "extension-torch-abi-lmcache"))
    # a c_ops that resolves: the flag is allowed as on the plain box
    fine = gate_json(_facts(tmp_path, 0), "--model-path", str(model), "--enable-lmcache", *MP, dry_run=True)
    assert fine["decision"] == plain["decision"], (fine["decision"], plain["decision"])


def test_torchao_launch_only_warns_since_torchao_catches_its_load_failure(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    broken = _facts(tmp_path, 1, "torchao")
    doc = gate_json(broken, "--model-path", str(model), "--torchao-config", "int8wo", dry_run=True)
    plain = gate_json(
        _facts(tmp_path, 0, "torchao"), "--model-path", str(model), "--torchao-config", "int8wo", dry_run=True
    )
    assert doc["decision"] == plain["decision"], (doc["decision"], plain["decision"])
    (warning,) = [w for w in doc["warnings"] if w.get("feature") == "extension-torch-abi-torchao"]
    assert warning["effect"] == "degraded" and "--torchao-config given" in warning["why"], warning


def test_lmcache_cuda_ops_of_054_on_is_judged_not_refused_as_missing(tmp_path: Path) -> None:
    """irev53: LMCache 0.5.4-0.5.6 ship lmcache/cuda_ops.*.so and no c_ops. The gate refused every --enable-lmcache
    launch on them ('no compiled library found': unknown); their cuda_ops is judged instead, and one built against
    another torch only warns (LMCache loads it inside a try and stays on torch ops)."""
    model = model_dir(tmp_path, "llama", LLAMA3)
    plain = gate_json(_facts(tmp_path, 0), "--model-path", str(model), dry_run=True)
    for missing in (0, 1):
        path = _facts(tmp_path, missing)
        doc = json.loads(path.read_text())
        (ext,) = doc["facts"]["kernel_symbols"]["extensions"]
        ext.update(extension="lmcache_cuda_ops", path="lmcache/cuda_ops.cpython-312-x86_64-linux-gnu.so")
        path.write_text(json.dumps(doc))
        got = gate_json(path, "--model-path", str(model), "--enable-lmcache", *MP, dry_run=True)
        assert got["decision"] == plain["decision"], (missing, got["decision"], plain["decision"])
        reasons = _check(got, "extension-torch-abi-lmcache")
        assert not any(r.get("result") == "unknown" for r in reasons), reasons
        if missing:
            (warning,) = [w for w in got["warnings"] if w.get("feature") == "extension-torch-abi-lmcache"]
            assert warning["effect"] == "degraded", warning
