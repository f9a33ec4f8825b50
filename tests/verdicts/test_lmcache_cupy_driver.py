"""igap41: LMCache's cupy against the driver (issue 16; check lmcache-requires, rule lmcache-cupy-cuda13-driver).

LMCache 0.4.5-0.5.6 require cupy-cuda13x. cupy links its CUDA runtime into cupy_backends/cuda/api/runtime (no
libcudart NEEDed) and loads its CUDA libraries on use, so `import cupy` of either major succeeds beside any torch;
what a cupy-cuda13x needs is a driver of CUDA 13, or its CUDA calls (LMCache's multiprocess server mapping SGLang's
KV caches) raise cudaErrorInsufficientDriver. Nothing judged it: a R570 box with a CUDA 12 torch and LMCache 0.5.6
passed. The wheel test re-reads the runtime module's DT_NEEDED in the real cupy wheels."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
CHECK = "lmcache-requires"
RULE = "lmcache-cupy-cuda13-driver"
RUNTIME = "cupy_backends/cuda/api/runtime.cpython-312-x86_64-linux-gnu.so"


def _verdict(driver_cuda: str | None, cupy: dict[str, Any] | None, lmcache: str | None = "0.5.6") -> dict[str, Any]:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": "0.5.9"},
        "torch": {"installed": True, "version": "2.8.0+cu128", "cuda": "12.8"},
        "lmcache": {"installed": True, "version": lmcache} if lmcache else {"installed": False},
        "transformers": {"installed": True, "version": "5.4.0"},
    }
    if cupy is not None:
        packages.update(cupy)
    facts: dict[str, Any] = {"packages": packages, "packages_complete": True}
    if driver_cuda is not None:
        facts["driver"] = {"version": "570.172.08" if driver_cuda < "13" else "580.95.05", "cuda": driver_cuda}
    check = next(c for c in MANIFESTS.checks if c["id"] == CHECK)
    return dict(evaluate_check(check, Context(facts=copy.deepcopy(facts), manifests=MANIFESTS)))  # type: ignore[arg-type]


def _rule(verdict: dict[str, Any]) -> dict[str, Any] | None:
    return next((r for r in verdict["reasons"] if r.get("rule") == RULE), None)


CUPY13 = {"cupy-cuda13x": {"installed": True, "version": "14.2.0"}}
CUPY12 = {"cupy-cuda12x": {"installed": True, "version": "13.6.0"}, "cupy-cuda13x": {"installed": False}}


def test_a_cuda13_cupy_on_a_driver_below_cuda13_warns() -> None:
    verdict = _verdict("12.8", CUPY13)
    failing = _rule(verdict)
    assert failing is not None and failing["result"] == "fail", verdict["reasons"]
    assert failing["effect"] == "degraded" and verdict["status"] == "warning", failing
    message = str(failing["message"])
    assert "12.8" in message and "cudaErrorInsufficientDriver" in message and "R580" in message, message
    assert "SGLang's own process imports no cupy" in message, message


@pytest.mark.parametrize(
    ("driver_cuda", "cupy", "lmcache"),
    [
        ("13.0", CUPY13, "0.5.6"),  # a driver of CUDA 13: cupy-cuda13x runs beside a CUDA 12 torch
        ("12.8", CUPY12, "0.4.4"),  # cupy-cuda12x: the driver of a CUDA 12 torch runs it
        ("12.8", CUPY13, None),  # no LMCache: not this check's
    ],
)
def test_a_driver_of_cupys_major_or_no_cuda13_cupy_passes(
    driver_cuda: str, cupy: dict[str, Any], lmcache: str | None
) -> None:
    rule = _rule(_verdict(driver_cuda, cupy, lmcache))
    assert rule is None or rule["result"] != "fail", rule


def test_a_report_that_does_not_list_cupy_or_the_driver_is_not_a_pass() -> None:
    assert _rule(_verdict("12.8", None)) is None  # an older packages list: cupy not named, the rule left out
    rule = _rule(_verdict(None, CUPY13))
    assert rule is not None and rule["result"] == "unknown", rule  # the driver not read: not told


def test_the_packages_probe_reads_both_cupy_distributions() -> None:
    from stackcheck.probes.packages import WANTED

    assert "cupy-cuda12x" in WANTED and "cupy-cuda13x" in WANTED


@pytest.mark.registry
@pytest.mark.parametrize(("dist", "version"), [("cupy-cuda12x", "13.6.0"), ("cupy-cuda13x", "14.2.0")])
def test_real_cupy_links_no_cuda_runtime(dist: str, version: str, tmp_path: Path) -> None:
    """The runtime module of the real cupy wheels (cp312) NEEDs no libcudart and no other CUDA library, so the
    import does not depend on torch's CUDA major; cuBLAS of cupy's own major is NEEDed by the module cupy loads on
    use."""
    from registry_wheels import extract, fetch_wheel

    from stackcheck.readers.libs import read_object

    blas = "cupy_backends/cuda/libs/cublas.cpython-312-x86_64-linux-gnu.so"
    root = extract(fetch_wheel(dist, version), tmp_path, lambda n: n in (RUNTIME, blas))
    needed = read_object(root / RUNTIME).needed
    assert not [n for n in needed if n.startswith(("libcudart", "libcuda.", "libcublas", "libnvrtc"))], needed
    assert needed, needed  # (read: it NEEDs libc)
    assert f"libcublas.so.{dist[-3:-1]}" in read_object(root / blas).needed
