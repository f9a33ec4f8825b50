"""triage for round twenty-five's torch cause (issue 16): a GPU below the lowest target of the installed torch build
(a V100, compute capability 7.0, under torch 2.7.0+cu128, whose targets start at sm_75: vllm-project/vllm#19185).
torch prints only its 'too old' warning for such a GPU, not 'is not compatible with the current PyTorch
installation', so the signature for that other warning does not see it."""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


def _text(rc: object) -> str:
    sig = rc.signature  # type: ignore[attr-defined]
    return " ".join((sig.title, sig.explanation, sig.fix))


# written for this test in the shape of torch's _check_capability warning under a serving engine
TOO_OLD = (
    "INFO 06-05 09:14:21 [__init__.py:244] Automatically detected platform cuda.\n"
    "/srv/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:262: UserWarning: \n"
    "    Found GPU0 Tesla V100-SXM2-32GB which is of cuda capability 7.0.\n"
    "    PyTorch no longer supports this GPU because it is too old.\n"
    "    The minimum cuda capability supported by this library is 7.5.\n"
    "    \n"
    "  warnings.warn(\n"
)


def test_torch_too_old_warning_alone_names_torch_and_the_gpu_age() -> None:
    rc = _triage(TOO_OLD).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "torch-gpu-too-old"
    assert rc.line == 4
    text = _text(rc)
    assert "PyTorch" in text and "too old" in text and "no kernel image" in text
    assert any("torch/cuda/__init__.py" in s["title"] for s in rc.signature.source)


def test_too_old_warning_explains_the_no_kernel_image_that_follows() -> None:
    log = TOO_OLD + "RuntimeError: CUDA error: no kernel image is available for execution on the device\n"
    rc = _triage(log).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "torch-gpu-too-old"


def test_the_newer_gpu_warning_keeps_its_own_signature() -> None:
    log = (
        "/srv/venv/lib/python3.12/site-packages/torch/cuda/__init__.py:287: UserWarning: \n"
        "NVIDIA GeForce RTX 5090 with CUDA capability sm_120 is not compatible with the current PyTorch installation.\n"
        "The current PyTorch install supports CUDA capabilities sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.\n"
    )
    rc = _triage(log).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "torch-arch-not-compatible"
