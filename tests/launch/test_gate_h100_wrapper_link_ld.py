"""The lent H100 (2026-12-06) sets CXX=/opt/gcc/bin/g++, a wrapper script (`exec /opt/gcc/bin/g++-real -B/opt/gcc/bin/
-B/opt/gcc/lib/gcc/x86_64-linux-gnu/13/ ... "$@"`, written here in that shape): gnu_ld_version gave up on any
wrapper ("the gcc it runs is not read"), where the real link (`$CXX -x c++ - -Wl,--version`, run there by
bench/h200_readings_truth.py) ran /usr/bin/ld, binutils 2.42. Now a wrapper that execs one GCC driver of its own
prefix is read as that driver, its -B prefixes searched for a linker before the prefix's program directories (the
driver hands collect2 its -B prefixes first in COMPILER_PATH; `-v` showed exactly those two there), then the PATH's."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import gcc_driver, gnu_ld, touch_exe

from stackcheck.probes.jit import gnu_ld_version
from stackcheck.readers.fsview import HostView

LIB = "/opt/gcc/lib/gcc/x86_64-linux-gnu/13"
WRAPPER = f'#!/bin/sh\nexec /opt/gcc/bin/g++-real -B/opt/gcc/bin/ -B{LIB}/ -isystem /usr/include/c++/13 "$@"\n'
ENV = {"PATH": "/usr/bin:/opt/gcc/bin", "CXX": "/opt/gcc/bin/g++"}


def _box(root: Path, wrapper: str = WRAPPER, real: bytes | None = None) -> HostView:
    gnu_ld(root / "usr/bin/ld", "2.42", "(GNU Binutils for Ubuntu)")
    for name in ("as", "cc1", "cc1plus", "collect2"):
        touch_exe(root / "opt/gcc/bin" / name)
    touch_exe(root / "opt/gcc/bin/g++", wrapper.encode())
    touch_exe(root / "opt/gcc/bin/g++-real", gcc_driver(13) if real is None else real)
    touch_exe(root / LIB.lstrip("/") / "crtbeginS.o")
    return HostView(str(root))


def test_the_h100_wrapper_links_with_the_paths_ld(tmp_path: Path) -> None:
    assert gnu_ld_version(ENV, _box(tmp_path)) == ((2, 42), "")


@pytest.mark.parametrize("where", ["opt/gcc/bin/ld", f"{LIB.lstrip('/')}/real-ld", f"{LIB.lstrip('/')}/collect-ld"])
def test_a_linker_under_a_b_prefix_is_not_taken_for_the_paths(tmp_path: Path, where: str) -> None:
    view = _box(tmp_path)
    gnu_ld(tmp_path / where, "2.35.2", "(GNU Binutils)")
    version, why = gnu_ld_version(ENV, view)
    assert version is None and "/" + where.rsplit("/", 1)[0] in why and "before the PATH's ld" in why, why


def test_a_b_prefix_that_is_no_directory_prefixes_the_linkers_name(tmp_path: Path) -> None:
    view = _box(tmp_path, WRAPPER.replace("-B/opt/gcc/bin/ ", "-B/opt/gcc/bin/x86_64- "))
    assert gnu_ld_version(ENV, view) == ((2, 42), "")
    gnu_ld(tmp_path / "opt/gcc/bin/x86_64-ld", "2.30", "(GNU Binutils)")
    version, why = gnu_ld_version(ENV, view)
    assert version is None and "/opt/gcc/bin/x86_64-ld is" in why, why


@pytest.mark.parametrize(
    ("wrapper", "real", "said"),
    [
        ('#!/bin/sh\nexec /usr/bin/g++-14 "$@"\n', None, "not only programs of /opt/gcc"),
        ('#!/bin/sh\ng++ "$@"\n', None, "not only programs of /opt/gcc"),
        ('#!/bin/sh\n/usr/bin/g++-14 "$@"\nexec /opt/gcc/bin/g++-real "$@"\n', None, "not only programs of /opt/gcc"),
        (WRAPPER, b'#!/bin/sh\nexec /usr/bin/g++-14 "$@"\n', "not only programs of /opt/gcc"),
        (WRAPPER, b"\x7fELF", "not read as GCC's driver"),
        ("#!/usr/bin/python3\nimport os\n", None, "is not read"),
    ],
    ids=["exec outside", "a PATH g++", "a program run before", "a script execed", "no driver", "no shell"],
)
def test_a_wrapper_not_read_leaves_the_linker_unread(
    tmp_path: Path, wrapper: str, real: bytes | None, said: str
) -> None:
    version, why = gnu_ld_version(ENV, _box(tmp_path, wrapper, real))
    assert version is None and "a wrapper script" in why and said in why, why


def test_the_driver_it_execs_configured_with_ld_runs_that(tmp_path: Path) -> None:
    configured = gcc_driver(13) + b"\0../configure --prefix=/opt/gcc --with-ld=/opt/binutils/bin/ld\0"
    view = _box(tmp_path, real=configured)
    gnu_ld(tmp_path / "opt/binutils/bin/ld", "2.36", "(GNU Binutils)")
    assert gnu_ld_version(ENV, view) == ((2, 36), "")
