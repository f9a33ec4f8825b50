"""igap28 (issue 16, class 2; an over-refusal seen on the lent H100): a gcc built into a prefix, no version in its name.

The lent H100 sets CC=/opt/gcc/bin/gcc, a two-line /bin/sh script that execs /opt/gcc/bin/gcc-real with
-B/opt/gcc/bin/ and -B/opt/gcc/lib/gcc/x86_64-linux-gnu/13/ (cc1 and cc1plus lie in bin/, the start files in
lib/gcc/x86_64-linux-gnu/13/). Neither the name nor a program directory with cc1plus told the major, so
cc_host_gnu_supported was unknown and the gate refused FlashInfer's JIT on SGLang < 0.5.9 for lack of knowledge. The jit
probe now reads the major from the one GCC version directory of the prefix (GCC's install layout, where the driver
looks for its own files relative to itself), and says unknown where two majors sit there or a wrapper runs a program
outside the prefix. Nothing is run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import CUDA_128_HOME, jit_host_gate, toolkit_128_facts, touch_exe

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = CUDA_128_HOME.lstrip("/")
HEADER = "#if defined(__GNUC__)\n#if __GNUC__ > 14\n#error -- unsupported GNU version! later than 14\n#endif\n"
PATH = {"PATH": "/usr/bin"}
TRIPLE = "x86_64-linux-gnu"


def _wrapper(prefix: str, real: str, version: str) -> bytes:
    """A wrapper in the shape of the lent H100's /opt/gcc/bin/gcc (written here, not copied)."""
    lib = f"{prefix}/lib/gcc/{TRIPLE}/{version}"
    flags = f"-B{prefix}/bin/ -B{lib}/ -isystem {lib}/include -isystem /usr/include/c++/{version}"
    return f'#!/bin/sh\nexec {real} {flags} "$@"\n'.encode()


def _box(root: Path, versions: tuple[str, ...] = ("13",), *, script: bytes | None = None) -> HostView:
    """A CUDA 12.8 toolkit (gcc 14 at most), the distribution's gcc-14 on the PATH, and /opt/gcc: bin/gcc (an ELF
    driver, or `script`), bin/cc1 and bin/cc1plus, and PREFIX/lib/gcc/TRIPLE/VERSION with start files for each of
    `versions`."""
    touch_exe(root / HOME / "bin/nvcc")
    (root / HOME / "include/crt").mkdir(parents=True, exist_ok=True)
    (root / HOME / "include/crt/host_config.h").write_text(HEADER)
    touch_exe(root / "usr/bin/gcc-14")
    (root / "usr/bin/gcc").symlink_to("gcc-14")
    touch_exe(root / "usr/bin/c++")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"usr/lib/gcc/{TRIPLE}/14/{name}")
    touch_exe(root / "opt/gcc/bin/gcc-real")
    touch_exe(root / "opt/gcc/bin/gcc", script if script is not None else b"\x7fELF")
    for name in ("cc1", "cc1plus"):
        touch_exe(root / f"opt/gcc/bin/{name}")
    for version in versions:
        d = root / f"opt/gcc/lib/gcc/{TRIPLE}/{version}"
        d.mkdir(parents=True, exist_ok=True)
        (d / "crtbegin.o").write_bytes(b"\x7fELF")
    return HostView(str(root))


# ---- the probe -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["13", "13.3.0"])
def test_the_prefix_version_directory_gives_the_major(tmp_path: Path, version: str) -> None:
    script = _wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", version)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, (version,), script=script))
    assert jit["cc_host_found"] is True and jit["cc_host"] == "/opt/gcc/bin/gcc", jit
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit


def test_a_driver_binary_is_not_judged_by_the_prefix_layout(tmp_path: Path) -> None:
    # (irev60) an ELF driver in a prefix whose version directories hold no cc1 / cc1plus: it runs the compiler of its
    # own compiled-in version from elsewhere (a gcc 15 driver copied beside lib/gcc/TRIPLE/13 runs gcc 15's cc1plus),
    # so the one version directory does not tell its major: unknown, not 13 and supported
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, ("13",)))
    assert jit["cc_host_found"] is True and "cc_host_gnu_major" not in jit, jit
    # (igap34: the box's driver is an ELF's first bytes, which is not read as a program at all)
    reason = jit["cc_host_gnu_supported_reason"]
    assert jit["cc_host_gnu_supported"] is None and "not read as an ELF program" in reason, jit


def test_the_lent_h100s_wrapper_script(tmp_path: Path) -> None:
    script = _wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "13")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script))
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit
    # the same prefix with gcc 15's files: too new for CUDA 12.8 (a fail, not an unknown)
    script = _wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "15")
    view = _box(tmp_path / "b", ("15",), script=script)
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view)
    assert jit["cc_host_gnu_major"] == 15 and jit["cc_host_gnu_supported"] is False, jit


def test_two_versions_in_the_prefix_are_unknown(tmp_path: Path) -> None:
    view = _box(tmp_path, ("13", "15"), script=_wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "13"))
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view)
    assert jit["cc_host_found"] is True and "cc_host_gnu_major" not in jit, jit
    assert jit["cc_host_gnu_supported"] is None and jit["cc_host_gnu_max"] == 14, jit
    reason = jit["cc_host_gnu_supported_reason"]
    assert "2 majors" in reason and f"lib/gcc/{TRIPLE}/13" in reason and f"lib/gcc/{TRIPLE}/15" in reason, reason


def test_a_leftover_directory_without_gcc_files_is_not_counted(tmp_path: Path) -> None:
    view = _box(tmp_path, ("13",), script=_wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "13"))
    (tmp_path / f"opt/gcc/lib/gcc/{TRIPLE}/15").mkdir()  # empty: no start files, no compiler
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view)
    assert jit["cc_host_gnu_major"] == 13, jit


@pytest.mark.parametrize(
    "script",
    [
        # a wrapper that runs a driver outside the prefix: its version is not the prefix's
        b'#!/bin/sh\nexec /usr/local/bin/mygcc "$@"\n',
        # one that names another major than the prefix's directories
        b'#!/bin/sh\nexec /opt/gcc/bin/gcc-16 "$@"\n',
        # a script that runs its program without exec and an absolute path
        b'#!/bin/sh\ngcc-real "$@"\n',
        # no script, no ELF
        b"MZ\x90\x00",
    ],
)
def test_a_wrapper_not_read_is_unknown(tmp_path: Path, script: bytes) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script))
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, jit
    assert "/opt/gcc/bin/gcc" in jit["cc_host_gnu_supported_reason"], jit


def test_the_same_reader_for_nvcc_ccbin_and_nvccs_default(tmp_path: Path) -> None:
    script = _wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "15")
    view = _box(tmp_path, ("15",), script=script)
    # NVCC_CCBIN naming the prefix's bin directory (DIR/gcc) and the file itself
    for value in ("/opt/gcc/bin", "/opt/gcc/bin/gcc"):
        jit = probe_jit(toolkit_128_facts(), {**PATH, "NVCC_CCBIN": value}, view)
        assert jit["nvcc_host"] == "/opt/gcc/bin/gcc" and jit["nvcc_host_gnu_major"] == 15, (value, jit)
        assert jit["nvcc_host_gnu_supported"] is False, jit
    # the prefix first on the PATH: nvcc's default gcc is the prefix's
    jit = probe_jit(toolkit_128_facts(), {"PATH": "/opt/gcc/bin:/usr/bin"}, view)
    assert jit["nvcc_host"] == "/opt/gcc/bin/gcc" and jit["nvcc_host_gnu_supported"] is False, jit
    # a symlink into the prefix resolves to it
    (tmp_path / "usr/local/bin").mkdir(parents=True)
    (tmp_path / "usr/local/bin/gcc").symlink_to("/opt/gcc/bin/gcc")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/usr/local/bin/gcc"}, HostView(str(tmp_path)))
    assert jit["cc_host_gnu_major"] == 15, jit


# ---- the gate --------------------------------------------------------------------------------------------------


def _gate(tmp_path: Path, host: dict[str, Any]) -> dict[str, Any]:
    return jit_host_gate(tmp_path, host)


def _rule(doc: dict[str, Any], rule: str) -> list[str]:
    return [
        str(x.get("result"))
        for r in [*(doc.get("reasons") or []), *(doc.get("warnings") or [])]
        for x in r.get("reasons") or []
        if x.get("rule") == rule
    ]


def test_the_gate_allows_the_lent_h100s_cc_and_refuses_a_15(tmp_path: Path) -> None:
    env = {**PATH, "CC": "/opt/gcc/bin/gcc"}
    script = _wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "13")
    doc = _gate(tmp_path / "a", probe_jit(toolkit_128_facts(), env, _box(tmp_path / "box13", script=script)))
    assert doc["decision"] == "allow" and _rule(doc, "flashinfer-jit-cc-host-version") == [], doc.get("warnings")
    script = _wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "15")
    doc = _gate(tmp_path / "b", probe_jit(toolkit_128_facts(), env, _box(tmp_path / "box15", ("15",), script=script)))
    assert doc["decision"] == "refuse" and _rule(doc, "flashinfer-jit-cc-host-version") == ["fail"], doc.get("reasons")
    cited = json.dumps(doc["reasons"])
    assert "cc_host_gnu_supported" in cited and "host_config.h" in cited, cited


def test_the_gate_refuses_a_two_version_prefix_as_unknown(tmp_path: Path) -> None:
    env = {**PATH, "CC": "/opt/gcc/bin/gcc"}
    doc = _gate(tmp_path, probe_jit(toolkit_128_facts(), env, _box(tmp_path / "box", ("13", "15"))))
    assert _rule(doc, "flashinfer-jit-cc-host-version") == ["unknown"], doc.get("warnings")


# ---- irev60: a wrapper that may run another compiler ---------------------------------------------------------------
# _layout_major took the prefix's major for a wrapper script where every `exec` at the start of a line named an
# absolute path beginning with the prefix. A script can run another compiler in ways that reading missed, each then
# judged by the prefix's major (a false pass where that compiler is too new): an `exec` after `&&`, `||`, `;` or
# `then`; `exec -a NAME /usr/bin/gcc`; a path that starts with the prefix and leaves it (`/opt/gcc/../../usr/bin`);
# a program in the prefix linked to one outside it; a program run without exec. Each is now unknown.

FLAGS = '-B/opt/gcc/bin/ -B/opt/gcc/lib/gcc/x86_64-linux-gnu/13/ "$@"'


@pytest.mark.parametrize(
    "script",
    [
        f'#!/bin/sh\n[ -n "$SYSTEM_GCC" ] && exec /usr/bin/gcc "$@"\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f'#!/bin/sh\ntest -x /opt/gcc/bin/gcc-real || exec /usr/bin/gcc "$@"\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f'#!/bin/sh\nif [ -n "$X" ]; then exec /usr/bin/gcc "$@"; fi\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f'#!/bin/bash\nexec -a gcc /usr/bin/gcc "$@"\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f"#!/bin/sh\nexec /opt/gcc/../../usr/bin/gcc {FLAGS}\n",
        f'#!/bin/sh\n/usr/bin/gcc "$@"\nexit $?\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f'#!/bin/sh\nexec "$(dirname "$0")/../../usr/bin/gcc" "$@"\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
    ],
)
def test_a_wrapper_that_may_run_another_compiler_is_unknown(tmp_path: Path, script: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, jit
    assert "/opt/gcc/bin/gcc" in jit["cc_host_gnu_supported_reason"], jit


def test_a_program_in_the_prefix_that_links_outside_it_is_unknown(tmp_path: Path) -> None:
    view = _box(tmp_path, script=_wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "13"))
    (tmp_path / "opt/gcc/bin/gcc-real").unlink()
    (tmp_path / "opt/gcc/bin/gcc-real").symlink_to("/usr/bin/gcc-14")
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view)
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, jit
    assert "/usr/bin/gcc-14" in jit["cc_host_gnu_supported_reason"], jit


def test_the_lent_h100s_wrapper_is_still_read(tmp_path: Path) -> None:
    # (the shape the fix must keep: one exec of the prefix's driver, -B and -isystem arguments outside it)
    view = _box(tmp_path, script=_wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "13"))
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view)
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit
    # a comment naming another program is not a command
    script = b'#!/bin/sh\n# was: exec /usr/bin/gcc "$@"\nexec /opt/gcc/bin/gcc-real -B/opt/gcc/bin/ "$@"\n'
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path / "b", script=script))
    assert jit["cc_host_gnu_major"] == 13, jit


def test_a_wrapper_longer_than_what_is_read_is_unknown(tmp_path: Path) -> None:
    # (64 KiB of comments, then a line that runs another compiler: the part read ran only the prefix's)
    head = _wrapper("/opt/gcc", "/opt/gcc/bin/gcc-real", "13").replace(b"exec", b'[ -n "$A" ] || exec', 1)
    script = b"#!/bin/sh\n" + b"# pad\n" * 12000 + head.split(b"\n", 1)[1] + b'exec /usr/bin/gcc "$@"\n'
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script))
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, jit
    assert "longer than" in jit["cc_host_gnu_supported_reason"], jit


def test_the_gate_does_not_allow_a_wrapper_that_may_run_a_gcc_15(tmp_path: Path) -> None:
    # the box's /usr/bin/gcc is gcc 15 (too new for CUDA 12.8); the wrapper runs it where $SYSTEM_GCC is set
    script = f'#!/bin/sh\n[ -n "$SYSTEM_GCC" ] && exec /usr/bin/gcc "$@"\nexec /opt/gcc/bin/gcc-real {FLAGS}\n'
    view = _box(tmp_path / "box", script=script.encode())
    touch_exe(tmp_path / "box/usr/bin/gcc-15")
    (tmp_path / "box/usr/bin/gcc").unlink()
    (tmp_path / "box/usr/bin/gcc").symlink_to("gcc-15")
    doc = _gate(tmp_path / "g", probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view))
    assert _rule(doc, "flashinfer-jit-cc-host-version") == ["unknown"], doc.get("warnings")


def test_a_long_command_word_is_quoted_short(tmp_path: Path) -> None:
    script = b"#!/bin/sh\n" + b"x" * 50000 + b' "$@"\nexec /opt/gcc/bin/gcc-real "$@"\n'
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script))
    reason = jit["cc_host_gnu_supported_reason"]
    assert jit["cc_host_gnu_supported"] is None and "x" * 120 in reason and len(reason) < 600, reason


def test_a_redirection_is_no_command(tmp_path: Path) -> None:
    # (the & of 2>&1 and >&2 starts no command: such a wrapper is read)
    script = b'#!/bin/sh\necho "gcc wrapper" >&2\nexec /opt/gcc/bin/gcc-real -B/opt/gcc/bin/ "$@" 2>&1\n'
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script))
    assert jit["cc_host_gnu_major"] == 13, jit


# ---- irev61: a wrapper the shell reads otherwise than the command-by-command reading ---------------------------------
# Each script below runs /usr/bin/gcc (or nothing: a CRLF #! line names the interpreter "/bin/sh\r") before or in
# place of the prefix's driver, and each was read as the prefix's 13 and supported: the backtick's command substitution,
# a quote opened on one line that makes the next `#` line no comment, a backslash joining a line with a `#` line, a
# vertical tab Python split lines at and the shell does not, a CRLF script, a Perl script, an exec of a program in the
# prefix that is not there. Each is now unknown.

SHAPES = [
    f'#!/bin/sh\necho `/usr/bin/gcc "$@"`; exit\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
    f'#!/bin/sh\necho "x\n#"; /usr/bin/gcc "$@"; exit\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
    f'#!/bin/sh\necho x\\\n#;/usr/bin/gcc "$@"; exit $?\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
    f'#!/bin/sh\ntrue\x0b# ; /usr/bin/gcc "$@"; exit\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
    f"#!/bin/sh\r\nexec /opt/gcc/bin/gcc-real {FLAGS}\r\n",
    f"#!/usr/bin/perl\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
    f"#!/bin/sh\nexec /opt/gcc/bin/gcc-gone {FLAGS}\n",
]


@pytest.mark.parametrize("script", SHAPES)
def test_a_wrapper_the_shell_reads_otherwise_is_unknown(tmp_path: Path, script: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, jit
    reason = jit["cc_host_gnu_supported_reason"]
    assert "/opt/gcc/bin/gcc" in reason and "\r" not in reason and "\x0b" not in reason, reason


def test_the_gate_does_not_allow_a_backtick_that_runs_a_gcc_15(tmp_path: Path) -> None:
    view = _box(tmp_path / "box", script=SHAPES[0].encode())
    touch_exe(tmp_path / "box/usr/bin/gcc-15")
    (tmp_path / "box/usr/bin/gcc").unlink()
    (tmp_path / "box/usr/bin/gcc").symlink_to("gcc-15")
    doc = _gate(tmp_path / "g", probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view))
    assert _rule(doc, "flashinfer-jit-cc-host-version") == ["unknown"], doc.get("warnings")


@pytest.mark.parametrize(
    "script",
    [
        # /usr/bin/env's shell, a quote in a comment, a closed quote on the exec line, a trailing comment
        f"#!/usr/bin/env bash\n# don't use the system's gcc\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f'#!/bin/sh\necho "it\'s the prefix gcc" >&2\n# was: exec /usr/bin/gcc "$@"\n'
        f"exec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f"#!/bin/bash -e\nexec /opt/gcc/bin/gcc-real {FLAGS}  # it's 13\n",
    ],
)
def test_plain_wrappers_are_still_read(tmp_path: Path, script: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit


# ---- irev61: a wrapper that sends the prefix's driver to another GCC's programs ------------------------------------
# The driver tries each -B prefix first for every program it runs (cc1plus among them; GCC's manual, Directory
# Options, -B), then GCC_EXEC_PREFIX and COMPILER_PATH (Environment Variables), and runs them under a -wrapper
# (Developer Options): a wrapper that execs the prefix's driver with one of these pointing outside the prefix ran gcc
# 15's cc1plus while the prefix's 13 was read. Each is now unknown; -B directories inside the prefix are still read.


@pytest.mark.parametrize(
    "script",
    [
        '#!/bin/sh\nexec /opt/gcc/bin/gcc-real -B/usr/libexec/gcc15/ "$@"\n',
        '#!/bin/sh\nexec /opt/gcc/bin/gcc-real -B /usr/libexec/gcc15/ "$@"\n',
        '#!/bin/sh\nexec /opt/gcc/bin/gcc-real -B/opt/gcc/../../usr/libexec/gcc15/ "$@"\n',
        '#!/bin/sh\nexec /opt/gcc/bin/gcc-real -wrapper /usr/bin/env "$@"\n',
        '#!/bin/sh\nGCC_EXEC_PREFIX=/usr/libexec/gcc15/ exec /opt/gcc/bin/gcc-real "$@"\n',
        '#!/bin/sh\nexport COMPILER_PATH=/usr/libexec/gcc15\nexec /opt/gcc/bin/gcc-real "$@"\n',
    ],
)
def test_a_wrapper_that_points_the_driver_elsewhere_is_unknown(tmp_path: Path, script: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, jit
    assert "/opt/gcc/bin/gcc" in jit["cc_host_gnu_supported_reason"], jit


def test_b_directories_in_the_prefix_are_read_there_or_not(tmp_path: Path) -> None:
    # (the lent H100's two -B, and one naming a directory of the prefix that is not there: the driver skips it)
    script = f"#!/bin/sh\nexec /opt/gcc/bin/gcc-real {FLAGS.replace(' ', ' -B/opt/gcc/libexec/ ', 1)}\n"
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit


# ---- igap34: a wrapper that may end before its exec ---------------------------------------------------------
# `exit` and `return` were read as words that run no program, so a wrapper that ends (with any status) before it execs
# the prefix's driver was read as the prefix's 13, supported: nvcc's host compile then finds no output, or stops.


@pytest.mark.parametrize(
    "script",
    [
        f"#!/bin/sh\nexit 0\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f"#!/bin/sh\nexit\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f"#!/bin/bash\nreturn 1 2>/dev/null\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f'#!/bin/sh\nif [ -z "$CUDA_OK" ]; then exit 1; fi\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f'#!/bin/sh\ntest -n "$X" || exit 3\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        # an exec that may not run, then an exit
        f'#!/bin/sh\n[ -n "$X" ] && exec /opt/gcc/bin/gcc-real {FLAGS}\nexit 1\n',
        f'#!/bin/sh\nif [ -n "$X" ]; then\nexec /opt/gcc/bin/gcc-real {FLAGS}\nfi\nexit 1\n',
    ],
)
def test_a_wrapper_that_may_end_before_its_exec_is_unknown(tmp_path: Path, script: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, jit
    assert "before the exec of its compiler" in jit["cc_host_gnu_supported_reason"], jit


def test_an_exit_after_the_exec_is_read(tmp_path: Path) -> None:
    # (exec replaces the shell: what follows it runs only where the exec fails, and then nothing compiles either way)
    script = f"#!/bin/sh\nexec /opt/gcc/bin/gcc-real {FLAGS}\nexit 127\n".encode()
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script))
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit


def test_the_gate_does_not_allow_a_wrapper_that_exits_first(tmp_path: Path) -> None:
    script = f"#!/bin/sh\nexit 0\nexec /opt/gcc/bin/gcc-real {FLAGS}\n".encode()
    view = _box(tmp_path / "box", script=script)
    doc = _gate(tmp_path / "g", probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, view))
    assert _rule(doc, "flashinfer-jit-cc-host-version") == ["unknown"], doc.get("warnings")


# ---- igap42: an `exit` inside a shell function the wrapper never calls ---------------------------------------------
# (a usage() with `exit 1` made the wrapper unknown: the shell runs a function's body only where it is called)

_USAGE = 'usage() {\n  echo "usage: gcc ARGS" >&2\n  exit 1\n}\n'


@pytest.mark.parametrize(
    "script",
    [
        f"#!/bin/sh\n{_USAGE}exec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f"#!/bin/bash\nfunction usage {{\n  exit 2\n}}\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f"#!/bin/bash\nfunction usage() {{\n  return 1\n}}\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
    ],
)
def test_an_exit_in_a_function_never_called_is_read(tmp_path: Path, script: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert jit["cc_host_gnu_major"] == 13 and jit["cc_host_gnu_supported"] is True, jit


@pytest.mark.parametrize(
    "script",
    [
        # called: directly, by a trap, from a test, through a variable that names it
        f'#!/bin/sh\n{_USAGE}[ -n "$1" ] || usage\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f"#!/bin/sh\n{_USAGE}trap usage EXIT\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f'#!/bin/sh\n{_USAGE}f=usage\n"$f"\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        # not the plainest shape: a brace in the body, a here-document, a quote left open across the closing brace
        f'#!/bin/sh\nusage() {{\n  echo "${{0}}"; exit 1\n}}\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
        f"#!/bin/sh\nusage() {{\n  cat <<E\n}}\nE\n  exit 1\n}}\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f"#!/bin/sh\nusage() {{\n  echo '\n}}\nexit 1\n'\n}}\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        # one the shell calls itself (bash: a command not found; zsh: its exit hook)
        f"#!/bin/bash\ncommand_not_found_handle() {{\n  exit 1\n}}\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        f"#!/bin/zsh\nTRAPEXIT() {{\n  exit 1\n}}\nexec /opt/gcc/bin/gcc-real {FLAGS}\n",
        # a function that runs another compiler, called
        f'#!/bin/sh\nrun() {{\n  /usr/bin/gcc-15 "$@"\n}}\nrun "$@"\nexec /opt/gcc/bin/gcc-real {FLAGS}\n',
    ],
)
def test_a_function_that_may_run_is_still_unknown(tmp_path: Path, script: str) -> None:
    jit = probe_jit(toolkit_128_facts(), {**PATH, "CC": "/opt/gcc/bin/gcc"}, _box(tmp_path, script=script.encode()))
    assert "cc_host_gnu_major" not in jit and jit["cc_host_gnu_supported"] is None, (script, jit)
