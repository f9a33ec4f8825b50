"""imend3: a -B PREFIX that a GCC wrapper hands its driver is searched with the machine suffixes too: gcc.cc adds it
with add_prefix (..., PREFIX_PRIORITY_B_OPT, 0, 0), and for_each_path tries PREFIX/TRIPLET/VERSION/, then the
multiarch PREFIX/TRIPLET/ (Debian's and Ubuntu's builds), then PREFIX; COMPILER_PATH (collect2's linker search) is
that list, directories only. The jit probe's link-driver check looked in PREFIX alone: a linker in
PREFIX/x86_64-linux-gnu/13/ was passed over and the PATH's ld read for the link's (a false read). Now a linker in
any of them makes the link's ld unknown, never the PATH's; the wrapper shape is the lent H100's (see
test_gate_h100_wrapper_link_ld.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import gnu_ld, touch_exe
from launch.test_gate_h100_wrapper_link_ld import ENV, LIB, _box

from stackcheck.probes.jit import gnu_ld_version


@pytest.mark.parametrize(
    "where",
    [
        "opt/gcc/bin/x86_64-linux-gnu/13/ld",  # PREFIX/TRIPLET/VERSION/
        "opt/gcc/bin/x86_64-linux-gnu/ld",  # PREFIX/MULTIARCH/
        f"{LIB.lstrip('/')}/x86_64-linux-gnu/13/real-ld",
        f"{LIB.lstrip('/')}/x86_64-pc-linux-gnu/collect-ld",
    ],
)
def test_a_linker_under_a_b_prefixs_machine_directories_is_not_taken_for_the_paths(tmp_path: Path, where: str) -> None:
    view = _box(tmp_path)
    assert gnu_ld_version(ENV, view) == ((2, 42), "")
    gnu_ld(tmp_path / where, "2.35.2", "(GNU Binutils)")
    version, why = gnu_ld_version(ENV, view)  # before: ((2, 42), ''), the PATH's ld
    assert version is None and "/" + where.rsplit("/", 1)[0] in why and "before the PATH's ld" in why, why


def test_a_file_in_triplet_form_or_another_program_is_no_machine_directory(tmp_path: Path) -> None:
    view = _box(tmp_path)
    touch_exe(tmp_path / "opt/gcc/bin/x86_64-linux-gnu-ld")  # a program named like a triplet: no directory
    touch_exe(tmp_path / "opt/gcc/bin/x86_64-linux-gnu-gcc")
    (tmp_path / "opt/gcc/bin/include").mkdir()
    touch_exe(tmp_path / "opt/gcc/bin/include/ld")  # not triplet-named: the driver's suffixes never name it
    assert gnu_ld_version(ENV, view) == ((2, 42), "")
