"""The eighth fact-check sample (tests/realworld/FACTCHECK.md): rows a2 and a3 (sgl-kernel 0.1.6 and 0.1.7's CUDA
libraries) were right about the CUDA sonames, but their common_ops also needs libnuma.so.1, which no pip wheel
brings and nothing looked for: on a slim image without it `import sgl_kernel` fails while the audit and the gate
passed the box. Read 2026-12-02 in the PyPI wheels (DT_NEEDED): sgl-kernel 0.1.6 to sglang-kernel 0.4.3 link it
(0.1.5 and earlier, 0.4.4 and later do not). The cuda_libs probe now looks for it and kernel-runtime-libs' rule
`libnuma` reads it."""

from __future__ import annotations

import copy
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, gate_json, model_dir
from registry_wheels import fetch_wheel, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import Manifests
from stackcheck.probes.cudalibs import box_machine, probe_cuda_libs
from stackcheck.readers.elf import ElfFile
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check
from stackcheck.verdicts.types import CheckVerdict

RULE = "libnuma"
ROOT = Path(__file__).resolve().parent.parent.parent


def cuda_libs(numa: str | bool | None) -> dict[str, Any]:
    """A cuda_libs section with every CUDA 12 library found; libnuma.so.1 at `numa` (None: not found, False:
    not looked for, as a probe before this change wrote it)."""
    libs: dict[str, Any] = {
        f"lib{n}.so.{m}": (f"/usr/local/cuda/lib64/lib{n}.so.{m}" if m == 12 else None)
        for n in ("cudart", "nvrtc", "cublas", "cublasLt")
        for m in (11, 12, 13)
    }
    if numa is not False:
        libs["libnuma.so.1"] = numa
    libs["ld_cache"] = "file"
    return libs


def box(kernel: str, version: str, numa: str | bool | None) -> dict[str, Any]:
    return {
        "driver": {"version": "570.172.08", "cuda": "12.8"},
        "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}],
        "packages": {
            "torch": {"installed": True, "version": "2.9.1+cu128", "variant": "cu128", "cuda": "12.8"},
            kernel: {"installed": True, "version": version},
        },
        "system": {"machine": "x86_64", "env": {}},
        "cuda_libs": cuda_libs(numa),
    }


def runtime_libs(manifests: Manifests, facts: dict[str, Any]) -> CheckVerdict:
    spec = next(c for c in manifests.checks if c["id"] == "kernel-runtime-libs")
    return evaluate_check(spec, Context(facts=copy.deepcopy(facts), manifests=manifests))  # type: ignore[arg-type]


def results(v: CheckVerdict) -> dict[str, str]:
    return {str(r.get("rule")): str(r.get("result")) for r in v["reasons"]}


@pytest.mark.parametrize(
    ("kernel", "version"),
    [("sgl-kernel", "0.1.6"), ("sgl-kernel", "0.3.4"), ("sgl-kernel", "0.3.21"), ("sglang-kernel", "0.4.3")],
)
def test_a_kernel_that_links_libnuma_fails_where_the_loader_finds_none(
    manifests: Manifests, kernel: str, version: str
) -> None:
    v = runtime_libs(manifests, box(kernel, version, None))
    assert v["status"] == "failed", v
    assert results(v)[RULE] == "fail"
    reason = next(r for r in v["reasons"] if r.get("rule") == RULE)
    assert reason["effect"] == "crash" and "libnuma.so.1" in str(reason["message"])


def test_a_kernel_that_links_libnuma_passes_where_the_loader_finds_it(manifests: Manifests) -> None:
    v = runtime_libs(manifests, box("sgl-kernel", "0.3.21", "/usr/lib/x86_64-linux-gnu/libnuma.so.1"))
    assert results(v)[RULE] == "pass" and v["status"] != "failed", v


def test_a_library_the_probe_could_not_read_is_unknown_not_absent(manifests: Manifests) -> None:
    """cuda_libs.unreadable (an ld.so cache entry this process may not read): neither found nor missing."""
    facts = box("sgl-kernel", "0.3.21", None)
    facts["cuda_libs"]["unreadable"] = {"libnuma.so.1": "/opt/numa/libnuma.so.1: Permission denied"}
    v = runtime_libs(manifests, facts)
    assert results(v)[RULE] == "unknown" and v["status"] == "unknown", v


@pytest.mark.parametrize(("kernel", "version"), [("sgl-kernel", "0.1.5"), ("sglang-kernel", "0.4.4")])
def test_a_kernel_that_does_not_link_it_needs_no_libnuma(manifests: Manifests, kernel: str, version: str) -> None:
    v = runtime_libs(manifests, box(kernel, version, None))
    assert RULE not in results(v) and v["status"] != "failed", v


@pytest.mark.parametrize("probed", [True, False], ids=["libnuma not looked for", "cuda_libs not probed"])
def test_facts_that_never_looked_for_libnuma_are_unknown_not_skipped(manifests: Manifests, probed: bool) -> None:
    """A facts file from before the probe looked for libnuma.so.1, or written by hand without cuda_libs: the
    release links it, so the rule is unknown (it was skipped by a `cudalib.numa.1 exists` guard, and the check
    with it: a fail-open)."""
    facts = box("sgl-kernel", "0.3.21", False)
    if not probed:
        del facts["cuda_libs"]
    v = runtime_libs(manifests, facts)
    assert results(v)[RULE] == "unknown" and v["status"] == "unknown", v


def test_the_probe_looks_for_libnuma_where_the_loader_does(tmp_path: Path) -> None:
    libs = probe_cuda_libs({}, HostView(str(tmp_path)))
    assert "libnuma.so.1" in libs and libs["libnuma.so.1"] is None
    lib = tmp_path / "usr/lib/x86_64-linux-gnu/libnuma.so.1"
    lib.parent.mkdir(parents=True)
    # a 64-bit ELF header of the box's machine (the probe passes over a 32-bit copy or a truncated file, as the
    # loader does)
    head = bytearray(b"\x7fELF\x02\x01\x01" + bytes(57))
    head[18:20] = box_machine(HostView(str(tmp_path))).to_bytes(2, "little")
    lib.write_bytes(bytes(head))
    found = probe_cuda_libs({}, HostView(str(tmp_path)))
    assert found["libnuma.so.1"] == "/usr/lib/x86_64-linux-gnu/libnuma.so.1"


def h200_with_sglang_059(numa: str | None) -> dict[str, Any]:
    """The h200-newest case's box with SGLang 0.5.9 and its pins (sgl-kernel 0.3.21, torch 2.9.1+cu128), which
    the gate allows, and its loader's libraries read."""
    doc = json.loads((ROOT / "tests/cases/h200-newest/facts.json").read_text())
    facts = doc.get("facts", doc)
    pkgs = facts["packages"]
    for name in ("sgl-kernel", "sglang-kernel", "triton", "nvidia-nccl-cu13"):
        pkgs[name] = {"installed": False}
    pins = {"sglang": "0.5.9", "sgl-kernel": "0.3.21", "flashinfer-python": "0.6.3", "flashinfer-cubin": "0.6.3"}
    pins |= {"triton": "3.5.1", "cuda-python": "12.9", "nvidia-cutlass-dsl": "4.3.4"}
    pins |= {"nvidia-nccl-cu12": "2.27.5"}  # (torch 2.9.1+cu128's own NCCL wheel: igap47 judges a box without one)
    for name, version in pins.items():
        pkgs[name] = {"installed": True, "version": version, "dist_version": version}
    pkgs["torch"].update(version="2.9.1+cu128", variant="cu128", cuda="12.8")
    facts["cuda_libs"] = cuda_libs(numa)
    return {"schema_version": 1, "facts": facts}


def test_the_gate_refuses_a_launch_on_a_box_without_libnuma(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "llama", LLAMA3)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(h200_with_sglang_059("/usr/lib/x86_64-linux-gnu/libnuma.so.1")))
    assert gate_json(path, "--model-path", str(model), "--tp", "8", dry_run=True)["decision"] == "allow"
    path.write_text(json.dumps(h200_with_sglang_059(None)))
    out = gate_json(path, "--model-path", str(model), "--tp", "8", dry_run=True)
    assert out["decision"] == "refuse"
    assert "libnuma.so.1" in json.dumps(out["reasons"])


def _numa_range() -> str:
    checks = json.loads((ROOT / "manifests" / "checks.json").read_text(encoding="utf-8"))["checks"]
    rule = next(r for c in checks if c["id"] == "kernel-runtime-libs" for r in c["rules"] if r["id"] == RULE)
    return str(rule["when"]["all"][0]["value"])


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.4.0", "0.4.3", "0.4.4", "0.4.10"] if run_all() else ["0.4.10"])
def test_sglang_kernel_links_libnuma_exactly_inside_the_rules_range(version: str) -> None:
    """sglang-kernel's PyPI wheels (x86_64): sm90/ and sm100/common_ops.abi3.so need libnuma.so.1 up to 0.4.3."""
    wheel = fetch_wheel("sglang-kernel", version)
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory(prefix="sglang-kernel-") as tmp:
        names = [n for n in zf.namelist() if n.startswith("sgl_kernel/") and n.endswith("/common_ops.abi3.so")]
        assert names, wheel.name
        for name in names:
            target = Path(tmp) / name.replace("/", "_")
            target.write_bytes(zf.read(name))
            with ElfFile(str(target)) as elf:
                needed = elf.dynamic().needed
            assert ("libnuma.so.1" in needed) == bool(version_in(version, _numa_range())), (version, name)
