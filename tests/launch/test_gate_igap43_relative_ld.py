"""igap43 (issue 16 item 1): collect2 looks `ld` up on the PATH from the JIT build's directory (ninja runs the
link there: torch 2.8.0 cpp_extension.py:2595-2601, cwd=build_directory), so a relative PATH entry before /usr/bin is
a directory under it, not read. gnu_ld_version passed the entry over and read /usr/bin/ld's binutils 2.40, which then
decided that a linker script's bare name is looked for beside the script (the 2.37+ order): a version the link may
not have."""

from __future__ import annotations

from pathlib import Path

from gate_cli import gnu_ld, touch_exe

from stackcheck.probes.jit import gnu_ld_version
from stackcheck.readers.fsview import HostView


def _box(root: Path) -> HostView:
    gnu_ld(root / "usr/bin/ld", "2.40", "(GNU Binutils)")
    (root / "usr/lib/gcc/x86_64-linux-gnu/12").mkdir(parents=True)
    return HostView(str(root))


def test_a_relative_entry_before_the_paths_ld_leaves_it_unread(tmp_path: Path) -> None:
    view = _box(tmp_path)
    touch_exe(tmp_path / "usr/bin/g++-12")
    env = {"PATH": "/usr/bin:bin", "CXX": "/usr/bin/g++-12"}
    assert gnu_ld_version(env, view) == ((2, 40), "")  # (the entry after the hit: as before)
    version, why = gnu_ld_version({**env, "PATH": "bin:/usr/bin"}, view)
    assert version is None and "'bin'" in why and "relative" in why
    version, why = gnu_ld_version({**env, "PATH": ":/usr/bin"}, view)
    assert version is None and "empty entry" in why


def test_a_relative_entry_before_the_links_compiler_leaves_its_linker_unread(tmp_path: Path) -> None:
    view = _box(tmp_path)
    touch_exe(tmp_path / "usr/bin/g++")
    version, why = gnu_ld_version({"PATH": "tools:/usr/bin", "CXX": "g++"}, view)
    assert version is None and "the link's compiler" in why and "'tools'" in why
