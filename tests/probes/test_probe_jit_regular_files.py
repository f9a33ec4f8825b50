"""The jit probe counts a compiler, a header or a libnccl for the link only where a regular file is there (after
links): a directory, a FIFO or a path the view cannot stat is not one (the compiler cannot run it, the include
cannot read it, ld cannot link it). Read through a FileView below tmp_path; a FIFO is never opened."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.jit import nccl_link, probe_jit
from stackcheck.readers.fsview import FileStat, HostView

HOME = "usr/local/cuda-13.0"


def _elf(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF" + bytes(60))
    return path


def _facts() -> dict[str, Any]:
    tk = {"path": "/" + HOME, "version": "13.0.88", "source": "CUDA_HOME", "nvcc": None, "active_for_build": True}
    torch = {"installed": True, "version": "2.9.1", "location": "/opt/site", "editable": False, "copies": 1}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}, "packages": {"torch": torch}}


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


class _Unstatable(HostView):
    """The host below a root where one path's stat answers nothing (a parent it may not search, a name it cannot
    read): the way a view says it cannot see a file."""

    def __init__(self, root: str, hidden: str) -> None:
        super().__init__(root)
        self.hidden = hidden

    def stat(self, path: str, follow_symlinks: bool = True) -> FileStat | None:
        return None if path == self.hidden else super().stat(path, follow_symlinks)


@pytest.mark.parametrize("kind", ["dir", "fifo", "link-to-dir"])
def test_nvcc_that_is_no_regular_file_is_not_found(tmp_path: Path, kind: str) -> None:
    nvcc = tmp_path / HOME / "bin/nvcc"
    if kind == "dir":
        nvcc.mkdir(parents=True)
    elif kind == "fifo":
        _fifo(nvcc)
    else:
        (tmp_path / HOME / "libexec").mkdir(parents=True)
        nvcc.parent.mkdir(parents=True)
        nvcc.symlink_to("../libexec")
    jit = probe_jit(_facts(), {}, HostView(str(tmp_path)))
    assert jit["nvcc"] is None and jit["nvcc_found"] is False
    # and the headers are then not known missing: no compiler of this toolkit was seen
    assert jit["fp8_header"] is None


def test_a_header_that_is_no_regular_file_is_missing(tmp_path: Path) -> None:
    _elf(tmp_path / HOME / "bin/nvcc")
    (tmp_path / HOME / "include/cuda_fp8.h").mkdir(parents=True)
    _fifo(tmp_path / HOME / "include/cuda_fp4.h")
    jit = probe_jit(_facts(), {}, HostView(str(tmp_path)))
    assert jit["nvcc_found"] is True
    assert jit["fp8_header"] is False and jit["fp4_header"] is False
    (tmp_path / HOME / "include/cuda_fp8.h").rmdir()
    (tmp_path / HOME / "include/cuda_fp8.h").write_text("/* fp8 */\n", encoding="utf-8")
    assert probe_jit(_facts(), {}, HostView(str(tmp_path)))["fp8_header"] is True


def test_a_runtime_header_that_is_no_regular_file_is_passed_over(tmp_path: Path) -> None:
    """The first include directory's cuda_runtime_api.h is a FIFO: not read (no hang), the next one's counts."""
    _elf(tmp_path / HOME / "bin/nvcc")
    _fifo(tmp_path / HOME / "include/cuda_runtime_api.h")
    split = tmp_path / HOME / "targets/x86_64-linux/include/cuda_runtime_api.h"
    split.parent.mkdir(parents=True)
    split.write_text("#define CUDART_VERSION 12090\n", encoding="utf-8")
    assert probe_jit(_facts(), {}, HostView(str(tmp_path)))["headers_cuda"] == "12.9"
    split.unlink()
    assert probe_jit(_facts(), {}, HostView(str(tmp_path)))["headers_cuda"] is None


@pytest.mark.parametrize("kind", ["dir", "fifo"])
def test_a_libnccl_so_that_is_no_regular_file_is_not_found(tmp_path: Path, kind: str) -> None:
    lib = tmp_path / "usr/lib/x86_64-linux-gnu/libnccl.so"
    if kind == "dir":
        lib.mkdir(parents=True)
    else:
        _fifo(lib)
    out = nccl_link({}, HostView(str(tmp_path)), "/" + HOME, True, "x86_64")
    assert out["libnccl_so_found"] is False and "libnccl_so" not in out
    # nor, in another triplet's directory, a reason to say not known
    other = tmp_path / "usr/lib/aarch64-linux-gnu/libnccl.so"
    other.mkdir(parents=True)
    out = nccl_link({}, HostView(str(tmp_path)), "/" + HOME, True, None)
    assert out["libnccl_so_found"] is False and "libnccl_so_reason" not in out


def test_a_path_the_view_cannot_stat_is_not_found(tmp_path: Path) -> None:
    _elf(tmp_path / HOME / "bin/nvcc")
    (tmp_path / HOME / "include").mkdir()
    (tmp_path / HOME / "include/cuda_fp8.h").write_text("/* fp8 */\n", encoding="utf-8")
    lib = _elf(tmp_path / "usr/lib/x86_64-linux-gnu/libnccl.so")
    seen = probe_jit(_facts(), {}, HostView(str(tmp_path)))
    assert seen["nvcc_found"] is True and seen["fp8_header"] is True and seen["libnccl_so_found"] is True
    hidden = "/usr/lib/x86_64-linux-gnu/libnccl.so"
    assert probe_jit(_facts(), {}, _Unstatable(str(tmp_path), hidden))["libnccl_so_found"] is False
    header = f"/{HOME}/include/cuda_fp8.h"
    assert probe_jit(_facts(), {}, _Unstatable(str(tmp_path), header))["fp8_header"] is False
    no_nvcc = probe_jit(_facts(), {}, _Unstatable(str(tmp_path), f"/{HOME}/bin/nvcc"))
    assert no_nvcc["nvcc"] is None and no_nvcc["nvcc_found"] is False
    assert lib.is_file()
