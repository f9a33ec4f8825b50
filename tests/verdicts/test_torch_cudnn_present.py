"""Check torch-cudnn-present (round six of the real-world corpus, ROUND6-icorpJ.md): PyTorch's CUDA wheels link
libcudnn.so.9 from libtorch_cuda.so and find it through their RPATH in the nvidia-cudnn-cu12 / -cu13 wheel their
metadata requires (read in the 2.8.0+cu128 and 2.11.0+cu130 wheels); without either wheel and without a copy on the
loader's path, `import torch` fails (sleap-nn#632). Boxes are written by hand; no test needs a GPU."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import pytorch_build_tag
from stackcheck.launch.triage import load_signatures
from stackcheck.probes.cudalibs import SONAMES
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

MANIFESTS = load_manifests([])


def _judge(facts: dict[str, Any]) -> dict[str, Any]:
    check = next(c for c in MANIFESTS.checks if c["id"] == "torch-cudnn-present")
    return dict(evaluate_check(check, Context(facts=cast("Facts", facts), manifests=MANIFESTS)))


def _box(
    torch: str = "2.9.1+cu130",
    cuda: str | None = "13.0",
    cu12: bool | None = False,
    cu13: bool | None = False,
    loader: str | bool | None = None,
    machine: str | None = "x86_64",
) -> dict[str, Any]:
    """A box with PyTorch's wheel `torch`; cu12 / cu13: whether each cuDNN wheel is installed (None: not named);
    loader: where the loader finds libcudnn.so.9 (None: nowhere; False: not looked for)."""
    packages: dict[str, Any] = {"torch": {"installed": True, "version": torch, "cuda": cuda}}
    for name, state in (("nvidia-cudnn-cu12", cu12), ("nvidia-cudnn-cu13", cu13)):
        if state is not None:
            packages[name] = {"installed": True, "version": "9.19.0.56"} if state else {"installed": False}
    facts: dict[str, Any] = {"packages": packages, "gpus": [{"index": 0, "compute_capability": "9.0"}]}
    if machine is not None:
        facts["system"] = {"machine": machine}
    if loader is not False:
        facts["cuda_libs"] = {"libcudnn.so.9": loader}
    return facts


def test_the_build_a_local_tag_names() -> None:
    assert pytorch_build_tag("2.11.0+cu130") == "cu130"  # PyPI's build too: torch/version.py carries the tag
    assert pytorch_build_tag("2.9.1+cpu") == "cpu"
    assert pytorch_build_tag("2.9.1") == ""  # a conda or distribution build
    assert pytorch_build_tag("2.7.0a0+ecf3bae40a.nv25.02") == ""  # an NVIDIA container's
    assert pytorch_build_tag("0.2.2+cu124torch2.5") == ""  # FlashInfer's AOT tag is not PyTorch's
    assert pytorch_build_tag(None) is None
    assert pytorch_build_tag("not a version") is None


def test_the_cudalibs_probe_looks_for_cudnn() -> None:
    assert "libcudnn.so.9" in SONAMES


def test_a_cu130_torch_without_any_cudnn_fails() -> None:
    # sleap-nn#632: uv installed torch 2.9.1+cu130 without nvidia-cudnn-cu13
    verdict = _judge(_box())
    assert verdict["status"] == "failed", verdict
    failing = [r for r in verdict["reasons"] if r["result"] == "fail"]
    assert [r["rule"] for r in failing] == ["cudnn-cu13"]
    assert "nvidia-cudnn-cu13" in failing[0]["message"] and "libcudnn.so.9" in failing[0]["message"]


def test_a_cu128_torch_without_any_cudnn_names_the_cu12_wheel() -> None:
    verdict = _judge(_box(torch="2.8.0+cu128", cuda="12.8"))
    failing = [r for r in verdict["reasons"] if r["result"] == "fail"]
    assert [r["rule"] for r in failing] == ["cudnn-cu12"], verdict
    assert "pip install nvidia-cudnn-cu12" in failing[0]["message"]


@pytest.mark.parametrize(
    "box",
    [
        _box(cu13=True),  # the wheel torch requires
        _box(cu12=True),  # the other major's wheel installs nvidia/cudnn/lib/libcudnn.so.9 too
        _box(loader="/usr/lib/x86_64-linux-gnu/libcudnn.so.9"),  # a system cuDNN the loader finds
    ],
    ids=["cu13-wheel", "cu12-wheel", "system-cudnn"],
)
def test_a_cudnn_torch_can_load_passes(box: dict[str, Any]) -> None:
    assert _judge(box)["status"] == "ok"


@pytest.mark.parametrize(
    "box",
    [
        _box(torch="2.9.1"),  # no PyTorch tag: a conda or distribution build finds cuDNN through its own paths
        _box(torch="2.7.0a0+ecf3bae40a.nv25.02"),  # an NVIDIA container's build links the container's cuDNN
        _box(machine="aarch64"),  # the aarch64 wheels before 2.11 do not require the cuDNN wheel
        _box(torch="2.9.1+cpu", cuda=None),  # no CUDA, no cuDNN
        _box(torch="2.7.1+cu128", cuda="12.8"),  # before the releases read
        _box(cu12=None, cu13=None),  # a list from a probe that did not look for the cuDNN wheels
    ],
    ids=["no-tag", "ngc", "aarch64", "cpu", "torch-2.7", "cudnn-not-listed"],
)
def test_what_the_rule_does_not_judge_never_fails(box: dict[str, Any]) -> None:
    box["packages_complete"] = True
    verdict = _judge(box)
    assert all(r["result"] != "fail" for r in verdict["reasons"]), verdict
    assert verdict["status"] != "failed"


def test_an_unread_loader_is_never_ok() -> None:
    # neither wheel, and the loader's libcudnn.so.9 not looked for: the import may or may not succeed
    verdict = _judge(_box(loader=False))
    assert verdict["status"] not in ("ok", "failed"), verdict
    # the machine not known: the rule may apply
    verdict = _judge(_box(machine=None))
    assert verdict["status"] not in ("ok", "failed"), verdict


def test_the_triage_signature_names_the_check() -> None:
    line = "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory"
    first = next(s for s in load_signatures() if s.pattern.search(line))
    assert first.id == "torch-libcudnn-missing" and first.check == "torch-cudnn-present"
    cudart = "OSError: libcudart.so.12: cannot open shared object file: No such file or directory"
    assert next(s for s in load_signatures() if s.pattern.search(cudart)).id == "cuda-runtime-lib-missing"
