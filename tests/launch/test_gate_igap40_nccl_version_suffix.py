"""The NCCL version read from a library's "NCCL version X.Y.Z<NCCL_SUFFIX>+cudaA.B" string (igap40, issue 16 item 4;
stackcheck/probes/jit.py nccl_library_version, key jit.nccl_so_path_version).

NCCL's init.cc builds that string as STR(NCCL_PATCH) NCCL_SUFFIX with nothing between them, so a suffix that starts
with a digit runs into the patch: "2.27.2" with NCCL_SUFFIX "0" reads "2.27.20". The reading took the whole digit
run as the patch (2.27.20, newer than 2.27.3: rule symm-mem-nccl-so-path-version passed a library whose
ncclGetVersion says 22702 and which fails SGLang 0.5.1-0.5.4's assertion). A patch of more than one digit cannot be
told from a one-digit patch with a digit-led suffix: not read now (null, with why; the rules stay unknown). Every
NCCL_SUFFIX in NCCL's makefiles/version.mk history starts with a letter (a0, a17, ms1, nvls4, p4, unpack, ...), read
as before. The libraries are our own byte strings in the library's shape (tests/elfwriter.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import build_so
from gate_cli import nccl_named_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_WINDOW, nccl_library_version
from stackcheck.readers.fsview import HostView


def _version(tmp_path: Path, *strings: bytes) -> tuple[str | None, str]:
    lib = tmp_path / "libnccl.so.2"
    lib.write_bytes(build_so(defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW], soname="libnccl.so.2")
                    + b"".join(b"\0" + s + b"\0" for s in strings))  # fmt: skip
    return nccl_library_version(HostView(), str(lib))


@pytest.mark.parametrize(
    ("string", "version"),
    [
        (b"NCCL version 2.27.7+cuda12.9", "2.27.7"),
        (b"NCCL version 2.27.3a1+cuda12.9", "2.27.3a1"),  # a letter-led suffix: a pre-release to the version op
        (b"NCCL version 2.27.7ms1+cuda13.0", "2.27.7ms1"),
        (b"NCCL version 2.27.7-unpack+cuda13.0", "2.27.7-unpack"),
        (b"NCCL version 12.3.4+cuda13.0", "12.3.4"),
    ],
)
def test_a_one_digit_patch_is_read(tmp_path: Path, string: bytes, version: str) -> None:
    assert _version(tmp_path, string) == (version, "")


@pytest.mark.parametrize(
    "string",
    [
        b"NCCL version 2.27.20+cuda12.9",  # 2.27.2 with NCCL_SUFFIX "0", or 2.27.20
        b"NCCL version 2.27.05+cuda12.9",  # 2.27.0 with "5"
        b"NCCL version 2.27.0123456789+cuda12.9",  # a run longer than three digits
        b"NCCL version 2.12.12+cuda11.6",  # NCCL 2.12.12, or 2.12.1 with "2": not told apart either
    ],
)
def test_a_patch_running_into_digits_is_not_read(tmp_path: Path, string: bytes) -> None:
    # fails on the parent: 2.27.20, 2.27.05 and 2.12.12 were read as versions, the long run as 2.27.012 + "3456789"
    version, why = _version(tmp_path, string)
    assert version is None and "digit" in why, (version, why)


def test_the_gate_does_not_pass_a_digit_led_suffix(tmp_path: Path) -> None:
    # fails on the parent: "2.27.20" passed rule symm-mem-nccl-so-path-version (2.27.20 >= 2.27.3)
    rc, results, _ = nccl_named_box(tmp_path, "0.5.4", "2.27.20", "2.30.7", "12.9", "--tp", "2", "--enable-symm-mem",
                                    defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW])  # fmt: skip
    assert rc == 1 and results.get("symm-mem-nccl-so-path-version") == "unknown", results
