"""The forty-fourth fact-check sample's row g1 (tests/realworld/FACTCHECK.md, "Forty-fourth sample"): a static clang
19 (its version string in .rodata, no LLVM library needed) at /usr/bin/clang-19 with no resource directory beside it,
named by NVCC_CCBIN under CUDA 12.8, was read as clang 19 and allowed. A clang finds its own headers (stddef.h,
the intrinsics headers) only in its resource directory, PREFIX/lib/clang/MAJOR next to its binary (clang's Driver
GetResourcesPath, unless a vendor configured CLANG_RESOURCE_DIR), so a binary copied out of its installation stops
every host compile with "'stddef.h' file not found". The probe now finds no major for such a clang (unknown, the gate
refuses); with its resource directory it is read as before. A clang that needs LLVM's libraries is read as before."""

from __future__ import annotations

from pathlib import Path

from gate_cli import CUDA_128_HOME, HOST_CONFIG_128_CLANG, clang_binary, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")


def _jit(root: Path) -> dict[str, object]:
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    (root / HOME / "include/crt/host_config.h").write_text(HOST_CONFIG_128_CLANG)
    env = {"PATH": "/usr/bin", "NVCC_CCBIN": "/usr/bin/clang-19"}
    return probe_jit(toolkit_128_facts(), env, HostView(str(root)))


def test_a_static_clang_without_its_resource_directory_is_not_read(tmp_path: Path) -> None:
    # fails before: nvcc_host_clang_major 19, supported true (row g1 allowed)
    clang_binary(tmp_path / "usr/bin/clang-19", "19.1.7", resource=False)
    jit = _jit(tmp_path)
    assert jit.get("nvcc_host_clang_major") is None and jit["nvcc_host_clang_supported"] is None, jit
    assert "resource directory" in str(jit["nvcc_host_clang_supported_reason"]), jit


def test_a_resource_directory_of_another_major_does_not_count(tmp_path: Path) -> None:
    clang_binary(tmp_path / "usr/bin/clang-19", "19.1.7", resource=False)
    (tmp_path / "usr/lib/clang/18/include").mkdir(parents=True)
    jit = _jit(tmp_path)
    assert jit["nvcc_host_clang_supported"] is None, jit


def test_a_static_clang_in_its_installation_is_read(tmp_path: Path) -> None:
    clang_binary(tmp_path / "usr/bin/clang-19", "19.1.7")  # with usr/lib/clang/19/include
    jit = _jit(tmp_path)
    assert jit["nvcc_host_clang_major"] == 19 and jit["nvcc_host_clang_supported"] is True, jit
    # a full-version directory name (clang before 16: lib/clang/15.0.7) is its resource directory too
    clang_binary(tmp_path / "b/usr/bin/clang-19", "19.1.7", resource=False)
    (tmp_path / "b/usr/lib/clang/19.1.7/include").mkdir(parents=True)
    assert _jit(tmp_path / "b")["nvcc_host_clang_supported"] is True


def test_a_clang_that_needs_llvm_libraries_is_read_as_before(tmp_path: Path) -> None:
    clang_binary(tmp_path / "usr/lib/llvm-19/bin/clang", llvm=19)
    (tmp_path / "usr/bin").mkdir(parents=True, exist_ok=True)
    (tmp_path / "usr/bin/clang-19").symlink_to("../lib/llvm-19/bin/clang")
    jit = _jit(tmp_path)
    assert jit["nvcc_host_clang_major"] == 19 and jit["nvcc_host_clang_supported"] is True, jit
