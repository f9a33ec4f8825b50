"""The linker a link gcc was configured with (`--with-ld=PATH` in its configure line, which collect2 runs before any
search) read as GCC's top-level configure writes it (irobust2, an adversarial pass over igap42's reading).

GCC's top-level configure quotes an argument holding a blank or one of []~#$^&*(){}\\|;<>?' and, for `--NAME=VALUE`,
the VALUE alone (gcc-mirror/gcc configure.ac, TOPLEVEL_CONFIGURE_ARGUMENTS: "if the argument is of the form -foo=baz,
quote the baz part only"; Debian 12's `gcc-12 -v` shows --with-pkgversion='Debian 12.2.0-14+deb12u1'); a quote inside
is written '\\''. gcc/configure.ac takes the value as it is for DEFAULT_LINKER (`DEFAULT_LINKER="$with_ld"`).

Found: the value was read up to a quote or a blank, 400 bytes at most, and decoded as ASCII, so a quoted path
(`--with-ld='/opt/bin utils/ld'`), a non-ASCII one or a long one named a file not there, which reads as "not
installed here" (a relocated install): the PATH's ld was read in place of the one collect2 runs, a binutils 2.40 for
a 2.35 (the linker-script rules of igap39 judge on it). Now each is read as written, and a `--with-ld=` this reader
cannot take (another quoting, two values, a `$`) leaves the linker unread: unknown, never the PATH's. The drivers are
our own byte strings (a minimal ELF whose strings hold a configure line in GCC's shape), on this machine's files."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import gnu_ld, touch_exe

from stackcheck.probes.jit import gnu_ld_version
from stackcheck.readers.fsview import HostView

_TOOLSET = "opt/rh/gcc-toolset-13/root/usr"
_ENV = {"PATH": "/usr/bin", "CXX": f"/{_TOOLSET}/bin/g++"}


def _box(root: Path, configured: bytes) -> HostView:
    """A system binutils 2.40 ld first on the PATH, and a gcc-toolset g++ driver whose configure line (in its strings)
    holds `configured` among its other arguments."""
    from elfwriter import build_so

    gnu_ld(root / "usr/bin/ld", "2.40", "(GNU Binutils)")
    line = b"\0../configure --prefix=/opt/rh/gcc-toolset-13/root/usr " + configured + b" --enable-shared\0"
    touch_exe(root / f"{_TOOLSET}/bin/g++", build_so(needed=["libc.so.6"]) + line)
    return HostView(str(root))


@pytest.mark.parametrize(
    ("configured", "where"),
    [
        (b"--with-ld=/opt/binutils-2.35/bin/ld", "opt/binutils-2.35/bin/ld"),  # (read before too)
        (b"--with-ld='/opt/bin utils/ld'", "opt/bin utils/ld"),
        (b"--with-ld='/opt/binutils~2.35/ld'", "opt/binutils~2.35/ld"),
        (b"--with-ld='/opt/it'\\''s/ld'", "opt/it's/ld"),
        ("--with-ld=/opt/bïnutils/ld".encode(), "opt/bïnutils/ld"),
        (b"--with-ld=/opt/" + b"d" * 200 + b"/" + b"e" * 200 + b"/ld", "opt/" + "d" * 200 + "/" + "e" * 200 + "/ld"),
    ],
)
def test_the_configured_linker_is_read_as_written(tmp_path: Path, configured: bytes, where: str) -> None:
    # fails on the parent for all but the first: the configured path was cut or mis-decoded, so not found, and the
    # PATH's 2.40 was read for a link that runs binutils 2.35
    view = _box(tmp_path, configured)
    gnu_ld(tmp_path / where, "2.35.2", "(GNU Binutils)")
    assert gnu_ld_version(_ENV, view) == ((2, 35), "")


@pytest.mark.parametrize(
    "configured",
    [
        b"--with-ld=/opt/a/ld --with-ld=/opt/b/ld",  # given twice: configure takes the last
        b"--with-ld='/opt/$$x/ld'",  # a `$`, doubled for make
        b'--with-ld=/opt/"x"/ld',
        b"--with-ld='/opt/unterminated",
    ],
)
def test_a_configured_linker_not_read_is_unknown(tmp_path: Path, configured: bytes) -> None:
    # fails on the parent: the value was taken in part (or not at all), not found, and the PATH's 2.40 read
    view = _box(tmp_path, configured)
    version, why = gnu_ld_version(_ENV, view)
    assert version is None and "--with-ld= value is not read" in why, why


def test_no_configured_linker_reads_the_paths_as_before(tmp_path: Path) -> None:
    view = _box(tmp_path, b"--with-gnu-ld --with-ldflags=-s")
    assert gnu_ld_version(_ENV, view) == ((2, 40), "")
