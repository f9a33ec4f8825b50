"""irev65 (a review of igap39's gnu_ld_version): gcc's collect2 looks for the linker in the compiler path before the
PATH (gcc/collect2.cc main: prefix_from_env ("COMPILER_PATH", &cpath), then find_a_file (&cpath, "ld") before
find_a_file (&path, ...)), and the gcc driver hands collect2 that path from its own program directories: the
`COMPILER_PATH` and `GCC_EXEC_PREFIX` of its environment, `/usr/lib/gcc/TRIPLET/` (no version) and the tooldir
`/usr/TRIPLET/bin/` (Debian 12's gcc 12 `-print-search-dirs` lists both). Run on this Debian 12 box: with
COMPILER_PATH=DIR naming a DIR/ld script that fails, `gcc t.c` ran DIR/ld (collect2: error: ld returned 1 exit status)
and `gcc -print-prog-name=ld` printed DIR/ld. The probe read only the PATH's ld and /usr/lib/gcc/TRIPLET/VERSION/, so a
binutils 2.35 ld in one of those places beside a 2.40 /usr/bin/ld was read as 2.40 (a bare linker-script name
followed: a false pass). Now such a linker, or a COMPILER_PATH / GCC_EXEC_PREFIX not followed, leaves it unread."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import gnu_ld, touch_exe

from stackcheck.probes.jit import gnu_ld_version
from stackcheck.readers.fsview import HostView


def _box(root: Path) -> HostView:
    gnu_ld(root / "usr/bin/ld", "2.40", "(GNU Binutils)")
    (root / "usr/lib/gcc/x86_64-linux-gnu/12").mkdir(parents=True)
    return HostView(str(root))


def test_the_paths_ld_alone_is_read_as_before(tmp_path: Path) -> None:
    assert gnu_ld_version({"PATH": "/usr/bin"}, _box(tmp_path)) == ((2, 40), "")


@pytest.mark.parametrize("where", ["usr/x86_64-linux-gnu/bin/ld", "usr/lib/gcc/x86_64-linux-gnu/ld",
                                   "usr/libexec/gcc/x86_64-linux-gnu/collect-ld"])  # fmt: skip
def test_a_linker_in_the_tooldir_or_the_machine_directory_is_not_read(tmp_path: Path, where: str) -> None:
    view = _box(tmp_path)
    gnu_ld(tmp_path / where, "2.35.2", "(GNU Binutils)")
    version, why = gnu_ld_version({"PATH": "/usr/bin"}, view)
    assert version is None and "/" + where.rsplit("/", 1)[0] in why, why


def test_a_compiler_path_holding_a_linker_is_not_read(tmp_path: Path) -> None:
    view = _box(tmp_path)
    gnu_ld(tmp_path / "opt/binutils-2.35/bin/ld", "2.35.2", "(GNU Binutils)")
    env = {"PATH": "/usr/bin", "COMPILER_PATH": "/nowhere:/opt/binutils-2.35/bin"}
    version, why = gnu_ld_version(env, view)
    assert version is None and "COMPILER_PATH" in why, why


def test_a_compiler_path_without_a_linker_changes_nothing(tmp_path: Path) -> None:
    view = _box(tmp_path)
    touch_exe(tmp_path / "opt/tools/bin/as")
    assert gnu_ld_version({"PATH": "/usr/bin", "COMPILER_PATH": "/opt/tools/bin"}, view) == ((2, 40), "")


def test_gcc_exec_prefix_is_not_followed(tmp_path: Path) -> None:
    version, why = gnu_ld_version({"PATH": "/usr/bin", "GCC_EXEC_PREFIX": "/opt/gcc/lib/gcc/"}, _box(tmp_path))
    assert version is None and "GCC_EXEC_PREFIX" in why, why
