"""The lent H100 (2026-12-06, Ubuntu 24.04): its /usr/bin/gcc -> gcc-13 -> x86_64-linux-gnu-gcc-13 (GCC 13.3.0) was read
as "a GCC driver carrying 2 majors of version string", so nvcc's host gcc had no major and every JIT rule that needs it
said unknown: the gate refused SGLang 0.5.9 and 0.5.23 launches on a box whose compiler is fine. The second candidate
is the SARIF format's version "2.1.0" that GCC 13 and later link into the driver (gcc/diagnostic-format-sarif.cc,
SARIF_VERSION; in the H100's driver the NUL-delimited strings "$schema", "2.1.0", "informationUri"). The driver's
.rodata here is written in that shape (the strings only, after a minimal ELF's tables), not copied."""

from __future__ import annotations

from pathlib import Path

from elfwriter import build_so
from gate_cli import CUDA_128_HOME, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")
TRIPLET = "x86_64-linux-gnu"
PATH = {"PATH": "/usr/local/bin:/usr/bin"}
MARKS = b"\0Configured with: %s\n\0gcc version %s %s\n\0%s %s%s\n\0"
SARIF = b"\0toolExecutionNotifications\0$schema\0002.1.0\0informationUri\0"


def _box(root: Path, rodata: bytes, major: int = 13, most: int = 14) -> HostView:
    """A toolkit whose host_config.h takes gcc `most` at most; /usr/bin/gcc -> gcc-13 -> x86_64-linux-gnu-gcc-13, an
    ELF holding `rodata`; cc1 and cc1plus in the program directory of `major`."""
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    header = f"#if defined(__GNUC__)\n#if __GNUC__ > {most}\n#error -- unsupported GNU version!\n#endif\n#endif\n"
    (root / HOME / "include/crt/host_config.h").write_text(header)
    touch_exe(root / f"usr/bin/{TRIPLET}-gcc-13", build_so(needed=["libc.so.6"]) + rodata)
    (root / "usr/bin/gcc-13").symlink_to(f"{TRIPLET}-gcc-13")
    (root / "usr/bin/gcc").symlink_to("gcc-13")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/{TRIPLET}/{major}/{name}")
    touch_exe(root / "usr/bin/c++")
    return HostView(str(root))


def test_gcc_13s_sarif_version_is_not_read_as_a_second_major(tmp_path: Path) -> None:
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path, MARKS + b"13.3.0\0(C)\0" + SARIF))
    assert jit["nvcc_host_gnu_major"] == 13 and jit["nvcc_host_gnu_supported"] is True, jit
    # the schema file's name alone (another string order) says the same
    url = b"\0https://example.invalid/Schemata/sarif-schema-2.1.0.json\0"
    rodata = MARKS + b"13.3.0\0(C)\0" + url + b"version\0002.1.0\0"
    jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path / "url", rodata))
    assert jit["nvcc_host_gnu_major"] == 13, jit


def test_two_gcc_version_strings_stay_unknown(tmp_path: Path) -> None:
    # 2.1.0 with no SARIF string beside it, and a second GCC version: still two majors, not read
    for name, extra in (("bare", b"2.1.0\0"), ("gcc14", b"14.1.0\0")):
        jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path / name, MARKS + b"13.3.0\0(C)\0" + extra))
        assert "nvcc_host_gnu_major" not in jit and jit["nvcc_host_gnu_supported"] is None, jit
        assert "2 majors" in jit["nvcc_host_gnu_supported_reason"], jit


def test_sarif_version_is_read_in_any_string_order(tmp_path: Path) -> None:
    # igap39: "2.1.0" was SARIF's only right after "$schema" (or where a schema file name held it); the linker orders
    # merged strings as it likes, so a driver with "$schema" after it, or before another string, was unknown
    orders = {
        "after": b"2.1.0\0informationUri\0toolExecutionNotifications\0$schema\0",
        "apart": b"$schema\0runs\0version\0002.1.0\0",
    }
    for name, tail in orders.items():
        jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path / name, MARKS + b"13.3.0\0(C)\0" + tail))
        assert jit["nvcc_host_gnu_major"] == 13 and jit["nvcc_host_gnu_supported"] is True, (name, jit)


def test_a_real_second_gcc_version_is_never_sarifs(tmp_path: Path) -> None:
    # beside SARIF's strings a second GCC version (after "$schema", or named by a schema-like file name) stays a second
    # major: only the exact "2.1.0" is SARIF's (igap39: "sarif-schema-14.2.0.json" made 14.2.0 SARIF's, read as 13)
    tails = {
        "schema-name": b"sarif-schema-14.2.0.json\0" + b"14.2.0\0",
        "after-schema": b"$schema\x00014.2.0\0",
        "vendor": b"$schema\0002.1.0 (Red Hat 2.1.0-1)\0",
    }
    for name, tail in tails.items():
        jit = probe_jit(toolkit_128_facts(), PATH, _box(tmp_path / name, MARKS + b"13.3.0\0(C)\0" + tail))
        assert "nvcc_host_gnu_major" not in jit and jit["nvcc_host_gnu_supported"] is None, (name, jit)
        assert "2 majors" in jit["nvcc_host_gnu_supported_reason"], (name, jit)
