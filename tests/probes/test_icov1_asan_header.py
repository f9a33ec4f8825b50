"""icov1 (issue 16, flashinfer#4470): whether the gcc of FlashInfer's JIT build finds <sanitizer/asan_interface.h>.

FlashInfer 0.5.0-0.7.2's nv_internal/cpp/common/memoryUtils.cu includes the header with no condition (line 18 of each
wheel read), and it is compiled into the JIT modules of the fused MoE (CUTLASS and trtllm-gen), moe_utils, the
DeepSeek-V3 fused routing and the SM90 FP8 block-scale GEMM. GCC keeps the sanitizer headers in its own
PREFIX/lib/gcc/TRIPLET/N/include; Fedora ships them with libasan, which gcc-c++ does not pull in (flashinfer#4662).
The jit probe reads it for the gcc nvcc runs (`nvcc_host_asan_header_found`) and the one CC names
(`cc_host_asan_header_found`); jit-toolchain's rules flashinfer-jit-asan-header and flashinfer-jit-cc-asan-header
judge it. The boxes are fake trees written here (gcc drivers are minimal ELF files carrying GCC's version strings)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from elfwriter import build_so
from gate_cli import cli_json

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

MARKS = b"\0Configured with: %s\n\0gcc version %s %s\n\0"
STUB = b"\x7fELF\x02\x01\x01" + b"\0" * 57
HEADER = "sanitizer/asan_interface.h"
FEDORA = "x86_64-redhat-linux"
DEBIAN = "x86_64-linux-gnu"


def _exe(path: Path, body: bytes = STUB) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)


def _gcc(root: Path, major: int, triplet: str, *, header: bool, link: str | None = "gcc") -> None:
    """GCC `major`: /usr/bin/gcc-N and g++-N (driver binaries carrying N.1.0), cc1 / cc1plus in
    /usr/libexec/gcc/TRIPLET/N (RHEL's layout) or /usr/lib/gcc/TRIPLET/N (Debian's), its include directory in
    /usr/lib/gcc/TRIPLET/N/include, with the sanitizer header where `header`; /usr/bin/`link` -> gcc-N."""
    for name in ("gcc", "g++"):
        _exe(root / f"usr/bin/{name}-{major}", build_so(needed=["libc.so.6"]) + MARKS + f"{major}.1.0\0".encode())
    programs = "libexec" if triplet == FEDORA else "lib"
    for name in ("cc1", "cc1plus"):
        _exe(root / f"usr/{programs}/gcc/{triplet}/{major}/{name}")
    include = root / f"usr/lib/gcc/{triplet}/{major}/include"
    include.mkdir(parents=True, exist_ok=True)
    (include / "stddef.h").write_text("/* builtin */\n")
    if header:
        (include / "sanitizer").mkdir(exist_ok=True)
        (include / HEADER).write_text("/* the sanitizer interface */\n")
    if link is not None:
        os.symlink(f"gcc-{major}", root / f"usr/bin/{link}")


def _box(root: Path) -> HostView:
    _exe(root / "usr/local/cuda/bin/nvcc")
    (root / "usr/local/cuda/include").mkdir(parents=True, exist_ok=True)
    return HostView(str(root))


def _facts() -> dict[str, Any]:
    tk = {"path": "/usr/local/cuda", "version": "13.0.88", "source": "/usr/local/cuda", "active_for_build": True}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}


def _probe(view: HostView, env: dict[str, str] | None = None) -> dict[str, Any]:
    return probe_jit(_facts(), {"PATH": "/usr/bin", **(env or {})}, view)


# ---- the probe -------------------------------------------------------------------------------------------------


def test_a_gcc_without_its_sanitizer_headers_is_false(tmp_path: Path) -> None:
    _gcc(tmp_path, 15, FEDORA, header=False)
    jit = _probe(_box(tmp_path))
    assert jit["nvcc_host_gnu_major"] == 15
    assert jit["nvcc_host_asan_header_found"] is False
    assert "nvcc_host_asan_header_reason" not in jit


@pytest.mark.parametrize("triplet", [FEDORA, DEBIAN])
def test_a_gcc_with_its_sanitizer_headers_is_true(tmp_path: Path, triplet: str) -> None:
    _gcc(tmp_path, 13, triplet, header=True)
    assert _probe(_box(tmp_path))["nvcc_host_asan_header_found"] is True


def test_another_gccs_headers_do_not_count(tmp_path: Path) -> None:
    # gcc 16 with libasan beside gcc 15 without it (the shape of flashinfer#4470's box): gcc 15 does not find gcc 16's
    _gcc(tmp_path, 16, FEDORA, header=True, link=None)
    _gcc(tmp_path, 15, FEDORA, header=False)
    assert _probe(_box(tmp_path))["nvcc_host_asan_header_found"] is False


def test_cc_is_judged_apart_from_the_paths_gcc(tmp_path: Path) -> None:
    _gcc(tmp_path, 16, FEDORA, header=True)
    _gcc(tmp_path, 15, FEDORA, header=False, link=None)
    jit = _probe(_box(tmp_path), {"CC": "g++-15"})
    assert jit["flashinfer_host"] == "cc"
    assert jit["cc_host_asan_header_found"] is False
    assert jit["nvcc_host_asan_header_found"] is True


def test_a_system_or_cpath_directory_holding_it_counts(tmp_path: Path) -> None:
    _gcc(tmp_path, 15, FEDORA, header=False)
    view = _box(tmp_path)
    (tmp_path / "opt/asan/sanitizer").mkdir(parents=True)
    (tmp_path / "opt/asan" / HEADER).write_text("/* */\n")
    assert _probe(view, {"CPLUS_INCLUDE_PATH": "/opt/asan"})["nvcc_host_asan_header_found"] is True
    (tmp_path / "usr/include/sanitizer").mkdir(parents=True)
    (tmp_path / "usr/include" / HEADER).write_text("/* */\n")
    assert _probe(view)["nvcc_host_asan_header_found"] is True


@pytest.mark.parametrize(
    "env",
    [{"CPATH": "include"}, {"FLASHINFER_EXTRA_CUDAFLAGS": "-I/opt/x"}, {"NVCC_APPEND_FLAGS": "-Xcompiler -isystem=/o"}],
)
def test_a_directory_not_known_is_null_never_false(tmp_path: Path, env: dict[str, str]) -> None:
    _gcc(tmp_path, 15, FEDORA, header=False)
    jit = _probe(_box(tmp_path), env)
    assert jit["nvcc_host_asan_header_found"] is None
    assert jit["nvcc_host_asan_header_reason"]


def test_no_include_directory_of_the_gccs_major_is_null(tmp_path: Path) -> None:
    # a gcc 15 driver whose prefix holds the programs of 15 and only an include directory of 14
    _gcc(tmp_path, 15, FEDORA, header=False)
    os.rename(tmp_path / f"usr/lib/gcc/{FEDORA}/15", tmp_path / f"usr/lib/gcc/{FEDORA}/14")
    jit = _probe(_box(tmp_path))
    assert jit["nvcc_host_asan_header_found"] is None
    assert "no GCC 15 version directory" in jit["nvcc_host_asan_header_reason"]


def test_absent_where_the_gccs_major_is_not_read(tmp_path: Path) -> None:
    _box(tmp_path)
    _exe(tmp_path / "usr/bin/gcc", b'#!/bin/sh\nexec /opt/x/gcc "$@"\n')  # a wrapper whose gcc is not read
    jit = _probe(HostView(str(tmp_path)))
    assert "nvcc_host_gnu_major" not in jit
    assert "nvcc_host_asan_header_found" not in jit


# ---- the check -------------------------------------------------------------------------------------------------


def _audit(tmp_path: Path, jit: dict[str, Any], **packages: dict[str, Any]) -> dict[str, str]:
    """jit-toolchain's rule results (rule id -> result) of `audit --facts` on an RTX PRO 6000 box with FlashInfer
    0.6.15.post1 and no flashinfer-jit-cache unless `packages` says otherwise, and this jit section."""
    facts = {
        "gpus": [{"index": 0, "name": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "compute_capability": "12.0"}],
        "packages": {
            "flashinfer-python": {"installed": True, "version": "0.6.15.post1"},
            "flashinfer-jit-cache": {"installed": False},
            **packages,
        },
        "jit": {"toolkit": "/usr/local/cuda", "nvcc": "/usr/local/cuda/bin/nvcc", "nvcc_found": True, **jit},
    }
    path = tmp_path / "facts.json"
    import json

    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    doc = cli_json(["audit", "--facts", str(path), "--format", "json"])[1]
    return {
        str(x.get("rule")): str(x.get("result"))
        for c in doc.get("checks") or []
        if c.get("id") == "jit-toolchain"
        for x in c.get("reasons") or []
    }


RULES = ("flashinfer-jit-asan-header", "flashinfer-jit-cc-asan-header")


def test_the_check_fails_a_gcc_without_the_header(tmp_path: Path) -> None:
    nvcc_default = {"flashinfer_host": "nvcc-default", "nvcc_host_found": True, "nvcc_host": "/usr/bin/gcc"}
    got = _audit(tmp_path, {**nvcc_default, "nvcc_host_gnu_major": 15, "nvcc_host_asan_header_found": False})
    assert got.get("flashinfer-jit-asan-header") == "fail", got
    cc = {"flashinfer_host": "cc", "cc_host_found": True, "cc_host": "/usr/bin/g++-15", "cc_host_gnu_major": 15}
    got = _audit(tmp_path, {**cc, "cc_host_asan_header_found": False})
    assert got.get("flashinfer-jit-cc-asan-header") == "fail", got


def test_the_check_is_unknown_where_not_read_and_silent_where_found(tmp_path: Path) -> None:
    base = {"flashinfer_host": "nvcc-default", "nvcc_host_found": True, "nvcc_host": "/usr/bin/gcc"}
    got = _audit(tmp_path, {**base, "nvcc_host_asan_header_found": None, "nvcc_host_asan_header_reason": "x"})
    assert got.get("flashinfer-jit-asan-header") == "unknown", got
    got = _audit(tmp_path, {**base, "nvcc_host_asan_header_found": True})
    assert got.get("flashinfer-jit-asan-header") in (None, "pass"), got


@pytest.mark.parametrize(
    "packages",
    [
        {"flashinfer-jit-cache": {"installed": True, "version": "0.6.15.post1"}},  # the modules come prebuilt
        {"flashinfer-python": {"installed": True, "version": "0.4.1"}},  # a release whose sources were not read
    ],
)
def test_the_check_does_not_apply_outside_what_was_read(tmp_path: Path, packages: dict[str, Any]) -> None:
    base = {"flashinfer_host": "nvcc-default", "nvcc_host_found": True, "nvcc_host": "/usr/bin/gcc"}
    got = _audit(tmp_path, {**base, "nvcc_host_asan_header_found": False}, **packages)
    assert got.get("flashinfer-jit-asan-header") not in ("fail", "unknown"), got
