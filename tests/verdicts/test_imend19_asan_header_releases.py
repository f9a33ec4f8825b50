"""imend19 (iasan's leftover): the asan-header rules (flashinfer-jit-asan-header / -cc-asan-header, flashinfer#4470)
apply to FlashInfer 0.5.0-0.7.4, but 0.5.1-0.6.2 had not been read. Each of those wheels includes
<sanitizer/asan_interface.h> unconditionally in memoryUtils.cu and lists that file in its fused MoE JIT modules (the
DeepSeek-V3 routing from 0.5.3, the SM90 FP8 block-scale GEMM from 0.6.0): the rules' sources now name them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from registry_wheels import fetch_wheel, read_texts, run_all

READ = ["0.5.1", "0.5.2", "0.5.3", "0.6.0", "0.6.1", "0.6.2"]
RELEASES = READ if run_all() else ["0.5.1", "0.6.2"]
MEMORY_UTILS = "flashinfer/data/csrc/nv_internal/cpp/common/memoryUtils.cu"
RULES = ("flashinfer-jit-asan-header", "flashinfer-jit-cc-asan-header")


def _rules() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []

    def walk(o: object) -> None:
        if isinstance(o, dict):
            if o.get("id") in RULES:
                found.append(o)
                return
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(load().checks)
    return found


def test_the_rules_sources_name_every_release_read() -> None:
    rules = _rules()
    assert len(rules) == 2
    for rule in rules:
        include = " ".join(s["title"] for s in rule["source"])
        modules = " ".join(s["title"] for s in rule["required_by"]["source"])
        for release in READ:
            assert f"{release}," in include, (rule["id"], release)  # fails before: not read
            assert f"{release}," in modules, (rule["id"], release)
        assert "0.5.1-0.6.2 were not read" not in rule["required_by"]["note"]


@pytest.mark.registry
@pytest.mark.parametrize("release", RELEASES)
def test_the_release_includes_the_header_unconditionally(release: str) -> None:
    texts = read_texts(
        fetch_wheel("flashinfer-python", release), lambda n: n in (MEMORY_UTILS, "flashinfer/jit/fused_moe.py")
    )
    lines = texts[MEMORY_UTILS].splitlines()
    at = next(i for i, line in enumerate(lines) if "sanitizer/asan_interface.h" in line)
    assert lines[at].startswith("#include"), lines[at]
    assert not any(line.lstrip().startswith("#if") for line in lines[:at]), "the include is under a condition"
    assert "nv_internal/cpp/common/memoryUtils.cu" in texts["flashinfer/jit/fused_moe.py"]
