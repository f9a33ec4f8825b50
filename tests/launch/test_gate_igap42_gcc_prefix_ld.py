"""igap42 (issue 16): a gcc installed under another prefix than /usr (RHEL's gcc-toolset-N under
/opt/rh/gcc-toolset-N/root/usr, a conda environment's x86_64-conda-linux-gnu-c++) hands collect2 its own program
directories, found from where its binary really is (gcc/gcc.cc process_command: get_relative_prefix from argv[0]):
PREFIX/libexec/gcc/TRIPLET/VERSION, PREFIX/lib/gcc/TRIPLET/VERSION and the tooldir PREFIX/TRIPLET/bin, all before
the PATH's ld. gnu_ld_version searched those under /usr only, so a binutils 2.35 ld in a toolset's tooldir beside a
2.40 /usr/bin/ld first on the PATH was read as 2.40 (a linker script's bare name followed: a false pass). Now the
link's compiler (CXX, else c++, on the server's PATH) is resolved and its prefix searched; a compiler that is not
GCC's driver (clang) leaves the version unread."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gate_cli import gnu_ld, touch_exe

from stackcheck.probes.jit import gnu_ld_version
from stackcheck.readers.fsview import HostView

_TOOLSET = "opt/rh/gcc-toolset-13/root/usr"
_CONDA = "opt/conda/envs/srv"


def _box(root: Path) -> HostView:
    gnu_ld(root / "usr/bin/ld", "2.40", "(GNU Binutils)")
    touch_exe(root / "usr/bin/g++-12")
    (root / "usr/lib/gcc/x86_64-linux-gnu/12").mkdir(parents=True)
    touch_exe(root / f"{_TOOLSET}/bin/g++")
    (root / f"{_TOOLSET}/libexec/gcc/x86_64-redhat-linux/13").mkdir(parents=True)
    (root / f"{_TOOLSET}/lib/gcc/x86_64-redhat-linux/13").mkdir(parents=True)
    return HostView(str(root))


def test_the_system_gcc_reads_the_paths_ld_as_before(tmp_path: Path) -> None:
    view = _box(tmp_path)
    assert gnu_ld_version({"PATH": "/usr/bin", "CXX": "g++-12"}, view) == ((2, 40), "")


@pytest.mark.parametrize(
    "where",
    [
        f"{_TOOLSET}/x86_64-redhat-linux/bin/ld",
        f"{_TOOLSET}/libexec/gcc/x86_64-redhat-linux/13/ld",
        f"{_TOOLSET}/lib/gcc/x86_64-redhat-linux/13/real-ld",
        f"{_TOOLSET}/libexec/gcc/x86_64-redhat-linux/collect-ld",
    ],
)
def test_a_linker_of_the_toolsets_own_is_not_read_as_the_paths(tmp_path: Path, where: str) -> None:
    view = _box(tmp_path)
    gnu_ld(tmp_path / where, "2.35.2", "(GNU Binutils)")
    # the toolset's gcc named by CXX, the PATH's first ld the system's 2.40: collect2 runs the toolset's own
    version, why = gnu_ld_version({"PATH": "/usr/bin", "CXX": f"/{_TOOLSET}/bin/g++"}, view)
    assert version is None and "/" + where.rsplit("/", 1)[0] in why, why
    # the same gcc reached as `c++` through a symbolic link on the PATH (its prefix is where the binary really is)
    (tmp_path / "usr/local").mkdir()
    os.symlink(f"/{_TOOLSET}/bin/g++", tmp_path / "usr/local/c++")  # (absolute inside the box)
    version, why = gnu_ld_version({"PATH": "/usr/local:/usr/bin"}, view)
    assert version is None and "/" + where.rsplit("/", 1)[0] in why, why


def test_a_toolset_without_a_linker_of_its_own_reads_the_paths(tmp_path: Path) -> None:
    view = _box(tmp_path)
    assert gnu_ld_version({"PATH": "/usr/bin", "CXX": f"/{_TOOLSET}/bin/g++"}, view) == ((2, 40), "")


def test_conda_c_plus_plus_with_binutils_in_its_tooldir(tmp_path: Path) -> None:
    view = _box(tmp_path)
    touch_exe(tmp_path / f"{_CONDA}/bin/x86_64-conda-linux-gnu-c++")
    (tmp_path / f"{_CONDA}/libexec/gcc/x86_64-conda-linux-gnu/13.3.0").mkdir(parents=True)
    gnu_ld(tmp_path / f"{_CONDA}/x86_64-conda-linux-gnu/bin/ld", "2.36.1", "(GNU Binutils)")
    env = {"PATH": "/usr/bin", "CXX": "ccache x86_64-conda-linux-gnu-c++"}
    assert gnu_ld_version(env, view) == ((2, 40), "")  # (not on the PATH: no link runs, nothing to refuse here)
    env["PATH"] = f"/{_CONDA}/bin:/usr/bin"
    version, why = gnu_ld_version(env, view)
    assert version is None and f"/{_CONDA}/x86_64-conda-linux-gnu/bin" in why, why


@pytest.mark.parametrize("name", ["clang++-18", "ccache-wrapped"])
def test_a_link_compiler_that_is_not_gccs_driver_is_unread(tmp_path: Path, name: str) -> None:
    view = _box(tmp_path)
    touch_exe(tmp_path / f"opt/llvm/bin/{name}")
    version, why = gnu_ld_version({"PATH": "/opt/llvm/bin:/usr/bin", "CXX": name}, view)
    assert version is None and "not GCC's driver" in why, why


def test_a_gcc_configured_with_ld_is_unread(tmp_path: Path) -> None:
    # collect2 runs a configured --with-ld=PATH before any search (DEFAULT_LINKER): the driver's configure line says it
    from elfwriter import build_so

    view = _box(tmp_path)
    line = b"\0../configure --prefix=/opt/rh/gcc-toolset-13/root/usr --with-ld=/opt/binutils-2.35/bin/ld\0"
    touch_exe(tmp_path / f"{_TOOLSET}/bin/g++", build_so(needed=["libc.so.6"]) + line)
    env = {"PATH": "/usr/bin", "CXX": f"/{_TOOLSET}/bin/g++"}
    # not there (a relocated install names its build machine's path): collect2 searches as without it
    assert gnu_ld_version(env, view) == ((2, 40), "")
    gnu_ld(tmp_path / "opt/binutils-2.35/bin/ld", "2.35.2", "(GNU Binutils)")
    assert gnu_ld_version(env, view) == ((2, 35), "")  # (there: it is the one the link runs, before any search)
    (tmp_path / "opt/binutils-2.35/bin/ld").write_bytes(b"\x7fELF")
    version, why = gnu_ld_version(env, view)
    assert version is None and "--with-ld=/opt/binutils-2.35/bin/ld" in why, why
    touch_exe(tmp_path / f"{_TOOLSET}/bin/g++", build_so(needed=["libc.so.6"]) + line.replace(b"--with-ld=", b"--x="))
    assert gnu_ld_version({"PATH": "/usr/bin", "CXX": f"/{_TOOLSET}/bin/g++"}, view) == ((2, 40), "")


def test_a_wrapper_script_in_gccs_name_is_unread(tmp_path: Path) -> None:
    view = _box(tmp_path)
    touch_exe(tmp_path / "opt/wrap/bin/g++", b'#!/bin/sh\nexec /opt/elsewhere/bin/g++ "$@"\n')
    version, why = gnu_ld_version({"PATH": "/opt/wrap/bin:/usr/bin"}, view)  # (CXX unset: c++, not on this PATH)
    assert version == (2, 40), why
    version, why = gnu_ld_version({"PATH": "/opt/wrap/bin:/usr/bin", "CXX": "g++"}, view)
    assert version is None and "a wrapper script" in why, why
