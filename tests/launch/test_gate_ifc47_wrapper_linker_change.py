"""ifc47 (the forty-seventh fact-check sample, population w, beside its drawn rows): a wrapper script in GCC's name that
execs one GCC driver of its own prefix is read for the link's ld (f1202fc4: its -B prefixes, the prefix's program
directories, then the PATH's ld). Two things in such a wrapper change which linker collect2 runs and were not read:
`-fuse-ld=gold|lld|bfd|mold` handed to the driver (collect2 then looks for ld.gold / ld.lld / ... instead of ld; GCC's
manual, Link Options: -fuse-ld=), and a PATH the wrapper sets before its exec (collect2 searches the PATH after the
driver's program directories: `export PATH=/opt/binutils/bin:$PATH` put binutils 2.30's ld ahead of /usr/bin/ld 2.42).
The probe read both as the PATH's ld 2.42, which finds a linker script's bare name in the script's own directory, so
`--enable-symm-mem` beside a CUDA 13.0 libcudart.so of `INPUT(libcudart.so.13.0.96)` was allowed where the link runs
binutils 2.30 (or no ld.gold at all). The same -fuse-ld= in CXX's own words (torch's ninja file runs `$cxx ... $ldflags`
with CXX as written) is read the same way."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import gcc_driver, gnu_ld, touch_exe

from stackcheck.probes.jit import gnu_ld_version
from stackcheck.readers.fsview import HostView

LIB = "/opt/gcc/lib/gcc/x86_64-linux-gnu/13"
ENV = {"PATH": "/usr/bin:/opt/gcc/bin", "CXX": "/opt/gcc/bin/g++"}


def _box(root: Path, wrapper: str) -> HostView:
    gnu_ld(root / "usr/bin/ld", "2.42", "(GNU Binutils for Ubuntu)")
    gnu_ld(root / "opt/binutils/bin/ld", "2.30", "(GNU Binutils)")
    for name in ("as", "cc1", "cc1plus", "collect2"):
        touch_exe(root / "opt/gcc/bin" / name)
    touch_exe(root / "opt/gcc/bin/g++", wrapper.encode())
    touch_exe(root / "opt/gcc/bin/g++-real", gcc_driver(13))
    touch_exe(root / LIB.lstrip("/") / "crtbeginS.o")
    return HostView(str(root))


@pytest.mark.parametrize(
    ("wrapper", "said"),
    [
        (f'#!/bin/sh\nexec /opt/gcc/bin/g++-real -B{LIB}/ -fuse-ld=gold "$@"\n', "-fuse-ld"),
        ('#!/bin/sh\nexec /opt/gcc/bin/g++-real -fuse-ld=lld "$@"\n', "-fuse-ld"),
        ('#!/bin/sh\nexport PATH=/opt/binutils/bin:$PATH\nexec /opt/gcc/bin/g++-real "$@"\n', "PATH"),
        ('#!/bin/sh\nPATH="/opt/binutils/bin:$PATH"\nexport PATH\nexec /opt/gcc/bin/g++-real "$@"\n', "PATH"),
    ],
    ids=["fuse-ld=gold", "fuse-ld=lld", "export PATH", "PATH then export"],
)
def test_a_wrapper_that_changes_the_linker_leaves_it_unread(tmp_path: Path, wrapper: str, said: str) -> None:
    # fails before: ((2, 42), '') - the PATH's /usr/bin/ld read where collect2 runs ld.gold / ld.lld / binutils 2.30
    version, why = gnu_ld_version(ENV, _box(tmp_path, wrapper))
    assert version is None and "a wrapper script" in why and said in why, why


@pytest.mark.parametrize(
    "wrapper",
    [
        '#!/bin/sh\nexec /opt/gcc/bin/g++-real "$@"\n',
        '#!/bin/sh\nexport LD_LIBRARY_PATH=/opt/gcc/lib64\nexec /opt/gcc/bin/g++-real -Wl,--no-as-needed "$@"\n',
    ],
    ids=["plain", "LD_LIBRARY_PATH and -Wl"],
)
def test_a_wrapper_that_leaves_the_linker_is_still_read(tmp_path: Path, wrapper: str) -> None:
    assert gnu_ld_version(ENV, _box(tmp_path, wrapper)) == ((2, 42), "")


def test_fuse_ld_in_cxx_itself_leaves_the_linker_unread(tmp_path: Path) -> None:
    view = _box(tmp_path, '#!/bin/sh\nexec /opt/gcc/bin/g++-real "$@"\n')
    version, why = gnu_ld_version({**ENV, "CXX": "/opt/gcc/bin/g++ -fuse-ld=gold"}, view)
    assert version is None and "-fuse-ld" in why, why
