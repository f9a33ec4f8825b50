"""triage of a JIT build that finds no C++ compiler, no ninja or no nvcc (igap23; signatures jit-cxx-not-found,
torch-extension-ninja-missing and jit-nvcc-missing's shell form). The logs are written for stackcheck in the shapes
the code prints: tests/data/logs/jit_cxx_not_found.log (SGLang 0.5.12's RoPE JIT through apache-tvm-ffi 0.1.9,
whose RuntimeError carries ninja's output) and symm_mem_cxx_missing.log (--enable-symm-mem's allocator, torch's
load_inline printing ninja's output on stdout above "Error building extension 'nccl_allocator'", bash as /bin/sh)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from stackcheck.launch.triage import load_signatures, triage_file, triage_stream
from stackcheck.render.triage import render_text

HERE = Path(__file__).parent.parent
LOGS = HERE / "data" / "logs"


def _sig(sid: str):  # type: ignore[no-untyped-def]
    return next(s for s in load_signatures() if s.id == sid)


def _root(text: str):  # type: ignore[no-untyped-def]
    return triage_stream(io.BytesIO(text.encode()), "<mem>", load_signatures()).root_cause


def test_the_tvm_ffi_build_names_the_missing_compiler() -> None:
    result = triage_file(LOGS / "jit_cxx_not_found.log")
    rc = result.root_cause
    assert rc is not None and rc.stream == "TP0"
    assert rc.signature is not None and rc.signature.id == "jit-cxx-not-found"
    text = render_text(result)
    assert "build-essential" in text and "sglang-jit-cxx" in text


def test_the_allocator_build_is_named_by_its_first_error() -> None:
    """bash's 'g++: command not found' on stdout comes before the traceback, which stays the same failure."""
    result = triage_file(LOGS / "symm_mem_cxx_missing.log")
    rc = result.root_cause
    assert rc is not None and rc.text == "/bin/sh: line 1: g++: command not found", rc
    assert rc.signature is not None and rc.signature.id == "jit-cxx-not-found"
    later = [e.signature.id if e.signature else None for e in result.errors if e is not rc]
    assert later == ["symm-mem-allocator-build-failed"]
    # the traceback alone (a log of stderr only) still names the allocator's build
    lines = (LOGS / "symm_mem_cxx_missing.log").read_text().splitlines(keepends=True)
    alone = _root("".join(lines[:9] + lines[14:]))
    assert alone is not None and alone.signature is not None
    assert alone.signature.id == "symm-mem-allocator-build-failed"


@pytest.mark.parametrize(
    "line",
    ["/bin/sh: 1: c++: not found", "sh: 1: clang++: not found", "/bin/sh: line 1: g++: command not found",
     "/bin/sh: 1: /usr/bin/g++: not found", "/bin/sh: g++: command not found"],
)  # fmt: skip
def test_the_shells_forms(line: str) -> None:
    rc = _root(line + "\n")
    assert rc is not None and rc.signature is not None and rc.signature.id == "jit-cxx-not-found", line


@pytest.mark.parametrize(
    "line",
    ["/bin/sh: 1: libc++: not found", "ninja: error: loading 'build.ninja': No such file or directory",
     "g++: fatal error: no input files", "/bin/sh: 1: c++filt: not found", "WARNING: c++ not found in cache"],
)  # fmt: skip
def test_near_misses(line: str) -> None:
    assert not _sig("jit-cxx-not-found").pattern.search(line), line


def test_ninja_missing_for_torchs_cpp_extension() -> None:
    text = (
        "[2026-12-02 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/v/site-packages/sglang/srt/distributed/device_communicators/pynccl_allocator.py", line 212, in '
        "get_nccl_mem_pool\n"
        "    lib_path = torch.utils.cpp_extension.load_inline(\n"
        '  File "/v/site-packages/torch/utils/cpp_extension.py", line 2305, in verify_ninja_availability\n'
        '    raise RuntimeError("Ninja is required to load C++ extensions (pip install ninja to get it)")\n'
        "RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)\n"
    )
    rc = _root(text)
    assert rc is not None and rc.signature is not None and rc.signature.id == "torch-extension-ninja-missing"
    assert "symm-mem-allocator-ninja" in rc.signature.fix


@pytest.mark.parametrize(
    "line",
    [
        "/bin/sh: 1: /usr/local/cuda/bin/nvcc: not found",
        "/bin/sh: line 1: /usr/local/cuda/bin/nvcc: No such file or directory",
    ],
)
def test_a_missing_nvcc_in_the_shell(line: str) -> None:
    text = (
        "[2026-12-01 09:41:21 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/v/site-packages/tvm_ffi/cpp/extension.py", line 542, in build_ninja\n'
        '    raise RuntimeError("\\n".join(msg))\n'
        "RuntimeError: ninja exited with status 1\nstdout:\n[1/2] /usr/local/cuda/bin/nvcc -c cuda.cu -o cuda.o\n"
    )
    rc = _root(text + "FAILED: cuda.o\n" + line + "\nninja: build stopped: subcommand failed.\n")
    assert rc is not None and rc.signature is not None and rc.signature.id == "jit-nvcc-missing", line


def test_triage_with_facts_names_the_failing_rule(tmp_path: Path) -> None:
    """`triage --facts` of a box whose jit probe found no C++ compiler names jit-toolchain's failing sglang-jit-cxx
    (SGLang 0.5.23 on h200-newest); with the compiler there it names no cause on the box."""
    from stackcheck.cli import main

    doc = json.loads((HERE / "cases" / "h200-newest" / "facts.json").read_text())
    outs = []
    for found in (False, True):
        doc["facts"]["jit"]["cxx_found"] = found
        facts = tmp_path / f"facts-{found}.json"
        facts.write_text(json.dumps(doc))
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(["triage", str(LOGS / "jit_cxx_not_found.log"), "--facts", str(facts)])
        outs.append(out.getvalue())
    assert "sglang-jit-cxx" in outs[0] and "c++: not found" in outs[0]
    assert outs[0] != outs[1]
