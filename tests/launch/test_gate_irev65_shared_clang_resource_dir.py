"""irev65 (a review of the merge of ifc44 and igap39): ifc44 reads a static clang only where its resource directory
PREFIX/lib/clang/MAJOR/include lies beside its resolved binary (clang's driver takes stddef.h and its other own
headers from there: clang/lib/Driver/Driver.cpp GetResourcesPath, relative to the binary whatever way clang was
linked). igap39's clang built with BUILD_SHARED_LIBS (DT_NEEDED libclangBasic.so.N and kin, no libclang-cpp / libLLVM,
no version string in the binary) was read by those names alone and never met that condition: a copied
/opt/shared19/bin/clang-19 with no /opt/shared19/lib/clang/19 was taken as a supported clang 19 under CUDA 12.8 (a
false pass: every host compile stops at 'stddef.h' file not found). Now it is held to the same resource directory."""

from __future__ import annotations

from pathlib import Path

from elfwriter import build_so
from gate_cli import CUDA_128_HOME, toolkit_128_facts, touch_exe
from gate_cli import HOST_CONFIG_128_CLANG as HEADER

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

CC = "/opt/shared19/bin/clang-19"
NEEDED = ["libclangBasic.so.19", "libclangDriver.so.19", "libLLVMSupport.so.19", "libstdc++.so.6", "libc.so.6"]


def _box(root: Path, resource: str | None) -> HostView:
    home = root / CUDA_128_HOME.lstrip("/")
    touch_exe(home / "bin/nvcc")
    (home / "include/crt").mkdir(parents=True)
    (home / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin/c++")
    touch_exe(root / CC.lstrip("/"), build_so(needed=NEEDED))
    if resource is not None:
        (root / "opt/shared19/lib/clang" / resource / "include").mkdir(parents=True)
    return HostView(str(root))


def test_a_shared_libs_clang_without_its_resource_directory_is_unknown(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin", "CC": CC}, _box(tmp_path, None))
    assert "cc_host_clang_major" not in jit and jit["cc_host_clang_supported"] is None, jit
    assert "/opt/shared19/lib/clang/19/include" in jit["cc_host_clang_supported_reason"], jit


def test_a_shared_libs_clang_with_its_resource_directory_is_read(tmp_path: Path) -> None:
    for resource in ("19", "19.1.7"):  # (clang 16+ names it by the major, earlier by X.Y.Z)
        jit = probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin", "CC": CC}, _box(tmp_path / resource, resource))
        assert jit["cc_host_clang_major"] == 19 and jit["cc_host_clang_supported"] is True, (resource, jit)
