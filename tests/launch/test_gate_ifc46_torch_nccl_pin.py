"""ifc46 (the forty-sixth fact-check sample, rows d1-d3): torch's own NCCL wheel older than the one torch pins.

torch 2.14.1+cu130 pins nvidia-nccl-cu13==2.30.7 (its METADATA) and its libtorch_cuda.so imports 51 NCCL functions
(nm -D --undefined-only), 16 of which nvidia-nccl-cu13 2.27.7's libnccl.so.2 does not define (ncclCommResume,
ncclCommRevoke, ncclAlltoAll, ...): with that wheel in nvidia/nccl/lib (torch's RPATH) `import torch` fails with
'undefined symbol' before anything runs (pytorch/pytorch#186591's symptom). The gate allowed such a box (h200-newest
with its NCCL wheel set to 2.27.7) at tp 2 with or without --enable-symm-mem: nothing compared torch's NCCL wheel
with torch's pin. Rules torch-nccl-wheel-pin-cu12 / -cu13 (check nccl) now fail a wheel of an earlier major.minor
than the pin (components.json, the variant's `nccl`: fact torch.nccl), are unknown below the pin within its
major.minor (not read), pass at or above it; the plan's torch step brings the wheel to the new torch's pin."""

from __future__ import annotations

import json
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, nccl_named_box, release_box

RULE13 = "torch-nccl-wheel-pin-cu13"
RULE12 = "torch-nccl-wheel-pin-cu12"


def _box(tmp_path: Path, torch: str | None, wheels: dict[str, str | None], release: str = "0.5.23") -> Path:
    """h200-newest at `release`, torch relabelled `torch` (VERSION+VARIANT; None: as it is), the NCCL wheels at
    `wheels` (None: not installed)."""
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    packages = doc["facts"]["packages"]
    if torch is not None:
        version, variant = torch.split("+")
        cuda = f"{variant[2:-1]}.{variant[-1]}"
        packages["torch"].update(version=torch, dist_version=version, variant=variant, cuda=cuda)
    for name, wheel in wheels.items():
        packages[name] = {"installed": True, "version": wheel, "dist_version": wheel} if wheel else {"installed": False}
    path.write_text(json.dumps(doc))
    return path


def _gate(tmp_path: Path, facts: Path, *flags: str) -> tuple[int, dict[str, str]]:
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), *flags]
    rc, out = cli_json(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *line])
    reasons = [x for r in out.get("reasons") or [] for x in r.get("reasons") or []]
    return rc, {str(x.get("rule")): str(x.get("result")) for x in reasons}


@pytest.mark.parametrize("flags", [("--tp", "2"), ("--tp", "2", "--enable-symm-mem")])
@pytest.mark.parametrize("release", ["0.5.17", "0.5.23"])
def test_the_drawn_rows_are_refused(tmp_path: Path, release: str, flags: tuple[str, ...]) -> None:
    # fails on the parent: rows d1-d3 (torch 2.14.1+cu130 beside nvidia-nccl-cu13 2.27.7, SGLANG_NCCL_SO_PATH naming
    # an NCCL 2.27.7 of CUDA 13.0 / 13.1, drivers 13.0 / 13.2) were allowed
    rc, results, reasons = nccl_named_box(tmp_path, release, "2.27.7", "2.27.7", "13.1", *flags, driver_cuda="13.2")
    assert rc == 1 and results.get(RULE13) == "fail", results
    text = " ".join(str(x.get("message")) for x in reasons if x.get("rule") == RULE13)
    assert "2.27.7" in text and "undefined symbol" in text and "ncclCommResume" in text, text


def test_every_launch_is_refused_even_on_one_gpu(tmp_path: Path) -> None:
    # `import torch` fails whatever the launch: the rule's scope is every launch, not the check's tp / pp > 1
    rc, results = _gate(tmp_path, _box(tmp_path, None, {"nvidia-nccl-cu13": "2.27.7"}), "--tp", "1")
    assert rc == 1 and results.get(RULE13) == "fail", results


@pytest.mark.parametrize(
    ("torch", "wheels", "rule", "result"),
    [
        (None, {"nvidia-nccl-cu13": "2.30.7"}, RULE13, None),  # the pin
        (None, {"nvidia-nccl-cu13": "2.32.6"}, RULE13, None),  # newer
        (None, {"nvidia-nccl-cu13": "2.28.9"}, RULE13, "fail"),  # an earlier major.minor
        (None, {"nvidia-nccl-cu13": "2.30.3"}, RULE13, "unknown"),  # below the pin, its major.minor: not read
        ("2.8.0+cu128", {"nvidia-nccl-cu13": None, "nvidia-nccl-cu12": "2.26.2"}, RULE12, "fail"),
        ("2.8.0+cu128", {"nvidia-nccl-cu13": None, "nvidia-nccl-cu12": "2.27.3"}, RULE12, None),
        # torch 2.14.1+cu132: its pin is inferred from 2.14.1+cu130's (igap46): 2.27.7 is of an earlier major.minor
        ("2.14.1+cu132", {"nvidia-nccl-cu13": "2.27.7"}, RULE13, "fail"),
        ("2.14.1+cu132", {"nvidia-nccl-cu13": "2.30.7"}, RULE13, None),
        # torch 2.11.0+cu128: the manifests state no pin for that build: unknown, never ok (igap46)
        ("2.11.0+cu128", {"nvidia-nccl-cu13": None, "nvidia-nccl-cu12": "2.27.5"}, RULE12, "unknown"),
    ],
)
def test_the_wheel_against_torchs_pin(
    tmp_path: Path, torch: str | None, wheels: dict[str, str | None], rule: str, result: str | None
) -> None:
    _, results = _gate(tmp_path, _box(tmp_path, torch, wheels), "--tp", "2")
    assert results.get(rule) == result, results


def test_the_torch_nccl_fact(tmp_path: Path) -> None:
    from stackcheck.assembly.pipeline import load_manifests
    from stackcheck.verdicts.context import Context

    doc = json.loads(_box(tmp_path, None, {}).read_text())
    ctx = Context(facts=doc["facts"], manifests=load_manifests([]))
    assert (ctx.lookup("torch.nccl", None), ctx.lookup("torch.nccl_minor", None)) == ("2.30.7", "2.30")


def test_the_plans_torch_step_brings_the_wheel_to_the_pin() -> None:
    from stackcheck.knowledge.loader import load
    from stackcheck.plan.hypothetical import torch_nccl_step

    release = next(r for r in load().releases("torch") if r["version"] == "2.14.1")

    class _Choice:
        variant, cuda = "cu130", "13.0"

    _Choice.release = release  # type: ignore[attr-defined]
    have: dict[str, Any] = {"nvidia-nccl-cu13": {"installed": True, "version": "2.27.7", "location": "/x"}}
    got = torch_nccl_step(_Choice, have)  # type: ignore[arg-type]
    assert got is not None and got.wheel == "nvidia-nccl-cu13" and got.entry is not None, got
    assert got.entry["version"] == "2.30.7" and got.entry["location"] == "/x"
    assert got.remove is None and not got.reinstall
    # igap52: one listed as not installed is installed at the pin (pip install torch brings it: its Requires-Dist)
    added = torch_nccl_step(_Choice, {"nvidia-nccl-cu13": {"installed": False}})  # type: ignore[arg-type]
    assert added is not None and added.entry is not None and added.entry["version"] == "2.30.7"
    assert torch_nccl_step(_Choice, {"nvidia-nccl-cu13": got.entry}) is None  # type: ignore[arg-type]


def _nm(lib: Path, *args: str) -> set[str]:
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm here")
    out = subprocess.run([nm, "-D", *args, str(lib)], capture_output=True, text=True, check=True, timeout=120).stdout
    return {line.split()[-1] for line in out.splitlines() if line.split() and line.split()[-1].startswith("nccl")}


@pytest.mark.registry
def test_the_real_wheels_torch_2141_imports_what_nccl_2277_lacks(tmp_path: Path) -> None:
    """torch 2.14.1's METADATA pins nvidia-nccl-cu13==2.30.7; its libtorch_cuda.so imports NCCL functions (U) that
    nvidia-nccl-cu13 2.27.7's libnccl.so.2 does not define and 2.32.6's does (read where the wheels are cached)."""
    from registry_wheels import cached

    torch, old, new = (
        cached("torch", "2.14.1"),
        cached("nvidia-nccl-cu13", "2.27.7"),
        cached("nvidia-nccl-cu13", "2.32.6"),
    )
    if torch is None or old is None or new is None:
        pytest.skip("torch 2.14.1 / nvidia-nccl-cu13 2.27.7 / 2.32.6 not cached")
    with zipfile.ZipFile(torch) as z:
        metadata = z.read("torch-2.14.1.dist-info/METADATA").decode()
        (tmp_path / "libtorch_cuda.so").write_bytes(z.read("torch/lib/libtorch_cuda.so"))
    assert 'nvidia-nccl-cu13==2.30.7; platform_system == "Linux"' in metadata
    imported = _nm(tmp_path / "libtorch_cuda.so", "--undefined-only")
    for name, wheel in (("old", old), ("new", new)):
        with zipfile.ZipFile(wheel) as z:
            (tmp_path / f"{name}.so").write_bytes(z.read("nvidia/nccl/lib/libnccl.so.2"))
    missing = imported - _nm(tmp_path / "old.so", "--defined-only")
    assert {"ncclCommResume", "ncclCommRevoke", "ncclAlltoAll"} <= missing and len(missing) == 16, sorted(missing)
    assert not imported - _nm(tmp_path / "new.so", "--defined-only")
