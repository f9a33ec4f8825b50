"""triage for round nineteen's causes (issue 16): a JIT build whose host compiler lacks the AddressSanitizer header
FlashInfer's memoryUtils.cu includes (flashinfer-ai/flashinfer#4470) names libasan; cudafe++ failing in the host
gcc's own libstdc++ headers on char8_t (ServeurpersoCom/acestep.cpp#72) names a gcc newer than the toolkit supports.
Other missing headers and char8_t errors in a project's own sources keep their own verdicts."""

from __future__ import annotations

import io

from stackcheck.launch.triage import TriageResult, load_signatures, triage_stream


def _triage(log: str) -> TriageResult:
    return triage_stream(io.BytesIO(log.encode()), signatures=load_signatures())


def _text(rc: object) -> str:
    sig = rc.signature  # type: ignore[attr-defined]
    return " ".join((sig.title, sig.explanation, sig.fix))


# written for this test in the shape of a FlashInfer ninja build failure
NINJA_ASAN = (
    "ninja: Entering directory `/root/.cache/flashinfer/0.6.15/120a/cached_ops'\n"
    "[2/30] /usr/local/cuda/bin/nvcc -c /venv/flashinfer/data/csrc/nv_internal/cpp/common/memoryUtils.cu -o m.o\n"
    "FAILED: fused_moe_120/memoryUtils.cuda.o\n"
    "/venv/flashinfer/data/csrc/nv_internal/cpp/common/memoryUtils.cu:18:10: fatal error: "
    "sanitizer/asan_interface.h: No such file or directory\n"
    "compilation terminated.\n"
    "ninja: build stopped: subcommand failed.\n"
    "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.\n"
)


def test_missing_asan_header_in_a_jit_build_names_libasan() -> None:
    rc = _triage(NINJA_ASAN).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "jit-missing-asan-header"
    assert rc.line == 4
    text = _text(rc)
    assert "asan_interface.h" in text and "libasan" in text and "memoryUtils.cu" in text
    assert any("4470" in s["title"] for s in rc.signature.source)


def test_other_missing_headers_are_not_the_asan_header() -> None:
    for header, expected in (("curand_kernel.h", "jit-missing-curand-header"), ("sanitizer/tsan_interface.h", None)):
        log = NINJA_ASAN.replace("sanitizer/asan_interface.h", header)
        rc = _triage(log).root_cause
        got = rc.signature.id if rc is not None and rc.signature is not None else None
        assert got != "jit-missing-asan-header", header
        if expected:
            assert got == expected, header


# written for this test in the shape of CMake's CUDA compiler check failing under nvcc
CMAKE_CHAR8 = (
    "CMake Error at /usr/share/cmake/Modules/CMakeDetermineCompilerId.cmake:934 (message):\n"
    '  Compiling the CUDA compiler identification source file "CMakeCUDACompilerId.cu" failed.\n'
    "  Compiler: /opt/cuda/bin/nvcc\n"
    '  /usr/include/c++/16.1.1/type_traits(393): error: identifier "char8_t" is undefined\n'
    '  /usr/include/c++/16.1.1/type_traits(1448): error: identifier "__f" is undefined\n'
    '  100 errors detected in the compilation of "CMakeCUDACompilerId.cu".\n'
)


def test_char8_t_in_libstdcxx_headers_names_a_gcc_newer_than_the_toolkit() -> None:
    rc = _triage(CMAKE_CHAR8).root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "nvcc-host-libstdcxx-too-new"
    assert rc.line == 4
    text = _text(rc)
    assert "gcc" in text and "libstdc++" in text and "NVCC_CCBIN" in text
    # a JIT build's nvcc line, a versioned include directory without a patch number
    rc = _triage('/usr/include/c++/15/bits/char_traits.h(405): error: identifier "char8_t" is undefined\n').root_cause
    assert rc is not None and rc.signature is not None and rc.signature.id == "nvcc-host-libstdcxx-too-new"


def test_char8_t_outside_libstdcxx_or_other_identifiers_are_not_this_cause() -> None:
    for log in (
        # the project's own source: a code bug, not the host compiler's headers
        '/src/kernels/strings.cu(12): error: identifier "char8_t" is undefined\n',
        # another identifier in libstdc++'s headers
        '/usr/include/c++/16.1.1/type_traits(1448): error: identifier "__f" is undefined\n',
    ):
        rc = _triage(log).root_cause
        assert rc is None or rc.signature is None or rc.signature.id != "nvcc-host-libstdcxx-too-new", log
