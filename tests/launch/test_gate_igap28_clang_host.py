"""igap28 (issue 16, class 2: which compiler a JIT build really runs): a clang as nvcc's host compiler.

A clang that CC names (FlashInfer passes -ccbin $CC) was found and never judged, and one that NVCC_CCBIN names was not
read at all, so their rules did not apply: a clang 20 beside CUDA 12.8, whose include/crt/host_config.h stops every
compile with '#error -- unsupported clang version!' (clang must be less than 20; CUDA 13.0: less than 21), was
allowed. The probe now reads the clang's major (its name clang-N, an llvm-N directory, the one lib/clang/N resource
directory) and the header's clang limit; a clang whose major it cannot read is unknown, never ok."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gate_cli import (
    clang_binary,
    clang_toolkit_128,
    jit_host_gate,
    judged_rules,
    toolkit_128_facts,
    touch_exe,
)

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

PATH = {"PATH": "/usr/bin"}


def _box(root: Path) -> HostView:
    """CUDA 12.8 (gate_cli.clang_toolkit_128), gcc-14 with g++ as the PATH's gcc, c++, Debian's clang-19
    (/usr/bin/clang-19 -> /usr/lib/llvm-19/bin/clang), a clang-20 binary, /opt/llvm/bin/clang with lib/clang/20, and a
    ccache link named clang."""
    clang_toolkit_128(root)
    touch_exe(root / "usr/bin/gcc-14")
    (root / "usr/bin/gcc").symlink_to("gcc-14")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/14/{name}")
    touch_exe(root / "usr/bin/c++")
    # (igap34: ELF programs that say their version, as real clang binaries do; a 4-byte stub is not read)
    clang_binary(root / "usr/lib/llvm-19/bin/clang", llvm=19)
    (root / "usr/bin/clang-19").symlink_to("../lib/llvm-19/bin/clang")
    clang_binary(root / "usr/bin/clang-20", "20.1.8")
    clang_binary(root / "opt/llvm/bin/clang", "20.1.2")
    (root / "opt/llvm/lib/clang/20/include").mkdir(parents=True, exist_ok=True)
    clang_binary(root / "opt/bare/bin/clang")
    touch_exe(root / "usr/bin/ccache")
    (root / "usr/lib/ccache").mkdir(parents=True)
    (root / "usr/lib/ccache/clang").symlink_to("../../bin/ccache")
    return HostView(str(root))


# ---- the probe -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cc", "major", "supported"),
    [("clang-19", 19, True), ("clang-20", 20, False), ("/opt/llvm/bin/clang", 20, False)],
)
def test_a_clang_cc_is_judged_against_host_config(tmp_path: Path, cc: str, major: int, supported: bool) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _box(tmp_path))
    assert jit["cc_host_found"] is True and jit["cc_host_clang_major"] == major, jit
    assert jit["cc_host_clang_max"] == 19 and jit["cc_host_clang_supported"] is supported, jit
    assert not any(k.startswith("cc_host_gnu") for k in jit), jit


@pytest.mark.parametrize("cc", ["/opt/bare/bin/clang", "/usr/lib/ccache/clang"])
def test_a_clang_whose_major_is_not_read_is_unknown(tmp_path: Path, cc: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _box(tmp_path))
    assert jit["cc_host_clang_supported"] is None and "cc_host_clang_major" not in jit, jit
    assert cc in jit["cc_host_clang_supported_reason"] and "clang 19 at most" in jit["cc_host_clang_supported_reason"]


def test_nvcc_ccbin_naming_clang_is_read(tmp_path: Path) -> None:
    view = _box(tmp_path)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "clang-20"}, view)
    assert jit["nvcc_host_found"] is True and jit["nvcc_host"] == "/usr/bin/clang-20", jit
    assert jit["nvcc_host_clang_supported"] is False and "nvcc_host_gnu_major" not in jit, jit
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/usr/bin/clang-19"}, view)
    assert jit["nvcc_host_clang_major"] == 19 and jit["nvcc_host_clang_supported"] is True, jit
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "clang-18"}, view)
    assert jit["nvcc_host_found"] is False, jit


def test_allow_unsupported_leaves_the_limit_out(tmp_path: Path) -> None:
    env = {**PATH, "CC": "clang-20", "NVCC_APPEND_FLAGS": "-allow-unsupported-compiler"}
    jit = probe_jit(toolkit_128_facts(), env, _box(tmp_path))
    assert jit["cc_host_clang_major"] == 20 and "cc_host_clang_supported" not in jit, jit


# ---- the gate --------------------------------------------------------------------------------------------------


def _gate(tmp_path: Path, host: dict[str, Any], release: str) -> dict[str, Any]:
    return jit_host_gate(tmp_path, host, release)


def _rules(doc: dict[str, Any]) -> dict[str, str]:
    return judged_rules(doc, lambda rule: rule.endswith("-clang"))


def test_the_gate_judges_a_clang_cc_for_flashinfers_jit(tmp_path: Path) -> None:
    box = _box(tmp_path / "box")
    doc = _gate(tmp_path / "a", probe_jit(toolkit_128_facts(), {**PATH, "CC": "clang-20"}, box), "0.5.5")
    assert doc["decision"] == "refuse" and _rules(doc) == {"flashinfer-jit-cc-host-clang": "fail"}, doc["reasons"]
    doc = _gate(tmp_path / "b", probe_jit(toolkit_128_facts(), {**PATH, "CC": "clang-19"}, box), "0.5.5")
    assert doc["decision"] == "allow" and _rules(doc) == {}, doc.get("warnings")
    doc = _gate(tmp_path / "c", probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/bare/bin/clang"}, box), "0.5.5")
    assert _rules(doc) == {"flashinfer-jit-cc-host-clang": "unknown"}, doc.get("warnings")


def test_the_gate_judges_a_clang_nvcc_ccbin_for_sglangs_jit(tmp_path: Path) -> None:
    box = _box(tmp_path / "box")
    doc = _gate(tmp_path / "a", probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "clang-20"}, box), "0.5.12")
    assert doc["decision"] == "refuse" and _rules(doc).get("sglang-jit-nvcc-host-clang") == "fail", doc["reasons"]
    doc = _gate(tmp_path / "b", probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "clang-19"}, box), "0.5.12")
    assert "sglang-jit-nvcc-host-clang" not in _rules(doc), doc.get("reasons")


# ---- irev60: a clang that is a wrapper script ------------------------------------------------------------------


@pytest.mark.parametrize("where", ["opt/wrap", "usr/lib/llvm-19"])
def test_a_clang_script_is_not_judged_by_its_directories(tmp_path: Path, where: str) -> None:
    # a script named clang beside one lib/clang/19 (or in llvm-19's bin) that runs a clang 20: its directories were
    # taken for the major of the clang it runs (19, supported; irev60). Only an ELF clang's directories say its major.
    view = _box(tmp_path / "box")
    (tmp_path / "box" / where / "bin").mkdir(parents=True, exist_ok=True)
    (tmp_path / "box" / where / "bin/clang").unlink(missing_ok=True)
    touch_exe(tmp_path / "box" / where / "bin/clang", b'#!/bin/sh\nexec /usr/local/bin/clang-real "$@"\n')
    (tmp_path / "box" / where / "lib/clang/19/include").mkdir(parents=True)
    touch_exe(tmp_path / "box/usr/local/bin/clang-real")
    cc = f"/{where}/bin/clang"
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, view)
    assert jit["cc_host_clang_supported"] is None and "cc_host_clang_major" not in jit, jit
    assert "no ELF program" in jit["cc_host_clang_supported_reason"], jit
    doc = _gate(tmp_path / "g", jit, "0.5.5")
    assert _rules(doc) == {"flashinfer-jit-cc-host-clang": "unknown"}, doc.get("warnings")
