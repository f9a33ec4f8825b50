"""The `-lcudart` / `-lnccl` look of the jit probe and a library file GNU ld skips (ifc40, the fortieth fact-check
sample, issue 16): ld passes over an ELF of another class or machine in a -L directory ('skipping incompatible
X when searching for -lcudart') and searches on, failing with 'cannot find -lcudart' where no other directory has
one (GNU ld 2.40, run 2026-12-05 on an i386 shared object and an aarch64 ELF header). Before, any regular file of
the name was taken: an aarch64 or 32-bit libcudart.so in <CUDA home>/lib64 of an x86_64 box read as found and
`--enable-symm-mem` was allowed. Files below are our own: ELF headers of 64 bytes, nothing else."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.jit import nccl_link, probe_jit
from stackcheck.readers.fsview import HostView

SITE = "opt/venv/lib/python3.12/site-packages"
HOME = "/usr/local/cuda-13.0"


def _elf(cls: int, machine: int, order: str = "<") -> bytes:
    ident = b"\x7fELF" + bytes([cls, 1 if order == "<" else 2, 1, 0]) + bytes(8)
    return ident + struct.pack(f"{order}HHI", 3, machine, 1) + bytes(48)


X86_64, AARCH64, I386 = _elf(2, 62), _elf(2, 183), _elf(1, 3)


def _put(root: Path, path: str, body: bytes) -> None:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(body)


def _facts(machine: str = "x86_64") -> dict[str, Any]:
    tk = {"path": HOME, "version": "13.0.88", "source": "CUDA_HOME", "nvcc": None, "active_for_build": True}
    torch = {"installed": True, "version": "2.11.0", "location": f"/{SITE}", "editable": False, "copies": 1}
    return {"cuda_toolkits": [tk], "packages": {"torch": torch}, "system": {"machine": machine}}


@pytest.mark.parametrize("body", [AARCH64, I386, _elf(2, 62, ">")], ids=["aarch64", "i386", "big-endian"])
def test_an_incompatible_libcudart_so_alone_is_not_found(tmp_path: Path, body: bytes) -> None:
    _put(tmp_path, f"{HOME}/lib64/libcudart.so", body)
    jit = probe_jit(_facts(), {"PATH": "/usr/bin"}, HostView(str(tmp_path)))
    assert jit["libcudart_so_found"] is False and "libcudart_so" not in jit, jit


def test_ld_searches_on_past_an_incompatible_one(tmp_path: Path) -> None:
    _put(tmp_path, f"{HOME}/lib64/libcudart.so", I386)
    _put(tmp_path, f"{HOME}/lib64/libcudart.a", b"!<arch>\n")  # the same directory's archive is tried next
    jit = probe_jit(_facts(), {"PATH": "/usr/bin"}, HostView(str(tmp_path)))
    assert jit["libcudart_so_found"] is True and jit["libcudart_so"] == f"{HOME}/lib64/libcudart.a"
    _put(tmp_path, "usr/lib/libnccl.so", I386)  # /usr/lib of a RHEL-like x86_64 box holds 32-bit libraries
    _put(tmp_path, "usr/local/lib/libnccl.so", X86_64)
    got = nccl_link({}, HostView(str(tmp_path)), HOME, True, "x86_64")
    assert got["libnccl_so_found"] is True and got["libnccl_so"] == "/usr/local/lib/libnccl.so", got


@pytest.mark.parametrize(
    "body", [X86_64, b"", b"INPUT(libcudart.so.13)\n", b"\x7fELF"], ids=["x86_64", "empty", "script", "short"]
)
def test_what_ld_takes_is_still_found(tmp_path: Path, body: bytes) -> None:
    """A matching ELF, and what ld takes as a linker script (an empty file links as an empty script with ld 2.40)."""
    _put(tmp_path, f"{HOME}/lib64/libcudart.so", body)
    jit = probe_jit(_facts(), {"PATH": "/usr/bin"}, HostView(str(tmp_path)))
    assert jit["libcudart_so_found"] is True and jit["libcudart_so"] == f"{HOME}/lib64/libcudart.so", jit


def test_an_aarch64_box_takes_its_own_and_skips_x86_64(tmp_path: Path) -> None:
    _put(tmp_path, f"{HOME}/lib64/libcudart.so", AARCH64)
    assert probe_jit(_facts("aarch64"), {}, HostView(str(tmp_path)))["libcudart_so_found"] is True
    _put(tmp_path, f"{HOME}/lib64/libcudart.so", X86_64)
    assert probe_jit(_facts("aarch64"), {}, HostView(str(tmp_path)))["libcudart_so_found"] is False


def test_an_architecture_not_read_leaves_an_elf_unknown(tmp_path: Path) -> None:
    _put(tmp_path, f"{HOME}/lib64/libcudart.so", X86_64)
    got = nccl_link({}, HostView(str(tmp_path)), HOME, True, "ppc64le")
    assert got["libcudart_so_found"] is None and "ppc64le" in got["libcudart_so_reason"], got
