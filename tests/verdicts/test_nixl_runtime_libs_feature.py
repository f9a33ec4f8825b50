"""The audit-level feature nixl-runtime-libs (igap50): PD disaggregation with --disaggregation-transfer-backend nixl
judged on the box without a launch command. Its only rule reads fact transfer.nixl.package, which asks the gate's own
check transfer-package (preflight.json transfer_packages, the nixl entry: backends, system_libraries and
backend_runtime_library), so the feature and the gate say the same: blocked where nixl 0.7.1 loads nixl_cu12 beside a
torch of CUDA 13 and the loader finds no libcudart.so.12 (run on the lent H100, 2026-12-06,
bench/nixl_cu12_on_cuda13.py: the first add_remote_agent aborts), unknown where the gate is unknown, ok where it
passes."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge import loader
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.package_checks import check_transfer_package

ROOT = Path(__file__).resolve().parents[2]
BOX = ROOT / "tests" / "cases" / "h200-cu130-pip-mooncake" / "facts.json"
FEATURE = "nixl-runtime-libs"
CUDART12 = "libcudart.so.12"
SSL3 = {
    "libssl.so.3": "/usr/lib/x86_64-linux-gnu/libssl.so.3",
    "libcrypto.so.3": "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
}
GATE_TO_FEATURE = {"ok": "ok", "fail": "blocked", "unknown": "unknown"}


@pytest.fixture(scope="module")
def manifests() -> loader.Manifests:
    return loader.load()


def _box(cu12: str | None, cu13: bool | None, torch_cuda: str, cudart12: str | bool | None) -> Any:
    """The h200-cu130-pip-mooncake case's facts (SGLang 0.5.23) with nixl 0.7.1, nixl-cu12 `cu12` (None: not
    installed), nixl-cu13 installed or not (None: left out of the list), torch's CUDA `torch_cuda`, OpenSSL 3 found
    and the loader's libcudart.so.12 `cudart12` (a path: found; None: looked for, not found; False: not looked for)."""
    facts = json.loads(BOX.read_text(encoding="utf-8"))["facts"]
    packages = facts["packages"]
    # SGLang 0.5.14: 0.5.15+ also need nixl's Python API of 1.2.0 (ifc52's api_floor), which these releases predate
    packages["sglang"].update(version="0.5.14", dist_version="0.5.14")
    packages["nixl"] = {"installed": True, "version": "0.7.1"}
    packages["nixl-cu12"] = {"installed": True, "version": cu12} if cu12 else {"installed": False}
    packages.pop("nixl-cu13", None)
    if cu13 is not None:
        packages["nixl-cu13"] = {"installed": True, "version": "0.7.1"} if cu13 else {"installed": False}
    packages["torch"]["cuda"] = torch_cuda
    libs = facts["cuda_libs"]
    libs.update(SSL3)
    libs.pop(CUDART12, None)
    if cudart12 is not False:
        libs[CUDART12] = cudart12
    return facts


def _feature(facts: Any, manifests: loader.Manifests) -> dict[str, Any]:
    feature = next(f for f in manifests.features if f.get("id") == FEATURE)
    return dict(evaluate_feature(feature, Context(facts, manifests)))


def _gate(facts: Any, manifests: loader.Manifests) -> str | None:
    got = check_transfer_package("transfer_backend", "nixl", "--disaggregation-transfer-backend nixl", facts,
                                 manifests.preflight, facts["packages"]["sglang"]["version"])  # fmt: skip
    return None if got is None else got.status


def test_feature_and_gate_agree_on_generated_boxes(manifests: loader.Manifests) -> None:
    seen: set[str] = set()
    for cu12, cu13, torch_cuda, cudart in itertools.product(
        ["0.7.1", "1.5.1", "1.6.0", None],
        [True, False, None],
        ["12.8", "13.0"],
        ["/opt/cu12/libcudart.so.12", None, False],
    ):
        facts = _box(cu12, cu13, torch_cuda, cudart)
        gate = _gate(facts, manifests)
        assert gate is not None
        got = _feature(facts, manifests)
        assert got["status"] == GATE_TO_FEATURE[gate], (cu12, cu13, torch_cuda, cudart, gate, got)
        seen.add(got["status"])
    assert seen == {"ok", "blocked", "unknown"}


@pytest.mark.parametrize(
    ("cu12", "cu13", "torch_cuda", "cudart", "status"),
    [
        ("0.7.1", False, "13.0", None, "blocked"),  # the H100 reading: SIGABRT at the first add_remote_agent
        ("0.7.1", True, "13.0", None, "ok"),  # nixl 0.7.1 takes nixl_cu13 first
        ("0.7.1", False, "12.8", None, "ok"),  # torch of CUDA 12 has loaded libcudart.so.12 (inferred)
        ("0.7.1", False, "13.0", "/opt/cu12/libcudart.so.12", "ok"),  # the H100 reading with it on the path
        ("0.7.1", False, "13.0", False, "unknown"),  # not probed
        ("0.7.1", None, "13.0", None, "unknown"),  # whether nixl-cu13 is installed not given
    ],
)
def test_feature_status(
    manifests: loader.Manifests, cu12: str, cu13: bool | None, torch_cuda: str, cudart: str | bool | None, status: str
) -> None:
    got = _feature(_box(cu12, cu13, torch_cuda, cudart), manifests)
    assert got["status"] == status, got
    if status == "blocked":
        assert got["effect"] == "crash"


def test_not_installed_is_not_applicable(manifests: loader.Manifests) -> None:
    facts = _box("0.7.1", False, "13.0", None)
    facts["packages"]["nixl"] = {"installed": False}
    assert _feature(facts, manifests)["status"] == "not-applicable"


def test_audit_reports_the_feature_blocked(tmp_path: Path) -> None:
    """`stackcheck audit --facts` on the case's box with nixl 0.7.1 + nixl-cu12 0.7.1 and no libcudart.so.12."""
    doc = json.loads(BOX.read_text(encoding="utf-8"))
    doc["facts"] = _box("0.7.1", False, "13.0", None)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "stackcheck", "audit", "--facts", str(path), "--format", "json"],
                         capture_output=True, text=True, timeout=120, cwd=ROOT)  # fmt: skip
    report = json.loads(run.stdout)
    found = [f for f in report["features"] if f.get("id") == FEATURE]
    assert found and found[0]["status"] == "blocked", found
