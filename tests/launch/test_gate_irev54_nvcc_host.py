"""irev54: nvcc's host compiler. SGLang's JIT kernels (0.5.9 on, RoPE at the first forward pass) compile their CUDA
sources with nvcc and pass it no -ccbin (apache-tvm-ffi 0.1.9 tvm_ffi/cpp/extension.py:436-441, the compile_cuda rule;
sglang 0.5.23 sglang/kernels/jit/utils/compile/ninja.py:112-114; no 'ccbin' in either), so nvcc runs its own default
host compiler, gcc on the PATH (inferred from NVIDIA's nvcc documentation of --compiler-bindir and sccache PR #1747:
'requires gcc to be on the path or -ccbin'), not $CXX. sglang-jit-cxx reads $CXX (else c++) only, so a box whose c++
is clang's or a $CXX outside the system's, with no gcc on the server's PATH, was allowed and failed at the first
build. The jit probe now reads that compiler (`nvcc_host_found`), and leaves it out where something else names it
(NVCC_CCBIN, a -ccbin in NVCC_PREPEND_FLAGS / NVCC_APPEND_FLAGS, the toolkit's nvcc.profile, a wrapper nvcc)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, cli_json, model_dir, release_box, rule_results

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

RULE = "sglang-jit-nvcc-host"
HOME = "/usr/local/cuda-12.8"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)


def _touch(path: Path, body: bytes = b"\x7fELF") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)


def _facts() -> dict[str, Any]:
    tk = {"path": HOME, "version": "12.8.93", "source": "/usr/local/cuda", "active_for_build": True}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}


def _box(root: Path, *, gcc: bool) -> HostView:
    _touch(root / HOME.lstrip("/") / "bin/nvcc")
    _touch(root / "usr/bin/c++")
    if gcc:
        _touch(root / "usr/bin/gcc")
    return HostView(str(root))


def test_the_probe_reads_nvccs_default_host_compiler(tmp_path: Path) -> None:
    view = _box(tmp_path, gcc=False)
    env = {"PATH": "/usr/local/bin:/usr/bin"}
    jit = probe_jit(_facts(), env, view)
    assert jit["cxx_found"] is True and jit["nvcc_host_found"] is False and "nvcc_host" not in jit, jit
    _touch(tmp_path / "usr/bin/gcc")
    jit = probe_jit(_facts(), env, view)
    assert jit["nvcc_host_found"] is True and jit["nvcc_host"] == "/usr/bin/gcc", jit
    # nvcc.profile appends the toolkit's bin directory to the PATH it runs the host compiler with
    (tmp_path / "usr/bin/gcc").unlink()
    _touch(tmp_path / HOME.lstrip("/") / "bin/gcc")
    assert probe_jit(_facts(), env, view)["nvcc_host"] == f"{HOME}/bin/gcc"


@pytest.mark.parametrize(
    "setting",
    [
        # ifc38: a gcc / g++ NVCC_CCBIN names is read now, another is not (igap28: nor a clang, read now too,
        # tests/launch/test_gate_igap28_clang_host.py)
        {"NVCC_CCBIN": "/opt/intel/oneapi/compiler/latest/bin/icpx"},
        {"NVCC_PREPEND_FLAGS": "-ccbin=/opt/conda/bin/x86_64-conda-linux-gnu-c++"},
        {"NVCC_APPEND_FLAGS": "--compiler-bindir /opt/gcc/bin"},
    ],
)
def test_a_host_compiler_named_elsewhere_is_not_judged(tmp_path: Path, setting: dict[str, str]) -> None:
    view = _box(tmp_path, gcc=False)
    jit = probe_jit(_facts(), {"PATH": "/usr/bin", **setting}, view)
    assert "nvcc_host_found" not in jit and next(iter(setting)) in jit["nvcc_host_reason"], jit


def test_a_profile_or_a_wrapper_that_names_it_is_not_judged(tmp_path: Path) -> None:
    view = _box(tmp_path, gcc=False)
    profile = tmp_path / HOME.lstrip("/") / "bin/nvcc.profile"
    profile.write_text("TOP = $(_HERE_)/..\ncompiler-bindir = /usr/lib/nvidia-cuda-toolkit/bin\n")
    jit = probe_jit(_facts(), {"PATH": "/usr/bin"}, view)
    assert "nvcc_host_found" not in jit and "nvcc.profile" in jit["nvcc_host_reason"], jit
    profile.unlink()
    _touch(tmp_path / HOME.lstrip("/") / "bin/nvcc", b'#!/bin/sh\nexec /opt/cuda/bin/nvcc -ccbin g++-12 "$@"\n')
    jit = probe_jit(_facts(), {"PATH": "/usr/bin"}, view)
    assert "nvcc_host_found" not in jit and "wrapper" in jit["nvcc_host_reason"], jit


def _gate(tmp_path: Path, release: str, host: Any) -> dict[str, Any]:
    path = release_box(tmp_path, release, "9.0")
    doc = json.loads(path.read_text())
    jit = doc["facts"]["jit"]
    jit["cxx_found"], jit["cxx"] = True, "/usr/bin/c++"
    if host is not None:
        jit["nvcc_host_found"] = host
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    return cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]


@pytest.mark.parametrize("release", ["0.5.9", "0.5.23"])
def test_no_gcc_for_nvcc_refuses(tmp_path: Path, release: str) -> None:
    doc = _gate(tmp_path, release, False)
    assert doc["decision"] == "refuse" and ("blocked", "fail") in rule_results(doc, RULE), doc.get("reasons")


def test_gcc_found_or_not_judged_allows(tmp_path: Path) -> None:
    for host in (True, None):
        doc = _gate(tmp_path, "0.5.23", host)
        assert doc["decision"] == "allow" and rule_results(doc, RULE) == [], (host, doc.get("reasons"))
    assert rule_results(_gate(tmp_path, "0.5.8", False), RULE) == []
