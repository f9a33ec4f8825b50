"""A directory named like a CUDA library in the loader's search (irev45): glibc opens it, its read fails and the
load ends there ("libcuda.so.1: cannot read file data: Is a directory", what a bind mount of a file missing on the
host leaves in a container; NVIDIA-ISAAC-ROS/isaac_ros_visual_slam#149 for libcusolver.so.11). The cuda_libs probe
passed over it to the next directory and reported that copy as found."""

from __future__ import annotations

import struct
from pathlib import Path

from stackcheck.probes.cudalibs import box_machine, probe_cuda_libs
from stackcheck.readers.fsview import HostView


def _library(path: Path, machine: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    head = bytearray(64)
    head[:7] = b"\x7fELF\x02\x01\x01"
    struct.pack_into("<HH", head, 16, 3, machine)  # ET_DYN, the box's machine
    path.write_bytes(bytes(head))


def test_a_directory_named_like_the_library_ends_the_search(tmp_path: Path) -> None:
    view = HostView(str(tmp_path))
    machine = box_machine(view)
    _library(tmp_path / "usr/lib64/libcudart.so.12", machine)  # a default directory's good copy
    env = {"LD_LIBRARY_PATH": "/opt/mounted/lib"}
    (tmp_path / "opt/mounted/lib").mkdir(parents=True)
    assert probe_cuda_libs(env, view)["libcudart.so.12"] == "/usr/lib64/libcudart.so.12"
    (tmp_path / "opt/mounted/lib/libcudart.so.12").mkdir()
    libs = probe_cuda_libs(env, view)
    assert libs["libcudart.so.12"] is None  # the load fails at the directory; the later copy is never tried
    (tmp_path / "opt/mounted/lib/libcudart.so.12").rmdir()
    (tmp_path / "opt/mounted/lib/libcudart.so.12").symlink_to("/nowhere")  # a dangling link: ENOENT, next place
    assert probe_cuda_libs(env, view)["libcudart.so.12"] == "/usr/lib64/libcudart.so.12"
