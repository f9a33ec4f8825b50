"""triage for two JIT toolchain causes met in round seven (tests/realworld/ROUND7-icorpK.md): DeepGEMM's own
search for a CUDA toolkit failing (a bare AssertionError in deep_gemm's find_cuda_home) and FlashInfer's JIT
finding no ninja on PATH; and the signature field they use, where_function (the frame's function)."""

from __future__ import annotations

import io

import pytest

from stackcheck.launch.triage import load_signatures, parse_signatures, triage_stream


def root(text: str) -> tuple[str | None, str | None]:
    rc = triage_stream(io.BytesIO(text.encode())).root_cause
    assert rc is not None
    return (rc.signature.id, rc.signature.check) if rc.signature else (None, None)


def tb(frames: list[tuple[str, int, str]], exc: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for file, line, func in frames:
        lines += [f'  File "{file}", line {line}, in {func}', "    pass"]
    return "\n".join([*lines, exc]) + "\n"


SITE = "/opt/venv/lib/python3.12/site-packages"


@pytest.mark.parametrize(
    "frames",
    [
        # sgl-kernel's bundled DeepGEMM runs its toolkit search when imported
        [
            (f"{SITE}/sglang/srt/layers/deep_gemm_wrapper/configurer.py", 11, "<module>"),
            (f"{SITE}/deep_gemm/__init__.py", 137, "<module>"),
            (f"{SITE}/deep_gemm/__init__.py", 42, "_ensure_initialized"),
            (f"{SITE}/deep_gemm/__init__.py", 30, "_find_cuda_home"),
        ],
        # sgl-deep-gemm keeps the search in cuda_helpers.py
        [
            (f"{SITE}/deep_gemm/__init__.py", 425, "<module>"),
            (f"{SITE}/deep_gemm/cuda_helpers.py", 20, "find_cuda_home"),
        ],
    ],
)
def test_deepgemms_toolkit_assertion_names_the_toolkit(frames: list[tuple[str, int, str]]) -> None:
    assert root(tb(frames, "AssertionError")) == ("deepgemm-no-cuda-toolkit", "jit-toolchain")
    # a line the log writes after the exception (a launcher's own message) does not hide it
    assert root(tb(frames, "AssertionError") + "server never became healthy\n")[0] == "deepgemm-no-cuda-toolkit"
    sig = {s.id: s for s in load_signatures()}["deepgemm-no-cuda-toolkit"]
    words = f"{sig.title} {sig.explanation} {sig.fix}"
    assert "toolkit" in words and "CUDA_HOME" in words


@pytest.mark.parametrize(
    ("frames", "exc"),
    [
        # another bare assertion in DeepGEMM (sgl-deep-gemm 0.1.4's __init__.py has some): not the toolkit
        ([(f"{SITE}/deep_gemm/__init__.py", 357, "fp8_fp4_mega_moe")], "AssertionError"),
        # the toolkit search's function, but an assertion with a message raised elsewhere
        ([(f"{SITE}/deep_gemm/cuda_helpers.py", 20, "find_cuda_home")], "AssertionError: CUDA_HOME is odd"),
        # a bare assertion in SGLang's own code
        ([(f"{SITE}/sglang/srt/utils/common.py", 99, "find_cuda_home")], "AssertionError"),
    ],
)
def test_other_assertions_are_not_the_toolkit(frames: list[tuple[str, int, str]], exc: str) -> None:
    assert root(tb(frames, exc))[0] != "deepgemm-no-cuda-toolkit"


def test_flashinfers_missing_ninja_is_named() -> None:
    text = tb(
        [
            (f"{SITE}/flashinfer/jit/cpp_ext.py", 312, "run_ninja"),
            ("/usr/lib/python3.12/subprocess.py", 1955, "_execute_child"),
        ],
        "FileNotFoundError: [Errno 2] No such file or directory: 'ninja'",
    )
    assert root(text)[0] == "jit-ninja-missing"
    sig = {s.id: s for s in load_signatures()}["jit-ninja-missing"]
    assert "ninja" in sig.title.lower() and "pip install ninja" in sig.fix


def test_missing_nvcc_is_still_the_nvcc_signature() -> None:
    text = tb(
        [(f"{SITE}/flashinfer/jit/cpp_ext.py", 93, "get_cuda_version")],
        "FileNotFoundError: [Errno 2] No such file or directory: 'nvcc'",
    )
    assert root(text)[0] == "jit-nvcc-missing"


def test_where_function_needs_one_frame_with_both() -> None:
    doc = {
        "signatures": [
            {
                "id": "x",
                "pattern": "^Boom$",
                "where": "pkg/a\\.py",
                "where_function": "^target$",
                "title": "t",
                "explanation": "e",
                "fix": "f",
                "source": "s",
            }
        ]
    }
    sigs = parse_signatures(doc, "test")
    assert sigs[0].where_function is not None and sigs[0].where_function.pattern == "^target$"
    hit = tb([("/x/pkg/b.py", 1, "target"), ("/x/pkg/a.py", 2, "target")], "Boom")
    split = tb([("/x/pkg/a.py", 1, "other"), ("/x/pkg/b.py", 2, "target")], "Boom")
    from stackcheck.launch import triage as t

    frames_hit = t.triage_stream(io.BytesIO(hit.encode())).root_cause
    frames_split = t.triage_stream(io.BytesIO(split.encode())).root_cause
    assert frames_hit is not None and frames_split is not None
    assert any(t._frame_in(sigs[0], f) for f in frames_hit.parts[0].frames)
    assert not any(t._frame_in(sigs[0], f) for f in frames_split.parts[0].frames)
