"""irev63: a prefix gcc's wrapper script that execs a program of the prefix which is itself a script.

igap28 reads CC=/opt/gcc/bin/gcc, a wrapper that execs /opt/gcc/bin/gcc-real, by the prefix's one GCC version
directory (13), where every program it execs lies in the prefix. That program was only asked to be a file there: a
gcc-real that is a script running `exec /usr/bin/gcc-15 "$@"` (or `gcc "$@"` from the PATH) made the wrapper read as
13 and supported under a CUDA 12.8 toolkit (gcc 14 at most) while gcc 15 compiled: a false pass. A program it execs is
now read only as an ELF program (the lent H100's gcc-real is GCC 13's driver); a script there is not read (unknown).
Boxes are written by hand; the probe and the gate are the real ones."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from gate_cli import CUDA_128_HOME, jit_host_gate, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

if TYPE_CHECKING:
    from pathlib import Path

ENV = {"PATH": "/usr/bin", "CC": "/opt/gcc/bin/gcc"}
HEADER = "#if defined(__GNUC__)\n#if __GNUC__ > 14\n#error -- unsupported GNU version! later than 14\n#endif\n"
LIB = "/opt/gcc/lib/gcc/x86_64-linux-gnu/13"
#: the lent H100's wrapper shape (written here): exec of the prefix's gcc-real with -B directories in the prefix
WRAPPER = f'#!/bin/sh\nexec /opt/gcc/bin/gcc-real -B/opt/gcc/bin/ -B{LIB}/ "$@"\n'.encode()


def _chain(root: Path, inner: bytes) -> HostView:
    """A CUDA 12.8 toolkit (gcc 14 at most), gcc-14, gcc-15 and c++ in /usr/bin, and /opt/gcc: bin/gcc (WRAPPER),
    bin/cc1 and bin/cc1plus, lib/gcc/TRIPLE/13 with a start file, and bin/gcc-real written as `inner`."""
    home = root / CUDA_128_HOME.lstrip("/")
    touch_exe(home / "bin/nvcc")
    (home / "include/crt").mkdir(parents=True)
    (home / "include/crt/host_config.h").write_text(HEADER)
    for name in ("usr/bin/gcc-14", "usr/bin/gcc-15", "usr/bin/c++", "opt/gcc/bin/cc1", "opt/gcc/bin/cc1plus"):
        touch_exe(root / name)
    (root / "usr/bin/gcc").symlink_to("gcc-14")
    touch_exe(root / "opt/gcc/bin/gcc", WRAPPER)
    touch_exe(root / "opt/gcc/bin/gcc-real", inner)
    touch_exe(root / LIB.lstrip("/") / "crtbegin.o")
    return HostView(str(root))


def _rule(doc: dict[str, Any], rule: str) -> list[str]:
    """The results of `rule` among the gate's reasons and warnings."""
    every = [*(doc.get("reasons") or []), *(doc.get("warnings") or [])]
    return [str(x.get("result")) for r in every for x in r.get("reasons") or [] if x.get("rule") == rule]


SCRIPTS = {
    "exec outside": b'#!/bin/sh\nexec /usr/bin/gcc-15 "$@"\n',
    "a PATH gcc": b'#!/bin/sh\ngcc "$@"\n',
    "another wrapper in the prefix": b'#!/bin/sh\nexec /opt/gcc/bin/cc1 "$@"\n',
    "no #! line": b'exec /usr/bin/gcc-15 "$@"\n',
}


@pytest.mark.parametrize("inner", SCRIPTS.values(), ids=SCRIPTS.keys())
def test_a_script_execed_in_the_prefix_is_not_read_as_the_prefixs_gcc(tmp_path: Path, inner: bytes) -> None:
    jit = probe_jit(toolkit_128_facts(), ENV, _chain(tmp_path, inner))
    assert jit["cc_host_found"] is True and "cc_host_gnu_major" not in jit, jit
    assert jit["cc_host_gnu_supported"] is None, jit
    assert "/opt/gcc/bin/gcc-real (no ELF program" in jit["cc_host_gnu_supported_reason"], jit


def test_an_elf_program_execed_in_the_prefix_is_still_read(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), ENV, _chain(tmp_path, b"\x7fELF\x02\x01\x01"))
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit


def test_the_gate_does_not_allow_the_chain_as_gcc_13(tmp_path: Path) -> None:
    doc = jit_host_gate(
        tmp_path / "g", probe_jit(toolkit_128_facts(), ENV, _chain(tmp_path / "box", SCRIPTS["exec outside"]))
    )
    assert _rule(doc, "flashinfer-jit-cc-host-version") == ["unknown"], doc.get("warnings")
