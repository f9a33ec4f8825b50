"""The audit-level feature mooncake-runtime-libs (tests/realworld/IDS.md): PD disaggregation with the Mooncake
transfer backend judged on the box without a launch command. Its only rule reads fact transfer.mooncake.package,
which asks the gate's own check transfer-package (preflight.json transfer_packages, the mooncake entry's
runtime_library), so on every generated box the feature and the gate say the same: blocked where the gate fails,
unknown where it is unknown, ok where it passes."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge import loader
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature
from stackcheck.verdicts.package_checks import check_transfer_package

ROOT = Path(__file__).resolve().parents[2]
BOX = ROOT / "tests" / "cases" / "h200-cu130-pip-mooncake" / "facts.json"
FEATURE = "mooncake-runtime-libs"
DIST = "mooncake-transfer-engine"
CUDART12 = "libcudart.so.12"
GATE_TO_FEATURE = {"ok": "ok", "fail": "blocked", "unknown": "unknown"}


@pytest.fixture(scope="module")
def manifests() -> loader.Manifests:
    return loader.load()


def _box(version: str | None, torch_cuda: str | None, cudart12: str | bool | None, sglang: str = "0.5.23") -> Any:
    """The h200-cu130-pip-mooncake case's facts with Mooncake `version` (None: installed, version not given),
    torch's CUDA build `torch_cuda` (None: left out), the loader's libcudart.so.12 `cudart12` (a path: found; None:
    looked for, not found; False: not looked for) and SGLang `sglang`."""
    facts = json.loads(BOX.read_text(encoding="utf-8"))["facts"]
    packages = facts["packages"]
    packages[DIST] = {"installed": True, "version": version} if version else {"installed": True}
    packages["sglang"]["version"] = sglang
    if torch_cuda is None:
        packages["torch"].pop("cuda", None)
    else:
        packages["torch"]["cuda"] = torch_cuda
    libs = facts["cuda_libs"]
    libs.pop(CUDART12, None)
    if cudart12 is not False:
        libs[CUDART12] = cudart12
    return facts


def _feature(facts: Any, manifests: loader.Manifests) -> dict[str, Any]:
    feature = next(f for f in manifests.features if f.get("id") == FEATURE)
    return dict(evaluate_feature(feature, Context(facts, manifests)))


def _gate(facts: Any, manifests: loader.Manifests) -> str | None:
    """The gate's judgement as stackcheck/launch/gate_preflight.py asks it for `--disaggregation-mode prefill`."""
    packages = facts["packages"]
    got = check_transfer_package("transfer_backend", "mooncake", "--disaggregation-mode prefill", facts,
                                 manifests.preflight, packages["sglang"]["version"])  # fmt: skip
    return None if got is None else got.status


VERSIONS = [None, "0.3.5", "0.3.6.post1", "0.3.7", "0.3.8", "0.3.13.post1", "0.3.14", "0.3.4"]
TORCH = [None, "12.8", "13.0", "11.8"]
CUDART = ["/usr/local/cuda/lib64/libcudart.so.12", None, False]


def test_feature_and_gate_agree_on_generated_boxes(manifests: loader.Manifests) -> None:
    seen: set[str] = set()
    for version, torch_cuda, cudart in itertools.product(VERSIONS, TORCH, CUDART):
        facts = _box(version, torch_cuda, cudart)
        gate = _gate(facts, manifests)
        assert gate is not None
        got = _feature(facts, manifests)
        assert got["status"] == GATE_TO_FEATURE[gate], (version, torch_cuda, cudart, gate, got)
        seen.add(got["status"])
    assert seen == {"ok", "blocked", "unknown"}


@pytest.mark.parametrize(
    ("version", "torch_cuda", "cudart", "status"),
    [
        ("0.3.8", "13.0", None, "blocked"),  # mooncake-1298: CUDA 13 torch, no libcudart.so.12 for the loader
        ("0.3.13.post1", "13.0", None, "blocked"),
        ("0.3.7", "13.0", None, "blocked"),
        ("0.3.6.post1", "13.0", None, "ok"),  # links no libcudart
        ("0.3.5", "13.0", None, "ok"),
        ("0.3.8", "13.0", "/usr/local/cuda-12.9/lib64/libcudart.so.12", "ok"),  # the loader finds it
        ("0.3.8", "12.8", None, "ok"),  # torch of CUDA 12 has loaded one
        ("0.3.8", None, None, "unknown"),  # torch's CUDA build not given
        (None, "13.0", None, "unknown"),  # Mooncake's release not given
        ("0.3.14", "13.0", None, "unknown"),  # a release not read
        ("0.3.8", "13.0", False, "unknown"),  # the loader's libcudart.so.12 not probed
    ],
)
def test_feature_status(
    manifests: loader.Manifests, version: str | None, torch_cuda: str | None, cudart: str | None, status: str
) -> None:
    got = _feature(_box(version, torch_cuda, cudart), manifests)
    assert got["status"] == status, got
    if status == "blocked":
        assert got["effect"] == "crash"


def test_sglang_outside_the_entry_is_unknown_not_ok(manifests: loader.Manifests) -> None:
    """A release the mooncake entry does not cover: the gate judges nothing, and the feature does not pass."""
    facts = _box("0.3.8", "13.0", None, sglang="0.4.9")
    assert _gate(facts, manifests) is None
    assert _feature(facts, manifests)["status"] == "unknown"


def test_not_installed_is_not_applicable(manifests: loader.Manifests) -> None:
    facts = _box("0.3.8", "13.0", None)
    facts["packages"][DIST] = {"installed": False}
    assert _feature(facts, manifests)["status"] == "not-applicable"


@pytest.mark.parametrize(
    ("libs", "want"),
    [
        ({"libibverbs.so.1": None}, "blocked"),  # 0.3.8 needs it; the loader finds none
        ({"libmlx5.so.1": None}, "ok"),  # 0.3.8 is read and links no libmlx5 (0.3.12+ do)
        ({"libcurl.so.4": False}, "unknown"),  # not looked for
    ],
)
def test_the_feature_follows_the_system_libraries_too(
    manifests: loader.Manifests, libs: dict[str, str | bool | None], want: str
) -> None:
    """ifc44's system_libraries (libibverbs / libnuma / libcurl, libmlx5 from 0.3.12) live in the same preflight.json
    entry, so the feature reads them as the gate does: a CUDA 12 torch (libcudart.so.12 not judged) beside Mooncake
    0.3.8 whose libibverbs.so.1 the loader does not find is blocked; one not looked for is unknown; a missing
    libmlx5.so.1 does not matter to 0.3.8."""
    facts = _box("0.3.8", "12.8", "/usr/local/cuda/lib64/libcudart.so.12")
    for name, value in libs.items():
        if value is False:
            facts["cuda_libs"].pop(name, None)
        else:
            facts["cuda_libs"][name] = value
    got = _feature(facts, manifests)
    gate = _gate(facts, manifests)
    assert got["status"] == want, got
    assert gate is not None and GATE_TO_FEATURE[gate] == got["status"]


@pytest.mark.parametrize(
    ("torch_cuda", "cudart", "libs", "named"),
    [
        ("12.8", "/usr/local/cuda/lib64/libcudart.so.12", {"libibverbs.so.1": None}, "libibverbs.so.1"),
        ("13.0", None, {}, "libcudart.so.12"),
    ],
)
def test_a_blocked_verdict_names_the_library_the_loader_does_not_find(
    manifests: loader.Manifests, torch_cuda: str, cudart: str | None, libs: dict[str, None], named: str
) -> None:
    """The rule's observed value is what the gate's check observed, so a box blocked for a missing libibverbs.so.1
    does not read as a libcudart.so.12 finding (the rule's message was libcudart's alone before ifc44's system
    libraries joined the entry)."""
    facts = _box("0.3.8", torch_cuda, cudart)
    facts["cuda_libs"].update(libs)
    got = _feature(facts, manifests)
    assert got["status"] == "blocked", got
    observed = " ".join(str(r.get("observed")) for r in got["reasons"])
    assert named in observed, got["reasons"]


def test_the_features_message_names_the_system_libraries_too(manifests: loader.Manifests) -> None:
    """irev65: blocked for a missing libibverbs.so.1 beside a CUDA 12 torch, the rule's message said only that torch
    is of another CUDA major and no libcudart.so.12 is found (advice that leaves the crash): it names both causes,
    and its sources read both."""
    facts = _box("0.3.8", "12.8", "/usr/local/cuda/lib64/libcudart.so.12")
    facts["cuda_libs"]["libibverbs.so.1"] = None
    (reason,) = _feature(facts, manifests)["reasons"]
    assert reason["result"] == "fail" and "libibverbs.so.1" in reason["message"], reason["message"]
    assert any("libibverbs.so.1" in s["title"] for s in reason["source"]), reason["source"]


def _narrowed_box(candidates: list[str], torch_cuda: str = "13.0", version: str | None = None) -> Any:
    """_box with no Mooncake version (or `version`) and the report's `candidates` for it (facts schema:
    packages.NAME.candidates, the releases a hand-written report narrows the package to)."""
    facts = _box(version, torch_cuda, None)
    facts["packages"][DIST]["candidates"] = candidates
    return facts


#: the PyPI releases from 0.3.8 on (the newest on the index 2026-12-06 is 0.3.13.post1): what vLLM 0.20.2's
#: requirements/kv_connectors.txt (mooncake-transfer-engine >= 0.3.8) can install (vllm-42511)
FROM_038 = ["0.3.8", "0.3.8.post1", "0.3.9", "0.3.10", "0.3.10.post1", "0.3.10.post2", "0.3.11", "0.3.11.post1",
            "0.3.12", "0.3.12.post1", "0.3.13", "0.3.13.post1"]  # fmt: skip


@pytest.mark.parametrize(
    ("candidates", "version", "status"),
    [
        (FROM_038, None, "blocked"),  # every candidate links libcudart.so.12 (vllm-42511)
        (["0.3.7", "0.3.13.post1"], None, "blocked"),
        (["0.3.6.post1", "0.3.8"], None, "unknown"),  # one links no libcudart: the candidates split
        (["0.3.8", "0.3.14"], None, "unknown"),  # 0.3.14 was not read
        (["0.3.7rc1", "0.3.8"], None, "unknown"),  # 0.3.7rc1's code may be 0.3.6.post1's (as a version given)
        (["0.3.12rc1", "0.3.8"], None, "blocked"),  # the range holds 0.3.12rc1 either way (as a version given)
        (["0.3.5", "0.3.6.post1"], None, "ok"),  # both read, neither links libcudart (the box's system libs found)
        (["0.3.8"], "0.3.6.post1", "ok"),  # a version the facts give decides, not the candidates
        (["0.3.8", "not a version"], None, "unknown"),  # an unreadable list is no narrowing: the release not given
    ],
)
def test_a_release_narrowed_to_candidates_is_judged_over_every_candidate(
    manifests: loader.Manifests, candidates: list[str], version: str | None, status: str
) -> None:
    """icorpAD (vllm-42511): a hand-written report with no Mooncake version but candidates, each of which NEEDs
    libcudart.so.12, beside a CUDA 13 torch and a loader that finds none, was unknown ('the release is not given')
    though every release it can be fails; the gate's function now reads the candidates as the engine's sweeps do
    (fail where each fails, unknown where they split or one was not read). Feature and gate agree."""
    facts = _narrowed_box(candidates, version=version)
    got = _feature(facts, manifests)
    gate = _gate(facts, manifests)
    assert got["status"] == status, got
    assert gate is not None and GATE_TO_FEATURE[gate] == status
    if status == "blocked":
        observed = " ".join(str(r.get("observed")) for r in got["reasons"])
        assert f"one of {', '.join(candidates)}" in observed and "candidates" in observed, observed


def test_split_candidates_say_so(manifests: loader.Manifests) -> None:
    """The unknown reason for candidates the releases split names them, not 'the release is not given'."""
    facts = _narrowed_box(["0.3.6.post1", "0.3.8"])
    packages = facts["packages"]
    got = check_transfer_package("transfer_backend", "mooncake", "--disaggregation-mode prefill", facts,
                                 manifests.preflight, packages["sglang"]["version"])  # fmt: skip
    assert got is not None and got.status == "unknown"
    assert "one of 0.3.6.post1, 0.3.8" in got.message and "not given" not in got.message, got.message
