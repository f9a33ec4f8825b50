"""SGLANG_NCCL_SO_PATH naming an NCCL of another version than torch's under `--enable-symm-mem` (igap36, the forty-third
fact-check sample's row n4: nvidia-nccl-cu13 2.32.6's libnccl.so.2 beside torch's nvidia-nccl-cu13 2.27.7 on SGLang
0.5.11 was allowed; probe stackcheck/probes/jit.py nccl_library_version, key jit.nccl_so_path_version; rule
symm-mem-nccl-so-path-same-nccl).

pynccl builds its communicator with the named library; the symmetric-memory allocator, built with `-lnccl`, registers
on that comm through the NCCL torch loaded (rule symm-mem-nccl-so-path-window-register's reading). Two NCCL versions
sharing one comm is not known to work (inferred): unknown, which the gate refuses; the same version is allowed as
before. The version is NCCL's init.cc VERSION_STRING ("NCCL version X.Y.Z+cudaA.B"), a literal in .rodata; the
libraries here are small fakes of that shape (tests/elfwriter.py, the string NUL-terminated after the dynamic data),
and the real wheels' libraries where they are cached."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import build_so
from gate_cli import nccl_named_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_FUNCTIONS_0517, PYNCCL_WINDOW, nccl_so_path
from stackcheck.readers.fsview import HostView

RULE = "symm-mem-nccl-so-path-same-nccl"
#: NCCL 2.27's shape: every function pynccl binds, the window functions and ncclMemAlloc / ncclMemFree
WINDOW = [*PYNCCL_FUNCTIONS, *PYNCCL_FUNCTIONS_0517, *PYNCCL_WINDOW, "ncclMemAlloc", "ncclMemFree"]


def _library(path: Path, *strings: str) -> Path:
    """A libnccl.so.2 exporting WINDOW, with `strings` NUL-terminated after its dynamic data (as in .rodata)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tail = b"".join(b"\0" + s.encode() + b"\0" for s in strings)
    path.write_bytes(build_so(defined=WINDOW, soname="libnccl.so.2") + tail)
    return path


def _probe(lib: Path) -> dict[str, object]:
    return nccl_so_path({"SGLANG_NCCL_SO_PATH": str(lib)}, HostView())


def test_the_probe_reads_the_version_string(tmp_path: Path) -> None:
    lib = _library(tmp_path / "a" / "libnccl.so.2", "NCCL version 2.32.6 compiled with CUDA 13.5",
                   "NCCL version 2.32.6+cuda13.5")  # fmt: skip
    got = _probe(lib)
    assert (got["nccl_so_path_found"], got.get("nccl_so_path_version")) == (True, "2.32.6"), got


@pytest.mark.parametrize(
    "strings",
    [
        (),  # no version string
        ("NCCL version 2.32.6 compiled with CUDA 13.5",),  # another shape
        ("NCCL version 2.27.7+cuda13.0", "NCCL version 2.32.6+cuda13.5"),  # two versions
    ],
)
def test_a_version_not_read_is_null_with_a_reason(tmp_path: Path, strings: tuple[str, ...]) -> None:
    got = _probe(_library(tmp_path / "libnccl.so.2", *strings))
    assert got["nccl_so_path_found"] is True and got["nccl_so_path_version"] is None, got
    assert got.get("nccl_so_path_version_reason"), got


def _sparse_strings(wheel: Path, member: str, target: Path) -> Path:
    """`member` of `wheel` as a sparse file of its full size holding only its ELF header, its section table and its
    small allocated, non-executable PROGBITS and STRTAB sections (.rodata, .shstrtab among them): what the probe reads,
    without writing the library's 200-430 MB to disk. Two streaming passes; a section left out reads as zeros."""
    import struct
    import zipfile

    def stream(keep: list[tuple[int, int]], out: Any) -> bytes:
        with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
            pos, head = 0, b""
            while chunk := src.read(8 << 20):
                head = head or chunk[:64]
                for lo, hi in keep:
                    a, b = max(lo, pos), min(hi, pos + len(chunk))
                    if a < b and out is not None:
                        out.seek(a)
                        out.write(chunk[a - pos : b - pos])
                pos += len(chunk)
            if out is not None:
                out.truncate(pos)
        return head

    head = stream([], None)
    shoff, shentsize, shnum = struct.unpack_from("<Q", head, 40)[0], *struct.unpack_from("<HH", head, 58)
    table = (shoff, shoff + shentsize * shnum)
    with target.open("wb") as out:
        stream([(0, 64), table], out)
    with target.open("rb") as f:
        f.seek(shoff)
        raw = f.read(shentsize * shnum)
    keep = [(0, 64), table]
    for i in range(shnum):
        _, sh_type, sh_flags, _, offset, size = struct.unpack_from("<IIQQQQ", raw, i * shentsize)
        if size <= 8 << 20 and (sh_type == 3 or (sh_type == 1 and sh_flags & 2 and not sh_flags & 4)):
            keep.append((offset, offset + size))
    with target.open("r+b") as again:
        stream(keep, again)
    return target


@pytest.mark.registry
@pytest.mark.parametrize(
    ("dist", "version", "cuda"),
    [("nvidia-nccl-cu12", "2.26.2", "12.2"), ("nvidia-nccl-cu12", "2.27.3", "12.9"),
     ("nvidia-nccl-cu12", "2.27.7", "12.9"), ("nvidia-nccl-cu13", "2.27.7", "13.0"),
     ("nvidia-nccl-cu13", "2.32.6", "13.5")],
)  # fmt: skip
def test_the_real_wheels_versions_are_read(tmp_path: Path, dist: str, version: str, cuda: str) -> None:
    """The version string in the nvidia-nccl wheels' own libnccl.so.2 (read where the wheel is cached), and the CUDA
    build it names (igap40: each -cuNN wheel's is CUDA NN.x)."""
    from registry_wheels import cached

    hit = cached(dist, version)
    if hit is None:
        pytest.skip(f"{dist} {version} not cached")
    lib = _sparse_strings(hit, "nvidia/nccl/lib/libnccl.so.2", tmp_path / "libnccl.so.2")
    from stackcheck.probes.jit import nccl_library_build, nccl_library_version

    assert nccl_library_version(HostView(), str(lib)) == (version, "")
    assert nccl_library_build(HostView(), str(lib)) == (version, cuda, "")


def _gate(
    tmp_path: Path, release: str, named: str | None, torch_nccl: str = "2.30.7"
) -> tuple[int, dict[str, str], list[str]]:
    """tests/cases/h200-newest at `release` with its nvidia-nccl-cu13 wheel at `torch_nccl` (torch 2.14.1's pin
    unless given: ifc46) and SGLANG_NCCL_SO_PATH naming a library whose version string says `named` (None: no string;
    tests/gate_cli.py nccl_named_box)."""
    rc, results, reasons = nccl_named_box(
        tmp_path, release, named, torch_nccl, "13.0", "--tp", "8", "--enable-symm-mem"
    )
    return rc, results, [json.dumps(x) for x in reasons if x.get("rule") == RULE]


@pytest.mark.parametrize("release", ["0.5.8", "0.5.11", "0.5.23"])
def test_another_nccl_version_is_refused_as_unknown(tmp_path: Path, release: str) -> None:
    # fails on the parent: row n4 (2.32.6 named, torch's 2.27.7, 0.5.11) was allowed
    rc, results, texts = _gate(tmp_path, release, "2.32.6")
    assert rc == 1 and results.get(RULE) == "unknown", results
    assert "two NCCL builds sharing one comm" in texts[0], texts


def test_a_version_not_read_is_refused_as_unknown(tmp_path: Path) -> None:
    rc, results, texts = _gate(tmp_path, "0.5.11", None)
    assert rc == 1 and results.get(RULE) == "unknown", results
    assert "nccl_so_path_version not known" in texts[0], texts


def test_the_same_version_is_allowed(tmp_path: Path) -> None:
    rc, results, _ = _gate(tmp_path, "0.5.11", "2.30.7")
    assert rc == 0 and RULE not in results, results


def test_releases_before_the_checked_registration_are_not_judged(tmp_path: Path) -> None:
    _, results, _ = _gate(tmp_path, "0.5.7", "2.32.6")
    assert RULE not in results, results
