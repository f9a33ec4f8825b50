"""Check flashinfer-torch-pair (round four of the real-world corpus, ROUND4-icorpG.md): a FlashInfer AOT wheel from
FlashInfer's cuXXX/torchX.Y index (local tag +cuXXXtorchX.Y) is compiled against PyPI's torch X.Y; another torch
release, or an NVIDIA container's own torch build, does not load its prebuilt kernels. Boxes are written by hand;
no test needs a GPU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import torch_build_of
from stackcheck.launch.triage import load_signatures
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])


def _judge(facts: dict[str, Any]) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == "flashinfer-torch-pair")
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


def _box(flashinfer: dict[str, Any], torch: dict[str, Any] | None) -> dict[str, Any]:
    packages: dict[str, Any] = {"flashinfer-python": {"installed": True, **flashinfer}}
    if torch is not None:
        packages["torch"] = {"installed": True, **torch}
    return {"packages": packages}


def test_the_torch_release_a_tag_names() -> None:
    assert torch_build_of("cu124torch2.5") == "2.5"
    assert torch_build_of("cu121torch2.4") == "2.4"
    assert torch_build_of("cu130") is None  # a CUDA variant only (sglang-kernel's index builds)
    assert torch_build_of("torch2.5") is None
    assert torch_build_of(None) is None


def test_an_aot_wheel_under_an_ngc_torch_fails() -> None:
    # flashinfer#911: the cu124/torch2.5 wheel in the NGC 24.08 container (its torch is 2.5 too, but another build)
    verdict = _judge(_box({"version": "0.2.2.post1+cu124torch2.5"}, {"version": "2.5.0a0+872d972e41.nv24.08"}))
    assert verdict["status"] == "failed"
    failing = [r for r in verdict["reasons"] if r["result"] == "fail"]
    assert any(r["rule"] == "not-ngc-torch" and "NGC" in r["message"] for r in failing), failing


def test_an_aot_wheel_for_another_torch_release_fails() -> None:
    verdict = _judge(_box({"version": "0.2.3+cu124torch2.6"}, {"version": "2.5.1+cu124"}))
    assert verdict["status"] == "failed"
    assert {r["rule"]: r["result"] for r in verdict["reasons"]}["torch-release"] == "fail"


@pytest.mark.parametrize("torch", ["2.5.1", "2.5.1+cu124", "2.5.0"])
def test_an_aot_wheel_for_the_installed_release_passes(torch: str) -> None:
    verdict = _judge(_box({"version": "0.2.2.post1+cu124torch2.5"}, {"version": torch}))
    assert verdict["status"] == "ok", verdict


def test_a_hand_written_variant_is_read_like_the_tag() -> None:
    verdict = _judge(_box({"variant": "cu124torch2.5"}, {"version": "2.6.0+cu124"}))
    assert verdict["status"] == "failed"


def test_a_build_without_a_torch_tag_is_not_judged() -> None:
    # PyPI's flashinfer-python JIT-compiles against the installed torch: nothing to pair
    verdict = _judge(_box({"version": "0.6.7"}, {"version": "2.9.1+cu130"}))
    assert all(r["result"] != "fail" for r in verdict["reasons"]), verdict
    assert verdict["status"] != "failed"


def test_an_unknown_torch_is_never_ok() -> None:
    verdict = _judge(
        {
            "packages": {"flashinfer-python": {"installed": True, "version": "0.2.2.post1+cu124torch2.5"}},
            "packages_complete": False,
        }
    )
    assert verdict["status"] not in ("ok", "failed"), verdict
    verdict = _judge(_box({"version": "0.2.2.post1+cu124torch2.5"}, {}))  # torch installed, version not known
    assert verdict["status"] not in ("ok", "failed"), verdict


def test_the_triage_signature_names_the_check_before_the_sgl_kernel_one() -> None:
    site = "ImportError: /srv/env/lib/python3.10/site-packages"
    line = f"{site}/flashinfer/flashinfer_kernels.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    first = next(s for s in load_signatures() if s.pattern.search(line))
    assert first.id == "flashinfer-aot-torch-mismatch" and first.check == "flashinfer-torch-pair"
    sgl = f"{site}/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    assert next(s for s in load_signatures() if s.pattern.search(sgl)).id == "kernel-torch-abi-mismatch"
