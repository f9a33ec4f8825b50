"""igap34 (issue 16, class 2: the name of a host compiler that lies): a clang binary with no LLVM library in its
DT_NEEDED and no llvm-N directory on its path (a statically linked clang: LLVM's own release builds, a vendor's) was
read by its name alone, and so was any ELF file in clang's name (a copy of another program, a file of an ELF's first
bytes that does not run): a static clang 20 named clang-19, or a stub named clang-10, beside a toolkit whose
host_config.h takes clang 19, was allowed.

The probe now reads the version a clang binary carries in its .rodata (clang's Version.cpp strings: " version X.Y.Z",
"Clang X.Y.Z"), beside its name and the LLVM libraries it needs, which must all agree; an ELF that says neither
(no version string, no LLVM library) is unknown whatever its name, and so is NVIDIA's Grace clang (its own range)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from gate_cli import (
    clang_binary,
    clang_toolkit_128,
    gcc_driver,
    jit_host_gate,
    judged_rules,
    toolkit_128_facts,
    touch_exe,
)

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

PATH = {"PATH": "/usr/bin"}


def _box(root: Path) -> HostView:
    clang_toolkit_128(root)
    touch_exe(root / "usr/bin/c++")
    clang_binary(root / "opt/static19/bin/clang-19", "20.1.8")  # a static clang 20 under clang-19's name
    clang_binary(root / "opt/good/bin/clang-19", "19.1.7")
    clang_binary(root / "opt/plain/bin/clang", "20.1.8")  # no name, directory or resource directory tells
    clang_binary(root / "opt/plain19/bin/clang", "19.1.7")
    clang_binary(root / "opt/copy/bin/clang-19")  # an ELF without clang's strings or LLVM libraries
    touch_exe(root / "opt/stub/bin/clang-10")  # an ELF's first four bytes
    # the building compiler's .comment string, which is no version of this binary
    clang_binary(root / "opt/comment/bin/clang-19", extra=b"\0clang version 19.1.7\0")
    clang_binary(root / "opt/grace/bin/clang-19", "19.1.7", extra=b"\0__GRCO_CLANG_COMPILER__\0")
    return HostView(str(root))


@pytest.mark.parametrize(("cc", "major", "supported"), [("/opt/plain/bin/clang", 20, False),
                                                        ("/opt/plain19/bin/clang", 19, True),
                                                        ("/opt/good/bin/clang-19", 19, True)])  # fmt: skip
def test_a_static_clang_is_read_from_its_binary(tmp_path: Path, cc: str, major: int, supported: bool) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _box(tmp_path))
    assert jit["cc_host_clang_major"] == major and jit["cc_host_clang_supported"] is supported, jit


@pytest.mark.parametrize(
    ("cc", "said"),
    [
        ("/opt/static19/bin/clang-19", "19 by its name clang-19; 20 by its version string ' version 20.1.8'"),
        ("/opt/copy/bin/clang-19", "neither clang's version string nor an LLVM library"),
        ("/opt/comment/bin/clang-19", "neither clang's version string nor an LLVM library"),
        ("/opt/stub/bin/clang-10", "not read as an ELF program"),
        ("/opt/grace/bin/clang-19", "NVIDIA's clang for Grace"),
    ],
)
def test_a_clang_named_for_a_major_its_binary_does_not_say_is_unknown(tmp_path: Path, cc: str, said: str) -> None:
    # each was read by its name (19 or 10: ok against clang 19 at most) before
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _box(tmp_path))
    assert jit["cc_host_clang_supported"] is None and "cc_host_clang_major" not in jit, jit
    assert said in jit["cc_host_clang_supported_reason"], jit


@pytest.mark.parametrize("ccbin", ["/opt/static19/bin/clang-19", "/opt/stub/bin/clang-10", "/opt/copy/bin/clang-19"])
def test_the_gate_does_not_allow_a_clang_its_binary_does_not_say(tmp_path: Path, ccbin: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": ccbin}, _box(tmp_path / "box"))
    doc = jit_host_gate(tmp_path / "g", jit, "0.5.12")
    rules = judged_rules(doc, lambda rule: rule.startswith("sglang-jit-nvcc-host-clang"))
    assert rules.get("sglang-jit-nvcc-host-clang") == "unknown", (doc.get("reasons"), doc.get("warnings"))
    # the static clang 19 its binary says: allowed
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/opt/good/bin/clang-19"}, _box(tmp_path / "ok"))
    doc = jit_host_gate(tmp_path / "h", jit, "0.5.12")
    assert doc["decision"] == "allow", (doc.get("reasons"), doc.get("warnings"))
    assert judged_rules(doc, lambda rule: rule.startswith("sglang-jit-nvcc-host-clang")) == {}, doc.get("warnings")


def test_a_real_static_llvm_binary_is_read(tmp_path: Path) -> None:
    # the clang-format 23.1.5 wheel's statically linked binary (LLVM's Version.cpp inside: " version 23.1.5" in its
    # .rodata, and no LLVM library needed), copied into a prefix as clang
    from registry_wheels import extract, fetch_wheel

    wheel = fetch_wheel("clang-format", "23.1.5")
    root = extract(wheel, tmp_path / "wheel", lambda name: name.endswith("bin/clang-format"))
    binary = next(root.rglob("clang-format"))
    view = _box(tmp_path / "box")
    (tmp_path / "box/opt/real/bin").mkdir(parents=True)
    shutil.copy2(binary, tmp_path / "box/opt/real/bin/clang")
    (tmp_path / "box/opt/real/bin/clang").chmod(0o755)
    (tmp_path / "box/opt/real/lib/clang/23/include").mkdir(parents=True)  # its resource directory (ifc44)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/real/bin/clang"}, view)
    assert jit["cc_host_clang_major"] == 23 and jit["cc_host_clang_supported"] is False, jit


# ---- gcc: a file of an ELF's first bytes in gcc-N's name -----------------------------------------------------------
# A gcc-14 that is only an ELF's first bytes (a truncated file: it does not run) was read by its name and its program
# directory as 14, supported beside CUDA 12.8; it is now unknown. The tests' gcc stubs are GCC drivers that say their
# major (gate_cli.touch_exe, gcc_driver).


def _gcc_box(root: Path, driver: bytes) -> HostView:
    clang_toolkit_128(root)
    touch_exe(root / "usr/bin/c++")
    touch_exe(root / "usr/bin/gcc-14", driver)
    (root / "usr/bin/gcc").symlink_to("gcc-14")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/x86_64-linux-gnu/14/{name}")
    return HostView(str(root))


def test_a_truncated_gcc_is_not_read_by_its_name(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), PATH, _gcc_box(tmp_path / "stub", b"\x7fELF"))
    assert "nvcc_host_gnu_major" not in jit and jit["nvcc_host_gnu_supported"] is None, jit
    assert "not read as an ELF program" in jit["nvcc_host_gnu_supported_reason"], jit
    doc = jit_host_gate(tmp_path / "g", jit, "0.5.12")
    rules = judged_rules(doc, lambda rule: rule.endswith("host-version"))
    assert rules.get("sglang-jit-nvcc-host-version") == "unknown", (doc.get("reasons"), doc.get("warnings"))
    # a driver that says 14 (gate_cli.gcc_driver, the shape of GCC's .rodata strings): read, supported
    jit = probe_jit(toolkit_128_facts(), PATH, _gcc_box(tmp_path / "ok", gcc_driver(14)))
    assert jit["nvcc_host_gnu_major"] == 14 and jit["nvcc_host_gnu_supported"] is True, jit
