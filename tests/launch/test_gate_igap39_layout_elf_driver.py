"""igap39 (issue 16): _layout_major, the reading of a gcc's major from its prefix's one GCC version directory, had a
branch for a driver that is an ELF binary (irev60: a gcc 15 driver copied beside a lib/gcc/TRIPLET/13 was read as 13).
No ELF reaches it: _gcc_driver_major reads every ELF in gcc's name first and gives either its major (then the prefix's
cc1plus of that major decides: _driver_without_compiler) or why it is not read, and the layout is asked only where
neither came back. The branch was removed; these tests pin what every ELF shape in such a prefix gets (the same
before and after): never the prefix's major. The ELF files are a minimal one written here in GCC's driver's string
shape, a tiny C program compiled with this machine's gcc, and an ELF's first bytes."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from gate_cli import CUDA_128_HOME, gcc_driver, toolkit_128_facts, touch_exe

from stackcheck.probes import jit as jit_probe
from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")
TRIPLET = "x86_64-linux-gnu"
PATH = {"PATH": "/opt/gcc/bin:/usr/bin"}


def _box(root: Path, driver: bytes) -> HostView:
    """A CUDA 12.8 home taking gcc 14; /opt/gcc/bin/gcc holding `driver`, its prefix's one version directory
    lib/gcc/TRIPLET/13 of start files only (no cc1, no cc1plus: the layout would say 13)."""
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    header = "#if defined(__GNUC__)\n#if __GNUC__ > 14\n#error -- unsupported GNU version!\n#endif\n#endif\n"
    (root / HOME / "include/crt/host_config.h").write_text(header)
    touch_exe(root / "opt/gcc/bin/gcc", driver)
    (root / f"opt/gcc/lib/gcc/{TRIPLET}/13").mkdir(parents=True)
    (root / f"opt/gcc/lib/gcc/{TRIPLET}/13/crtbegin.o").write_bytes(b"\x7fELF")
    return HostView(str(root))


def _tiny_program(tmp_path: Path) -> bytes:
    """A real ELF program without GCC's driver strings: a one-line C program built with this machine's gcc."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("no gcc on this machine to build a real ELF program")
    source = tmp_path / "tiny.c"
    source.write_text("int main(void) { return 0; }\n")
    subprocess.run([gcc, "-o", str(tmp_path / "tiny"), str(source)], check=True, timeout=60)
    return (tmp_path / "tiny").read_bytes()


@pytest.mark.parametrize(("major", "found"), [(13, False), (15, False)])
def test_a_gcc_driver_binary_is_judged_by_its_own_major_never_the_prefixs(
    tmp_path: Path, major: int, found: bool
) -> None:
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path, gcc_driver(major)))
    assert jit["nvcc_host_found"] is found and "nvcc_host_gnu_major" not in jit, jit
    assert f"no cc1plus of version {major}" in jit["nvcc_host_reason"], jit


@pytest.mark.parametrize("shape", ["program", "stub"])
def test_an_elf_that_is_no_driver_is_unknown_and_never_read_by_layout(tmp_path: Path, shape: str) -> None:
    body = _tiny_program(tmp_path) if shape == "program" else b"\x7fELF"
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path / "box", body))
    assert "nvcc_host_gnu_major" not in jit and jit["nvcc_host_gnu_supported"] is None, jit
    said = "without GCC's driver strings" if shape == "program" else "not read as an ELF program"
    assert said in jit["nvcc_host_gnu_supported_reason"], jit
    assert "version director" not in jit["nvcc_host_gnu_supported_reason"], jit


def test_the_layout_reading_gives_no_elf_a_major(tmp_path: Path) -> None:
    # asked directly (no probe path does so), an ELF in the prefix is still no script it reads: no major
    for name, body in (("driver", gcc_driver(13)), ("program", _tiny_program(tmp_path))):
        view = _box(tmp_path / name, body)
        major, why = jit_probe._layout_major(view, "/opt/gcc/bin/gcc")
        assert major is None and why, (name, why)
