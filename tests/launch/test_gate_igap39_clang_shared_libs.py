"""igap39 (issue 16, JIT toolchain): a clang built with BUILD_SHARED_LIBS needs one shared library per LLVM and clang
component (DT_NEEDED libclangBasic.so.N, libclangDriver.so.N, libLLVMSupport.so.N: AddLLVM.cmake's
SOVERSION ${LLVM_VERSION_MAJOR}${LLVM_VERSION_SUFFIX}) and neither libclang-cpp nor libLLVM, so its major was not read
and every clang host-compiler rule said unknown (an over-refusal). Those names now say its major where they agree with
each other and with its name; an ELF in clang's name needing LLVM components but none of clang's own libraries (an
LLVM tool copied there) still says nothing. The binaries are minimal ELF files written here with those DT_NEEDED
names, not copies of a real clang."""

from __future__ import annotations

from pathlib import Path

import pytest
from elfwriter import build_so
from gate_cli import CUDA_128_HOME, toolkit_128_facts, touch_exe
from gate_cli import HOST_CONFIG_128_CLANG as HEADER

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")
PATH = {"PATH": "/usr/bin"}
BINARIES = {
    "/opt/shared19/bin/clang-19": ["libclangBasic.so.19", "libclangDriver.so.19", "libLLVMSupport.so.19"],
    "/opt/shared20/bin/clang": ["libclangDriver.so.20git", "libclangBasic.so.20git", "libLLVMSupport.so.20git"],
    "/opt/lie/bin/clang-19": ["libclangBasic.so.20", "libLLVMSupport.so.20"],  # clang 20's under clang-19's name
    "/opt/mixed/bin/clang": ["libclangBasic.so.19", "libLLVMSupport.so.20"],
    "/opt/tool/bin/clang-19": ["libLLVMSupport.so.19", "libLLVMObject.so.19"],  # no clang library: an LLVM tool
}


def _box(root: Path) -> HostView:
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    (root / HOME / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin/c++")
    for path, needed in BINARIES.items():
        touch_exe(root / path.lstrip("/"), build_so(needed=[*needed, "libstdc++.so.6", "libc.so.6"]))
    for prefix, major in (("opt/shared19", "19"), ("opt/shared20", "20")):  # (their resource directories: irev65)
        (root / prefix / "lib/clang" / major / "include").mkdir(parents=True, exist_ok=True)
    return HostView(str(root))


@pytest.mark.parametrize(("cc", "major", "supported"), [("/opt/shared19/bin/clang-19", 19, True),
                                                        ("/opt/shared20/bin/clang", 20, False)])  # fmt: skip
def test_a_shared_libs_clang_is_read_from_its_component_libraries(
    tmp_path: Path, cc: str, major: int, supported: bool
) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _box(tmp_path))
    assert jit["cc_host_clang_major"] == major and jit["cc_host_clang_supported"] is supported, jit


@pytest.mark.parametrize(("cc", "said"), [("/opt/lie/bin/clang-19", "disagree"),
                                          ("/opt/mixed/bin/clang", "disagree"),
                                          ("/opt/tool/bin/clang-19", "neither clang's version string")])  # fmt: skip
def test_component_libraries_that_disagree_or_are_no_clangs_stay_unknown(tmp_path: Path, cc: str, said: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _box(tmp_path))
    assert "cc_host_clang_major" not in jit and jit["cc_host_clang_supported"] is None, jit
    assert said in jit["cc_host_clang_supported_reason"], jit
