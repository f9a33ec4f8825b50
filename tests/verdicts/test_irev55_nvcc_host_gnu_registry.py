"""The fact behind irev55's rule sglang-jit-nvcc-host-version, read in the real wheels: CUDA 12.8.93's
include/crt/host_config.h stops a gcc newer than 14 (lines 139-145), and the jit probe's reading of that header
(_GNU_LIMIT) finds 14 in it; SGLang 0.5.23's JIT sources and apache-tvm-ffi 0.1.9 never pass
-allow-unsupported-compiler."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from registry_wheels import fetch_wheel, read_texts

from stackcheck.probes.jit import _GNU_LIMIT

pytestmark = pytest.mark.registry

HEADER = "nvidia/cuda_nvcc/include/crt/host_config.h"


def test_cuda_12_8_takes_gcc_14_at_most() -> None:
    text = read_texts(fetch_wheel("nvidia-cuda-nvcc-cu12", "12.8.93"), lambda n: n == HEADER)[HEADER]
    lines = text.splitlines()
    assert lines[138] == "#if defined(__GNUC__)" and lines[140] == "#if __GNUC__ > 14", lines[136:146]
    assert lines[142].startswith("#error -- unsupported GNU version!"), lines[142]
    got = _GNU_LIMIT.search(text)
    assert got is not None and got.group(1) == "14"


def test_no_jit_build_allows_an_unsupported_compiler() -> None:
    texts = read_texts(fetch_wheel("sglang", "0.5.23"), lambda n: n.endswith(".py") and "/jit" in n)
    assert texts and not [n for n, t in texts.items() if "allow-unsupported-compiler" in t]
    ext = read_texts(fetch_wheel("apache-tvm-ffi", "0.1.9"), lambda n: n.endswith(".py"))
    assert ext and not [n for n, t in ext.items() if "allow-unsupported-compiler" in t]
