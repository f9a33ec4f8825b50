"""igap31 (issue 16, class 2: the name of a host compiler that lies): the jit probe took a gcc's major from its resolved
name (gcc-N, x86_64-linux-gnu-gcc-N) and a clang's from clang-N first, so a gcc-11 that is another gcc's driver (a copy
or a hard link under that name), a script named gcc-11 that runs another gcc, an ELF that is no GCC driver at all (a
ccache binary copied into gcc's name) and a clang-19 that is clang 20's binary were judged by the name: beside a
toolkit whose host_config.h takes that name's major, a false pass.

The probe now reads the driver itself, without running it: GCC's version_string in its .rodata (beside the strings only
GCC's driver carries), and a clang's DT_NEEDED libclang-cpp.so.N / libLLVM.so.N beside its other readings; where the
name and the binary disagree, or the program is no GCC driver, or a script's name is all there is, the major is unknown.
The gcc tests copy this machine's real gcc driver (its major taken from `gcc -dumpversion`) into a temporary box; the
clang binaries are ELF files written by tests/elfwriter.py with the DT_NEEDED names Debian's clang-19 has."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from elfwriter import write_so
from gate_cli import CUDA_128_HOME, jit_host_gate, judged_rules, real_gcc, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")
TRIPLET = "x86_64-linux-gnu"
PATH = {"PATH": "/usr/local/bin:/usr/bin"}


def _header(most: int) -> str:
    """host_config.h's GNU and clang tests (the shape of CUDA 12.8's, written here) taking gcc `most` and clang 19."""
    return (
        f"#if defined(__GNUC__)\n#if __GNUC__ > {most}\n#error -- unsupported GNU version! later than {most}\n#endif\n"
        "#if defined(__clang__) && !defined(__APPLE__)\n"
        "#if (__clang_major__ >= 20) || (__clang_major__ < 3) || ((__clang_major__ == 3) &&  (__clang_minor__ < 3))\n"
        "#error -- unsupported clang version! clang version must be less than 20 and greater than 3.2 .\n#endif\n"
        "#endif\n"
    )


def _box(root: Path, most: int, named: int, driver: Path | None) -> HostView:
    """A CUDA toolkit taking gcc `most` at most; /usr/bin/gcc -> gcc-`named` -> x86_64-linux-gnu-gcc-`named`, which
    is a copy of `driver` (or a stub of an ELF's first bytes where None); cc1 and cc1plus in the program directory of
    major `named`."""
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    (root / HOME / "include/crt/host_config.h").write_text(_header(most))
    program = root / f"usr/bin/{TRIPLET}-gcc-{named}"
    if driver is None:
        touch_exe(program)
    else:
        program.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(driver, program)
    (root / f"usr/bin/gcc-{named}").symlink_to(program.name)
    (root / "usr/bin/gcc").symlink_to(f"gcc-{named}")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/{TRIPLET}/{named}/{name}")
    touch_exe(root / "usr/bin/c++")
    return HostView(str(root))


# ---- gcc: the driver's own version string ----------------------------------------------------------------------


def test_a_gcc_named_for_another_major_is_not_judged_by_its_name(tmp_path: Path) -> None:
    # this machine's gcc M, copied as gcc-(M-1) beside a toolkit that takes M-1: read as M-1 (ok) before
    real, major = real_gcc()
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path, major - 1, major - 1, real))
    assert jit["nvcc_host_found"] is True and "nvcc_host_gnu_major" not in jit, jit
    assert jit["nvcc_host_gnu_supported"] is None, jit
    reason = jit["nvcc_host_gnu_supported_reason"]
    assert f"named gcc {major - 1}" in reason and f"GCC {major}'s version string" in reason, reason
    assert f"takes gcc {major - 1} at most" in reason, reason


def test_a_gcc_under_its_own_name_is_read_from_its_binary(tmp_path: Path) -> None:
    real, major = real_gcc()
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path / "old", major - 1, major, real))
    assert jit["nvcc_host_gnu_major"] == major and jit["nvcc_host_gnu_supported"] is False, jit
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path / "new", major, major, real))
    assert jit["nvcc_host_gnu_major"] == major and jit["nvcc_host_gnu_supported"] is True, jit


def test_a_gcc_driver_copied_into_a_prefix_is_read_from_its_binary(tmp_path: Path) -> None:
    # a gcc M driver in /opt/gcc beside a lib/gcc/TRIPLET/(M-1) with no compilers: unknown before (irev60: its
    # version was not read); it runs its own version's cc1plus, and its binary says which
    real, major = real_gcc()
    view = _box(tmp_path, major - 1, major - 1, None)
    (tmp_path / "opt/gcc/bin").mkdir(parents=True)
    shutil.copy2(real, tmp_path / "opt/gcc/bin/gcc")
    touch_exe(tmp_path / f"opt/gcc/lib/gcc/{TRIPLET}/{major - 1}/crtbegin.o")
    # (ifc43: its own cc1plus, of version M, in the prefix: a driver without one runs no compiler and is not found)
    touch_exe(tmp_path / f"opt/gcc/libexec/gcc/{TRIPLET}/{major}/cc1plus")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/opt/gcc/bin/gcc"}, view)
    assert jit["nvcc_host_gnu_major"] == major and jit["nvcc_host_gnu_supported"] is False, jit


def test_a_script_named_gcc_n_is_not_judged_by_its_name(tmp_path: Path) -> None:
    # /usr/local/bin/gcc-(M-1), a script that runs /usr/bin/gcc-M: its name (a supported major) was read
    _, major = real_gcc()
    view = _box(tmp_path, major - 1, major - 1, None)
    touch_exe(tmp_path / f"usr/local/bin/gcc-{major - 1}", f'#!/bin/sh\nexec /usr/bin/gcc-{major} "$@"\n'.encode())
    (tmp_path / "usr/local/bin/gcc").symlink_to(f"gcc-{major - 1}")
    jit = probe_jit(toolkit_128_facts(), PATH, view)
    assert jit["nvcc_host"] == "/usr/local/bin/gcc" and jit["nvcc_host_gnu_supported"] is None, jit
    assert "a script (a wrapper)" in jit["nvcc_host_gnu_supported_reason"], jit
    # a script in /usr/bin, beside that major's compilers, that runs a gcc elsewhere: not read by those either
    script = b'#!/bin/sh\nexec /opt/gcc15/bin/gcc "$@"\n'
    (tmp_path / f"usr/bin/{TRIPLET}-gcc-{major - 1}").write_bytes(script)
    jit = probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin"}, view)
    assert jit["nvcc_host_gnu_supported"] is None and "/opt/gcc15/bin/gcc" in jit["nvcc_host_gnu_supported_reason"]


def test_an_elf_that_is_no_gcc_driver_in_gccs_name_is_unknown(tmp_path: Path) -> None:
    _, major = real_gcc()
    other = Path(shutil.which("true") or "/bin/true").resolve()
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path, major - 1, major - 1, other))
    assert jit["nvcc_host_gnu_supported"] is None, jit
    assert "without GCC's driver strings" in jit["nvcc_host_gnu_supported_reason"], jit


def test_cc_naming_a_gcc_that_lies_is_not_judged_by_its_name(tmp_path: Path) -> None:
    real, major = real_gcc()
    view = _box(tmp_path, major - 1, major - 1, real)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": f"gcc-{major - 1}"}, view)
    assert jit["cc_host_found"] is True and jit["cc_host_gnu_supported"] is None, jit
    assert f"GCC {major}'s version string" in jit["cc_host_gnu_supported_reason"], jit


def _gcc_rules(doc: dict[str, Any]) -> dict[str, str]:
    return judged_rules(doc, lambda rule: rule.endswith("host-version"))


def test_the_gate_does_not_allow_a_gcc_whose_name_lies(tmp_path: Path) -> None:
    real, major = real_gcc()
    view = _box(tmp_path / "box", major - 1, major - 1, real)
    doc = jit_host_gate(tmp_path / "a", probe_jit(toolkit_128_facts(), {**PATH, "CC": f"gcc-{major - 1}"}, view))
    assert _gcc_rules(doc).get("flashinfer-jit-cc-host-version") == "unknown", (doc.get("reasons"), doc["warnings"])
    doc = jit_host_gate(tmp_path / "b", probe_jit(toolkit_128_facts(), PATH, view), "0.5.12")
    assert _gcc_rules(doc).get("sglang-jit-nvcc-host-version") == "unknown", (doc.get("reasons"), doc["warnings"])
    # the same binary under its own name, beside a toolkit that takes it: allowed
    good = _box(tmp_path / "good", major, major, real)
    doc = jit_host_gate(tmp_path / "c", probe_jit(toolkit_128_facts(), {**PATH, "CC": f"gcc-{major}"}, good))
    assert doc["decision"] == "allow" and _gcc_rules(doc) == {}, doc.get("warnings")


# ---- clang: the LLVM libraries its binary needs ----------------------------------------------------------------


def _clang(path: Path, llvm: int) -> None:
    """An ELF clang binary needing LLVM `llvm`'s libraries, as Debian's clang-19 does (libclang-cpp.so.19.1,
    libLLVM.so.19.1)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_so(path, needed=[f"libclang-cpp.so.{llvm}.1", f"libLLVM.so.{llvm}.1", "libc.so.6"])
    path.chmod(0o755)


def _clang_box(root: Path) -> HostView:
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    (root / HOME / "include/crt/host_config.h").write_text(_header(14))
    touch_exe(root / "usr/bin/gcc-14")
    (root / "usr/bin/gcc").symlink_to("gcc-14")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/{TRIPLET}/14/{name}")
    touch_exe(root / "usr/bin/c++")
    _clang(root / "usr/lib/llvm-19/bin/clang", 19)
    (root / "usr/bin/clang-19").symlink_to("../lib/llvm-19/bin/clang")
    _clang(root / "usr/local/bin/clang-19", 20)  # clang 20's binary under clang-19's name
    _clang(root / "opt/llvm/bin/clang", 20)
    (root / "opt/llvm/lib/clang/20/include").mkdir(parents=True)
    _clang(root / "opt/mixed/bin/clang", 20)  # clang 20's binary beside a resource directory of 19
    (root / "opt/mixed/lib/clang/19/include").mkdir(parents=True)
    touch_exe(root / "opt/wrap/bin/clang-19", b'#!/bin/sh\nexec /opt/llvm/bin/clang "$@"\n')
    return HostView(str(root))


@pytest.mark.parametrize(
    ("cc", "major", "supported"), [("/usr/bin/clang-19", 19, True), ("/opt/llvm/bin/clang", 20, False)]
)
def test_a_clang_binary_is_read_by_the_libraries_it_needs(tmp_path: Path, cc: str, major: int, supported: bool) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _clang_box(tmp_path))
    assert jit["cc_host_clang_major"] == major and jit["cc_host_clang_supported"] is supported, jit


@pytest.mark.parametrize(
    ("cc", "said"),
    [
        ("/usr/local/bin/clang-19", "19 by its name clang-19; 20 by its DT_NEEDED libclang-cpp.so.20.1"),
        ("/opt/mixed/bin/clang", "20 by its DT_NEEDED libclang-cpp.so.20.1, its DT_NEEDED libLLVM.so.20.1"),
        ("/opt/wrap/bin/clang-19", "no ELF program (a wrapper script)"),
    ],
)
def test_a_clang_whose_readings_disagree_is_unknown(tmp_path: Path, cc: str, said: str) -> None:
    # each was read as 19 (clang 19 at most: ok) before, by its name or its resource directory
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": cc}, _clang_box(tmp_path))
    assert jit["cc_host_clang_supported"] is None and "cc_host_clang_major" not in jit, jit
    assert said in jit["cc_host_clang_supported_reason"], jit


def test_the_gate_does_not_allow_a_clang_whose_name_lies(tmp_path: Path) -> None:
    box = _clang_box(tmp_path / "box")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": "/usr/local/bin/clang-19"}, box)
    doc = jit_host_gate(tmp_path / "a", jit, "0.5.12")
    rules = judged_rules(doc, lambda rule: rule.endswith("-clang"))
    assert rules.get("sglang-jit-nvcc-host-clang") == "unknown", (doc.get("reasons"), doc.get("warnings"))


# ---- clang: the C++ standard SGLang's JIT asks for -------------------------------------------------------------


@pytest.mark.parametrize(("clang", "fails"), [("clang-9", True), ("clang-10", False), ("clang-19", False)])
def test_a_clang_host_without_cxx20_is_refused_for_sglangs_jit(tmp_path: Path, clang: str, fails: bool) -> None:
    # SGLang 0.5.9+ compile their JIT kernels with -std=c++20, which clang 9 and earlier do not take; the toolkit's
    # host_config.h admits them (clang 3.3 up to 19), so a clang 9 NVCC_CCBIN names was allowed
    box = _clang_box(tmp_path / "box")
    if not (tmp_path / f"box/usr/bin/{clang}").exists():  # (clang-19: the box's Debian clang, read by its libraries)
        _clang(tmp_path / f"box/usr/bin/{clang}", int(clang.split("-")[1]))  # (igap34: a 4-byte stub is not read)
    jit = probe_jit(toolkit_128_facts(), {"PATH": "/usr/bin", "NVCC_CCBIN": clang}, box)
    assert jit["nvcc_host_clang_major"] == int(clang.split("-")[1]) and jit["nvcc_host_clang_supported"] is True, jit
    doc = jit_host_gate(tmp_path / "g", jit, "0.5.12")
    rules = judged_rules(doc, lambda rule: rule == "sglang-jit-nvcc-host-clang-cxx20")
    assert rules == ({"sglang-jit-nvcc-host-clang-cxx20": "fail"} if fails else {}), doc.get("reasons")
    if fails:
        rule = "sglang-jit-nvcc-host-clang-cxx20"
        failed = [x for r in doc["reasons"] for x in r["reasons"] if x.get("rule") == rule]
        assert failed[0]["observed"] == 9 and "10" in failed[0]["required"] and failed[0]["source"], failed
