"""sgl-kernel's FA3 extension (sgl_kernel/flash_ops) failing to load crashes a launch on fa3. Its
sgl_kernel/flash_attn.py raises ImportError when `from sgl_kernel import flash_ops` fails (sgl-kernel 0.1.5-0.3.21,
sglang-kernel 0.4.10), and SGLang's fa3 backend imports that module when the server starts (flashattention_backend.py,
0.5.1-0.5.23). Before, a torch symbol or driver API function flash_ops needs and the box lacks was only a degraded
failure of the checks sgl-kernel-torch-abi / driver-api (a warning): the gate allowed fa3. Now attention-fa3's rule
flash-ops-loads blocks it (effect crash); launches on other backends are judged as before.

The facts are the h200-newest case (H200, SGLang 0.5.23, sglang-kernel 0.4.10, torch 2.14.1+cu130) with the kernel
symbol probe's section written in its shape: flash_ops needs one torch symbol torch does not export."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from gate_cli import LLAMA3, gate_json, model_dir

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
MISSING = "_ZN3c104cuda9SetDeviceEab"


def _facts(tmp_path: Path, torch_missing: int, driver_missing: int = 0, driver_source: str | None = None) -> Path:
    doc = json.loads(H200.read_text())
    common = {
        "path": "sgl_kernel/sm90/common_ops.abi3.so", "torch_symbols": 107, "driver_symbols": 19,
        "torch_missing_count": 0, "torch_missing": [], "driver_missing_count": 0, "driver_missing": [],
    }  # fmt: skip
    flash = {
        "module": "flash_ops", "path": "sgl_kernel/flash_ops.abi3.so", "torch_symbols": 40, "driver_symbols": 2,
        "torch_missing_count": torch_missing, "torch_missing": [MISSING] * min(torch_missing, 1),
        "driver_missing_count": driver_missing, "driver_missing": ["cuGreenCtxCreate"] * min(driver_missing, 1),
    }  # fmt: skip
    doc["facts"]["kernel_symbols"] = {
        "package": "sglang-kernel", "version": "0.4.10", "files": [common], "modules": [flash],
        "libcuda": "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
    }  # fmt: skip
    if driver_source is not None:
        doc["facts"]["driver"] = {**copy.deepcopy(doc["facts"]["driver"]), "source": driver_source}
    path = tmp_path / f"facts-{torch_missing}-{driver_missing}-{driver_source}.json"
    path.write_text(json.dumps(doc))
    return path


def _fa3(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for f in doc["reasons"] if f.get("feature") == "attention-fa3" for r in f.get("reasons") or []]


def test_fa3_is_refused_where_flash_ops_does_not_load(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    doc = gate_json(_facts(tmp_path, 1), "--model-path", str(model), "--attention-backend", "fa3", dry_run=True)
    assert doc["decision"] == "refuse", doc["decision"]
    (rule,) = [r for r in _fa3(doc) if r.get("rule") == "flash-ops-loads"]
    assert rule["result"] == "fail" and rule["effect"] == "crash", rule
    assert "flash_ops" in rule["message"] and "ImportError" in rule["message"]
    # SGLang's own pick on Hopper is fa3 too (no attention flag): refused the same way
    bare = gate_json(_facts(tmp_path, 1), "--model-path", str(model), dry_run=True)
    assert bare["decision"] == "refuse" and any(r.get("rule") == "flash-ops-loads" for r in _fa3(bare))
    # a driver API function missing from the box's driver counts as well
    driver = gate_json(_facts(tmp_path, 0, 1), "--model-path", str(model), "--attention-backend", "fa3", dry_run=True)
    assert driver["decision"] == "refuse"


def test_other_launches_are_judged_as_before(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    fine = gate_json(_facts(tmp_path, 0), "--model-path", str(model), "--attention-backend", "fa3", dry_run=True)
    plain = gate_json(H200, "--model-path", str(model), "--attention-backend", "fa3", dry_run=True)
    assert fine["decision"] == plain["decision"]
    assert not any(r.get("rule") == "flash-ops-loads" and r.get("result") == "fail" for r in _fa3(fine))
    # flashinfer does not import flash_ops: the module's fault stays the checks' warning
    other = gate_json(
        _facts(tmp_path, 1), "--model-path", str(model), "--attention-backend", "flashinfer", dry_run=True
    )
    before = gate_json(H200, "--model-path", str(model), "--attention-backend", "flashinfer", dry_run=True)
    assert other["decision"] == before["decision"], (other["decision"], before["decision"])
    # an assumed driver's libcuda is not the box's: its driver half does not count
    assumed = _facts(tmp_path, 0, 1, driver_source="assumed")
    doc = gate_json(assumed, "--model-path", str(model), "--attention-backend", "fa3", dry_run=True)
    assert not any(r.get("rule") == "flash-ops-loads" and r.get("result") == "fail" for r in _fa3(doc))
