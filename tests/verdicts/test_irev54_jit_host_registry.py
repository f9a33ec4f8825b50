"""The facts behind irev54's rules sglang-jit-nvcc-host and sglang-jit-cxx-args (checks.json jit-toolchain), read in
the real wheels: no SGLang JIT build passes nvcc a -ccbin (the compile_cuda rule of apache-tvm-ffi's ninja file on
0.5.9-0.5.17, of SGLang's own from 0.5.18), so nvcc runs its default host compiler; from 0.5.18 the ninja file's cxx
line is $CXX shell-quoted as one word (ninja.py _arg: shlex.quote). By default a few releases;
STACKCHECK_REGISTRY_ALL=1 reads 0.5.9-0.5.23."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry_wheels import fetch_wheel, read_texts, run_all

pytestmark = pytest.mark.registry

ALL = [f"0.5.{n}" for n in range(9, 24)]
RELEASES = ALL if run_all() else ["0.5.9", "0.5.14", "0.5.17", "0.5.18", "0.5.23"]
CCBIN = re.compile(r"-ccbin|--compiler-bindir|NVCC_CCBIN")


def _jit(name: str) -> bool:
    return name.endswith(".py") and ("sglang/jit_kernel/" in name or "sglang/kernels/jit/" in name)


def _tvm_ffi_version(metadata: str) -> str:
    line = next(ln for ln in metadata.splitlines() if ln.startswith("Requires-Dist: apache-tvm-ffi"))
    got = re.search(r"==\s*([\d.]+)", line) or re.search(r">=\s*([\d.]+)", line)
    assert got, line
    return got.group(1)


@pytest.mark.parametrize("release", RELEASES)
def test_no_jit_build_names_nvccs_host_compiler(release: str) -> None:
    texts = read_texts(fetch_wheel("sglang", release), lambda n: _jit(n) or n.endswith("/METADATA"))
    jit = {n: t for n, t in texts.items() if _jit(n) and "/tests/" not in n and "/benchmark/" not in n}
    assert jit, release
    assert not [n for n, t in jit.items() if CCBIN.search(t)], release
    ninja = [t for n, t in jit.items() if n.endswith("utils/compile/ninja.py")]
    if ninja:  # 0.5.18 on: SGLang's own ninja file quotes $CXX as one shell word
        (text,) = ninja
        assert "shlex.quote(path)" in text and 'f"cxx = {_arg(host_cc)}"' in text, release
        assert '"  command = $nvcc ' in text or "command = $nvcc " in text, release
        return
    metadata = next(t for n, t in texts.items() if n.endswith(".dist-info/METADATA"))
    tvm = fetch_wheel("apache-tvm-ffi", _tvm_ffi_version(metadata))
    ext = read_texts(tvm, lambda n: n == "tvm_ffi/cpp/extension.py")["tvm_ffi/cpp/extension.py"]
    assert "rule compile_cuda" in ext and not CCBIN.search(ext), tvm.name
    assert 'ninja.append("cxx = {}".format(os.environ.get("CXX"' in ext, tvm.name  # unquoted


def test_the_cited_lines() -> None:
    """sglang-jit-nvcc-host cites apache-tvm-ffi 0.1.9 extension.py:437-444 and sglang 0.5.23 ninja.py:112-114;
    sglang-jit-cxx-args cites 0.5.18 ninja.py:52 and :101, 0.5.23 :53 and :102."""
    ext = read_texts(fetch_wheel("apache-tvm-ffi", "0.1.9"), lambda n: n == "tvm_ffi/cpp/extension.py")
    lines = ext["tvm_ffi/cpp/extension.py"].splitlines()
    assert "rule compile_cuda" in lines[436] and "command = $nvcc" in lines[443]
    for release, quote, cxx in (("0.5.18", 52, 101), ("0.5.23", 53, 102)):
        text = read_texts(fetch_wheel("sglang", release), _is_ninja_py)[NINJA_PY].splitlines()
        assert "shlex.quote(path)" in text[quote - 1] and "cxx = {_arg(host_cc)}" in text[cxx - 1], release
    text = read_texts(fetch_wheel("sglang", "0.5.23"), _is_ninja_py)[NINJA_PY].splitlines()
    assert "rule compile_cuda" in text[111] and "command = $nvcc" in text[113]


NINJA_PY = "sglang/kernels/jit/utils/compile/ninja.py"


def _is_ninja_py(name: str) -> bool:
    return name == NINJA_PY
