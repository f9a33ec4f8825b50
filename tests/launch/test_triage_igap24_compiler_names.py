"""triage of a missing compiler under its versioned or triplet name (igap24, issue 16): the shell's 'g++-13: not found'
(CXX=g++-13 in a JIT ninja file: signature jit-cxx-versioned-not-found), 'x86_64-linux-gnu-g++: not found'
(jit-cxx-not-found, widened) and nvcc's '<compiler>: No such file or directory' before 'nvcc fatal : Failed to
preprocess host compiler properties' (its default gcc, -ccbin or NVCC_CCBIN missing: nvcc-host-compiler-missing; the
wording seen with the nvcc 13.0.88 wheel on the helper's box). Before: none of these lines matched a signature. The
logs here are written for stackcheck in the shape of a tvm-ffi JIT build's error."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from stackcheck.launch.triage import load_signatures, triage_stream

LOG = Path(__file__).parent.parent / "data" / "logs" / "jit_cxx_not_found.log"


def _log(*build: str) -> str:
    """tests/data/logs/jit_cxx_not_found.log (an SGLang RoPE JIT build through apache-tvm-ffi, whose RuntimeError
    carries ninja's output) with its line 37, the shell's '/bin/sh: 1: c++: not found', replaced by `build`."""
    lines = LOG.read_text().splitlines(keepends=True)
    assert lines[36] == "/bin/sh: 1: c++: not found\n"
    return "".join([*lines[:36], *(line + "\n" for line in build), *lines[37:]])


def _root(text: str) -> str | None:
    rc = triage_stream(io.BytesIO(text.encode()), "<mem>", load_signatures()).root_cause
    assert rc is not None
    return rc.signature.id if rc.signature else None


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        ("/bin/sh: 1: g++-13: not found", "jit-cxx-versioned-not-found"),
        ("/bin/sh: line 1: clang++-17: command not found", "jit-cxx-versioned-not-found"),
        ("/bin/sh: 1: x86_64-linux-gnu-g++-12: not found", "jit-cxx-versioned-not-found"),
        ("/bin/sh: 1: /usr/bin/g++-14: not found", "jit-cxx-versioned-not-found"),
        ("/bin/sh: 1: x86_64-linux-gnu-g++: not found", "jit-cxx-not-found"),
        ("/bin/sh: 1: c++: not found", "jit-cxx-not-found"),  # (unchanged)
    ],
)
def test_the_shells_line_names_the_missing_cxx(line: str, signature: str) -> None:
    assert _root(line + "\n") == signature  # the line alone (ninja's output on stdout, as torch prints it)
    assert _root(_log(line)) == signature  # inside tvm-ffi's RuntimeError


@pytest.mark.parametrize(
    "line",
    [
        "g++-13: No such file or directory",
        "gcc: No such file or directory",
        "/nonexistent/gcc: No such file or directory",
        "x86_64-linux-gnu-g++-12: No such file or directory",
    ],
)
def test_nvccs_missing_host_compiler(line: str) -> None:
    fatal = "nvcc fatal   : Failed to preprocess host compiler properties."
    assert _root(f"{line}\n{fatal}\n") == "nvcc-host-compiler-missing"
    assert _root(_log(line, fatal)) == "nvcc-host-compiler-missing"


def test_the_causes_are_the_rules_that_judge_those_compilers() -> None:
    sigs = {s.id: s for s in load_signatures()}
    host = {r for c in sigs["nvcc-host-compiler-missing"].caused_by for r in c.rules}
    assert host == {"flashinfer-jit-nvcc-host", "flashinfer-jit-cc-host", "sglang-jit-nvcc-host"}
    versioned = {r for c in sigs["jit-cxx-versioned-not-found"].caused_by for r in c.rules}
    assert versioned == {r for c in sigs["jit-cxx-not-found"].caused_by for r in c.rules}


@pytest.mark.parametrize(
    "line",
    [
        "gcc: error: rope.c: No such file or directory",  # gcc's own error about an input file
        "fatal error: cuda_runtime.h: No such file or directory",
        "/usr/include/libstdc++-13: No such file or directory",
        "cc1plus: No such file or directory",
        "/bin/sh: 1: libstdc++-13: not found",
        "g++-13: No such file or directory: 'x'",
    ],
)
def test_near_misses_are_not_taken(line: str) -> None:
    sigs = {s.id: s for s in load_signatures()}
    for ident in ("jit-cxx-versioned-not-found", "nvcc-host-compiler-missing", "jit-cxx-not-found"):
        assert not sigs[ident].pattern.search(line), (ident, line)
