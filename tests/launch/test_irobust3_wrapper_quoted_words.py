"""irobust3: a gcc wrapper script whose exec quotes a word holding a blank (`exec g++-real "-B/opt/gcc/my dir/"
"$@"`), as the lent H100's wrapper shape (tests/launch/test_gate_h100_wrapper_link_ld.py) with one -B directory more.

The wrapper reader (probes/jit.py _script_programs) cut each command at blanks and then stripped the quotes off each
piece, so the one word `-B/opt/gcc/my dir/` the shell passes was read as `-B/opt/gcc/my` (a name prefix, no directory)
and `dir/`: the linker under /opt/gcc/my dir/, which collect2 runs before the PATH's (gcc.cc: -B adds to
exec_prefixes, handed to collect2 first in COMPILER_PATH), was never looked at, and gnu_ld_version answered with the
PATH's binutils 2.42 where the link runs 2.30 (a false pass for igap39's linker-script rules). Now a command holding a
quote or a backslash is split into words as the shell splits them (shlex, POSIX mode), and one with a quote left open
is not read."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import gcc_driver, gnu_ld, touch_exe

from stackcheck.probes.jit import _script_programs, gnu_ld_version
from stackcheck.readers.fsview import HostView

LIB = "/opt/gcc/lib/gcc/x86_64-linux-gnu/13"
ENV = {"PATH": "/usr/bin:/opt/gcc/bin", "CXX": "/opt/gcc/bin/g++"}


def _box(root: Path, wrapper: str) -> HostView:
    gnu_ld(root / "usr/bin/ld", "2.42", "(GNU Binutils for Ubuntu)")
    for name in ("as", "cc1", "cc1plus", "collect2"):
        touch_exe(root / "opt/gcc/bin" / name)
    touch_exe(root / "opt/gcc/bin/g++", wrapper.encode())
    touch_exe(root / "opt/gcc/bin/g++-real", gcc_driver(13))
    touch_exe(root / LIB.lstrip("/") / "crtbeginS.o")
    return HostView(str(root))


@pytest.mark.parametrize("word", ['"-B/opt/gcc/my dir/"', "'-B/opt/gcc/my dir/'", "-B/opt/gcc/my\\ dir/"])
def test_a_quoted_b_directory_is_read_whole(tmp_path: Path, word: str) -> None:
    view = _box(tmp_path, f'#!/bin/sh\nexec /opt/gcc/bin/g++-real -B/opt/gcc/bin/ {word} "$@"\n')
    assert gnu_ld_version(ENV, view) == ((2, 42), "")  # nothing there yet: the PATH's
    gnu_ld(tmp_path / "opt/gcc/my dir/ld", "2.30", "(GNU Binutils)")
    version, why = gnu_ld_version(ENV, view)  # fails before: ((2, 42), "")
    assert version is None and "/opt/gcc/my dir holds ld" in why, why


def test_a_quote_left_open_is_not_read() -> None:
    targets, other = _script_programs('#!/bin/sh\nexec /opt/gcc/bin/g++-real "-B/opt/gcc/my dir/ "$@"\n')
    assert other is not None and "-B" in other, (targets, other)


def test_a_quoted_program_is_read_as_the_shell_reads_it() -> None:
    # fails before: the exec's program was read as /opt/gcc/bin/g++ (its first piece), the wrapper itself
    targets, other = _script_programs('#!/bin/sh\nexec "/opt/gcc/bin/g++ real" "$@"\n')
    assert (targets, other) == (["/opt/gcc/bin/g++ real"], None)
