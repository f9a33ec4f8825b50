"""SGLang 0.5.1-0.5.4's own check of the NCCL SGLANG_NCCL_SO_PATH names, now judged (igap38, issue 16; rule
symm-mem-nccl-so-path-version, key jit.nccl_so_path_version).

Those releases take pynccl's nccl_version (ncclGetRawVersion of the named library, NCCL_VERSION_CODE) and assert it
is 22703 (2.27.3) or more at the first forward pass under --enable-symm-mem at tp > 1 (pynccl_allocator.py:87-89).
The rule was "unknown" whatever the file; the probe now reads the version from the file's "NCCL version
X.Y.Z+cudaA.B" string (igap36), so an old NCCL fails, 2.27.3 or newer passes, and a version not read stays unknown.
The libraries are small fakes of NCCL's shape (tests/elfwriter.py), as in the igap36 tests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import build_so
from gate_cli import nccl_named_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_WINDOW, nccl_so_path
from stackcheck.readers.fsview import HostView

RULE = "symm-mem-nccl-so-path-version"


def _library(path: Path, *strings: str) -> Path:
    """A libnccl.so.2 with every function 0.5.1-0.5.4's pynccl binds and the window pair, `strings` NUL-terminated
    after its dynamic data (as in .rodata)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tail = b"".join(b"\0" + s.encode() + b"\0" for s in strings)
    path.write_bytes(build_so(defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW], soname="libnccl.so.2") + tail)
    return path


def _probe(lib: Path) -> dict[str, object]:
    return nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView())


def _gate(tmp_path: Path, release: str, named: str | None, *flags: str) -> tuple[int, dict[str, str], list[str]]:
    """tests/cases/h200-newest at `release` (its nvidia-nccl-cu13 wheel at torch 2.14.1's pin 2.30.7, new enough)
    with SGLANG_NCCL_SO_PATH naming a library with the window functions whose version string says `named` (None: no
    string; tests/gate_cli.py nccl_named_box)."""
    defined = [*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW]
    rc, results, reasons = nccl_named_box(tmp_path, release, named, "2.30.7", "12.9", "--tp", "2", *flags,
                                          defined=defined)  # fmt: skip
    return rc, results, [json.dumps(x) for x in reasons if x.get("rule") == RULE]


@pytest.mark.parametrize("release", ["0.5.1", "0.5.4"])
@pytest.mark.parametrize("named", ["2.27.1", "2.26.5"])
def test_an_older_named_nccl_fails_the_releases_assertion(tmp_path: Path, release: str, named: str) -> None:
    # unknown on the parent; now the assertion's own outcome (the window functions are there: not rule -window's)
    rc, results, texts = _gate(tmp_path, release, named, "--enable-symm-mem")
    assert rc == 1 and results.get(RULE) == "fail", results
    assert named in texts[0] and "AssertionError" in texts[0], texts


@pytest.mark.parametrize("named", ["2.27.3", "2.32.6"])
def test_a_named_nccl_of_2273_or_newer_passes(tmp_path: Path, named: str) -> None:
    # refused as unknown on the parent
    # (these release boxes fail sgl-kernel's start-up rule, which is not NCCL's: no NCCL rule is named)
    _, results, _ = _gate(tmp_path, "0.5.4", named, "--enable-symm-mem")
    assert not [r for r in results if "nccl" in r], results


@pytest.mark.parametrize("named", [None, "2.27.3a1"])
def test_a_version_not_read_or_not_final_stays_unknown(tmp_path: Path, named: str | None) -> None:
    rc, results, _ = _gate(tmp_path, "0.5.2", named, "--enable-symm-mem")
    assert rc == 1 and results.get(RULE) == "unknown", results


def test_not_judged_without_symm_mem_or_after_054(tmp_path: Path) -> None:
    assert RULE not in _gate(tmp_path, "0.5.2", "2.26.5")[1]
    assert RULE not in _gate(tmp_path, "0.5.5", "2.26.5", "--enable-symm-mem")[1]
