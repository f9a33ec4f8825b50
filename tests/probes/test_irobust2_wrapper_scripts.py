"""A gcc wrapper script in a hostile shape, as `python -m stackcheck probe` reads it (irobust2, an adversarial pass over
the eleventh session's additions: igap42's reading of shell functions never called).

Found: every function definition joined and searched the rest of the script, so a 64 KB wrapper (the most read) of
some 5,000 small functions took about 30 s to read, past the jit probe's 4 s: the probe timed out and every jit fact
(the host compilers, SGLANG_NCCL_SO_PATH's library, the symmetric-memory build) was lost, each then unknown. Now the
script is read in one pass. And a `function NAME` line of 60,000 blanks took ~6 s to fail the opening-line pattern
(two runs of blanks side by side), with the same result. Held: a binary file, a quote left open, a function calling
itself, functions calling each other, a here-document, a function never closed: each read (or left unread, with why)
within the probe's time, never a traceback. The wrapper and the toolkit are our own files (a prefix in the shape of
the lent H100's /opt/gcc, a CUDA 12.8 home with host_config.h's GNU check), on this machine's real filesystem, read
by a fresh process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck
from gate_cli import touch_exe

#: CUDA 12.8's host_config.h GNU check, in its shape (written here): GNU 14 at most
_HOST_CONFIG = "#if defined(__GNUC__)\n#if __GNUC__ > 14\n#error -- unsupported GNU version! later than 14\n#endif\n"


def _probe(tmp_path: Path, script: bytes) -> tuple[dict[str, Any], dict[str, Any], str]:
    """`stackcheck probe --format json` with CC and NVCC_CCBIN naming PREFIX/bin/gcc, a wrapper script `script`
    (its `@PREFIX@` replaced) beside gcc-real, and a GCC 13 version directory, under tmp_path; the toolkit a CUDA 12.8
    home first on the PATH. (the jit facts, the jit probe's entry, stderr)"""
    prefix = tmp_path / "gcc"
    for name in ("gcc-real", "cc1", "cc1plus"):
        touch_exe(prefix / "bin" / name)
    version_dir = prefix / "lib/gcc/x86_64-linux-gnu/13"
    version_dir.mkdir(parents=True)
    (version_dir / "crtbegin.o").write_bytes(b"\x7fELF")
    touch_exe(prefix / "bin/gcc", script.replace(b"@PREFIX@", str(prefix).encode()))
    cuda = tmp_path / "cuda"
    touch_exe(cuda / "bin/nvcc")
    (cuda / "include/crt").mkdir(parents=True)
    (cuda / "include/crt/host_config.h").write_text(_HOST_CONFIG)
    (cuda / "version.json").write_text(json.dumps({"cuda": {"version": "12.8.1"}, "cuda_nvcc": {"version": "12.8.93"}}))
    gcc = str(prefix / "bin/gcc")
    env = clean_env(
        "CUDA_", "NVCC_", CC=gcc, NVCC_CCBIN=gcc, CUDA_HOME=str(cuda), XDG_CACHE_HOME=str(tmp_path / "cache"),
        PATH=f"{cuda}/bin:{prefix}/bin:/usr/bin:/bin",
    )  # fmt: skip
    proc = run_stackcheck("probe", "--format", "json", env=env, timeout=120)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    doc = json.loads(proc.stdout)
    entry = next(p for p in doc["probes"] if p["name"] == "jit")
    return doc["facts"].get("jit") or {}, entry, proc.stderr


def _functions(count: int) -> bytes:
    """A wrapper of `count` small functions, none called, then its exec, cut to the 64 KB the probe reads."""
    tail = 'exec @PREFIX@/bin/gcc-real "$@"\n'
    body = "#!/bin/sh\n" + "".join(f"f{i}() {{\n  :\n}}\n" for i in range(count))
    body = body[: (1 << 16) - len(tail) - 200]
    return (body[: body.rfind("}\n") + 2] + tail).encode()


def test_a_wrapper_of_thousands_of_functions_is_read_in_time(tmp_path: Path) -> None:
    # fails on the parent: the jit probe timed out ("probe timed out after 4s") and its facts were empty
    jit, entry, _ = _probe(tmp_path, _functions(5000))
    assert entry["status"] == "ok", entry
    assert jit["cc_host_gnu_major"] == 13 and jit["nvcc_host_gnu_major"] == 13, jit


@pytest.mark.parametrize(
    ("script", "major"),
    [
        # a function that calls itself, called once: its body runs, so the script is read as commands (unknown)
        (b'#!/bin/sh\nf() {\n  f\n}\nf\nexec @PREFIX@/bin/gcc-real "$@"\n', None),
        # two functions calling each other, neither called from outside: each names the other (a possible call),
        # so both are read as commands (unknown)
        (b'#!/bin/sh\na() {\n  b\n}\nb() {\n  a\n}\nexec @PREFIX@/bin/gcc-real "$@"\n', None),
        # a function calling itself and never called
        (b'#!/bin/sh\nf() {\n  f\n}\nexec @PREFIX@/bin/gcc-real "$@"\n', 13),
        # a quote left open to the end
        (b'#!/bin/sh\nu() {\n  echo "x\n}\nexec @PREFIX@/bin/gcc-real "$@"\n', None),
        # a here-document inside a function
        (b'#!/bin/sh\nu() {\n  cat <<EOF\n}\nEOF\n}\nexec @PREFIX@/bin/gcc-real "$@"\n', None),
        # a function never closed
        (b"#!/bin/sh\n" + b"u() {\n" * 8000 + b'exec @PREFIX@/bin/gcc-real "$@"\n', None),
        # a `function NAME` line of 60,000 blanks and no brace: the opening-line pattern took ~6 s to fail (two runs of
        # blanks side by side), past the probe's 4 s (fails on the parent: the jit probe timed out)
        (b"#!/bin/sh\nfunction f" + b" " * 60000 + b'x\nexec @PREFIX@/bin/gcc-real "$@"\n', None),
        # a binary file with a shell's #!
        (b"#!/bin/sh\n" + bytes(range(256)) * 200, None),
    ],
)
def test_hostile_wrappers_are_read_or_left_unread(tmp_path: Path, script: bytes, major: int | None) -> None:
    jit, entry, _ = _probe(tmp_path, script)
    assert entry["status"] == "ok", entry
    assert jit.get("cc_host_gnu_major") == major, jit
    if major is None:  # (unknown, with why: the gate fails closed on it)
        assert jit["cc_host_gnu_supported"] is None and jit["cc_host_gnu_supported_reason"], jit
