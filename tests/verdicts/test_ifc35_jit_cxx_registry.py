"""The facts behind rules marlin-jit-cxx / marlin-jit-cxx20 (features.json fp8-block-gemm) and sglang-jit-cxx
(checks.json jit-toolchain), read in the real wheels: every SGLang release the rules scope (0.5.9 on) builds its JIT
kernels with -std=c++20 and links them with $CXX, else c++ (through apache-tvm-ffi's ninja file on 0.5.9-0.5.17, its
own from 0.5.18), and the FP8 Marlin GEMM is one of those kernels. By default a few releases; STACKCHECK_REGISTRY_ALL=1
reads 0.5.9-0.5.23."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.knowledge.loader import load

pytestmark = pytest.mark.registry

ALL = [f"0.5.{n}" for n in range(9, 24)]
RELEASES = ALL if run_all() else ["0.5.9", "0.5.12", "0.5.17", "0.5.23"]
CXX_DEFAULT = re.compile(r"""os\.environ\.get\(\s*["']CXX["']\s*,\s*(?:["']cl["'] if IS_WINDOWS else )?["']c\+\+["']""")
LINK = "$cxx $in $ldflags"


def _jit(name: str) -> bool:
    return name.endswith(".py") and ("sglang/jit_kernel/" in name or "sglang/kernels/jit/" in name)


def _tvm_ffi_version(metadata: str) -> str:
    """The apache-tvm-ffi release a wheel's Requires-Dist pins (==), else the lowest it allows (>=)."""
    line = next(ln for ln in metadata.splitlines() if ln.startswith("Requires-Dist: apache-tvm-ffi"))
    got = re.search(r"==\s*([\d.]+)", line) or re.search(r">=\s*([\d.]+)", line)
    assert got, line
    return got.group(1)


@pytest.mark.parametrize("release", RELEASES)
def test_the_jit_build_links_with_cxx_and_compiles_cxx20(release: str) -> None:
    texts = read_texts(
        fetch_wheel("sglang", release), lambda n: _jit(n) or n.endswith("gptq_marlin.py") or n.endswith("/METADATA")
    )
    marlin = [t for n, t in texts.items() if n.endswith("gptq_marlin.py") and "/tests/" not in n and "bench" not in n]
    assert any("gemm/marlin/gptq_marlin.cuh" in t and "load_jit(" in t for t in marlin), release
    assert any("-std=c++20" in t for n, t in texts.items() if _jit(n)), release
    ninja = [t for n, t in texts.items() if n.endswith("utils/compile/ninja.py")]
    if ninja:  # 0.5.18 on: SGLang's own ninja file
        assert any(LINK in t for t in ninja), release
        assert any(CXX_DEFAULT.search(t) for n, t in texts.items() if n.endswith("utils/compile/toolchain.py"))
        return
    assert any("from tvm_ffi.cpp import" in t for n, t in texts.items() if _jit(n)), release
    metadata = next(t for n, t in texts.items() if n.endswith(".dist-info/METADATA"))
    tvm = fetch_wheel("apache-tvm-ffi", _tvm_ffi_version(metadata))
    ext = read_texts(tvm, lambda n: n == "tvm_ffi/cpp/extension.py")["tvm_ffi/cpp/extension.py"]
    assert CXX_DEFAULT.search(ext) and f"command = {LINK} -o $out" in ext, tvm.name


def test_the_cited_lines_of_tvm_ffi_0_1_9() -> None:
    """The rules cite apache-tvm-ffi 0.1.9 tvm_ffi/cpp/extension.py:414 and :465."""
    ext = read_texts(fetch_wheel("apache-tvm-ffi", "0.1.9"), lambda n: n == "tvm_ffi/cpp/extension.py")
    lines = ext["tvm_ffi/cpp/extension.py"].splitlines()
    assert CXX_DEFAULT.search(lines[413]) and f"{LINK} -o $out" in lines[464]
    m = load()
    rules: list[dict[str, object]] = [
        dict(r) for c in m.checks if c["id"] == "jit-toolchain" for r in c["rules"] if r["id"] == "sglang-jit-cxx"
    ]
    rules += [r for f in m.features if f["id"] == "fp8-block-gemm" for r in _rules(f) if r["id"] == "marlin-jit-cxx"]
    assert len(rules) == 2
    for rule in rules:
        sources = rule["source"]
        assert isinstance(sources, list) and any("extension.py:414" in str(s.get("title")) for s in sources), rule


def _rules(feature: object) -> list[dict[str, object]]:
    """Every rule (a dict with an id and a require) anywhere under a feature."""
    out: list[dict[str, object]] = []
    if isinstance(feature, dict):
        if "id" in feature and "require" in feature:
            out.append(feature)
        for v in feature.values():
            out += _rules(v)
    elif isinstance(feature, list):
        for v in feature:
            out += _rules(v)
    return out
