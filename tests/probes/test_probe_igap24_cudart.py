"""The jit probe's look for the `libcudart.so` torch's own `-lcudart` needs (igap24, issue 16): every with_cuda link of
torch's load_inline, SGLang's `--enable-symm-mem` allocator's among them, adds -L<CUDA home>/lib64 (lib where only
that exists) and -lcudart (torch 2.7.1-2.14.1 _prepare_ldflags). A CUDA home assembled from pip wheels has
cuda_runtime.h but only lib/libcudart.so.12 or .13, which -lcudart does not take. Read through a FileView below
tmp_path, in the directories of the -lnccl look (tests/probes/test_probe_isymm.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.jit import JitProbe, nccl_link, probe_jit
from stackcheck.readers.fsview import HostView

SITE = "opt/venv/lib/python3.12/site-packages"
PIP13 = f"/{SITE}/nvidia/cu13"


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    return path


def _facts(home: str, version: str = "13.0.88") -> dict[str, Any]:
    tk = {"path": home, "version": version, "source": "CUDA_HOME", "nvcc": None, "active_for_build": True}
    torch = {"installed": True, "version": "2.9.1", "location": f"/{SITE}", "editable": False, "copies": 1}
    return {"cuda_toolkits": [tk], "packages": {"torch": torch}, "system": {"machine": "x86_64"}}


def _pip_cuda_home(root: Path) -> None:
    """CUDA_HOME at the nvidia/cu13 directory of the pip wheels nvidia-cuda-nvcc 13.0.88 and nvidia-cuda-runtime
    13.0.96: bin/nvcc, include/cuda_runtime.h, lib/libcudart.so.13 and lib/libcudart_static.a, no lib64."""
    base = root / PIP13.lstrip("/")
    _touch(base / "bin/nvcc")
    (base / "include").mkdir(parents=True)
    (base / "include/cuda_runtime.h").write_text("/* written for this test */\n")
    _touch(base / "lib/libcudart.so.13")
    _touch(base / "lib/libcudart_static.a")
    _touch(root / "usr/lib/x86_64-linux-gnu/libc.so.6")


def test_a_cuda_home_of_pip_wheels_has_headers_and_no_libcudart_so(tmp_path: Path) -> None:
    """The false pass: the compile finds cuda_runtime.h in the CUDA home, the link finds no libcudart.so. Before:
    the probe read the header only and the gate allowed (jit.libcudart_so_found did not exist)."""
    _pip_cuda_home(tmp_path)
    jit = probe_jit(_facts(PIP13), {"PATH": "/usr/bin"}, HostView(str(tmp_path)))
    assert jit["cxx_cuda_runtime_h_found"] is True
    assert jit["libcudart_so_found"] is False and "libcudart_so" not in jit and "libcudart_so_reason" not in jit
    # torch passes -L<home>/lib where lib64 does not exist: that directory is read, and its .so.13 is not taken
    assert f"{PIP13}/lib" in jit["libnccl_so_dirs"]


def test_a_complete_toolkits_lib64_link_satisfies_it(tmp_path: Path) -> None:
    """/usr/local/cuda-12.8/lib64 -> targets/x86_64-linux/lib, libcudart.so -> libcudart.so.12 (the runfile's and
    cuda-cudart-dev's layout)."""
    home = tmp_path / "usr/local/cuda-12.8"
    real = _touch(home / "targets/x86_64-linux/lib/libcudart.so.12.8.90")
    (real.parent / "libcudart.so.12").symlink_to(real.name)
    (real.parent / "libcudart.so").symlink_to("libcudart.so.12")
    (home / "lib64").symlink_to("targets/x86_64-linux/lib")
    jit = probe_jit(_facts("/usr/local/cuda-12.8", "12.8.93"), {}, HostView(str(tmp_path)))
    assert jit["libcudart_so_found"] is True and jit["libcudart_so"] == "/usr/local/cuda-12.8/lib64/libcudart.so"


def test_a_runtime_only_toolkit_is_not_enough(tmp_path: Path) -> None:
    """cuda-cudart without cuda-cudart-dev: only the versioned library (and a dangling development link)."""
    home = tmp_path / "usr/local/cuda-12.8"
    _touch(home / "lib64/libcudart.so.12")
    (home / "lib64/libcudart.so").symlink_to("libcudart.so.12.8.90")  # dangling: ld cannot open it either
    jit = probe_jit(_facts("/usr/local/cuda-12.8", "12.8.93"), {}, HostView(str(tmp_path)))
    assert jit["libcudart_so_found"] is False


def test_only_targets_lib_without_lib64_is_not_searched(tmp_path: Path) -> None:
    """torch passes only <home>/lib64 (or lib): a libcudart.so in targets/<triplet>/lib alone is not on the link."""
    _touch(tmp_path / "opt/cuda/targets/x86_64-linux/lib/libcudart.so")
    jit = probe_jit(_facts("/opt/cuda", "12.8.93"), {}, HostView(str(tmp_path)))
    assert jit["libcudart_so_found"] is False


def test_elsewhere_on_the_link_it_is_found(tmp_path: Path) -> None:
    """The fix the rule names (a libcudart.so on LIBRARY_PATH), the distribution's package (/usr/lib/<triplet>) and
    the static archive are each taken, as ld takes -lcudart."""
    _pip_cuda_home(tmp_path)
    view = HostView(str(tmp_path))
    _touch(tmp_path / "srv/cudart/libcudart.so")
    on = probe_jit(_facts(PIP13), {"LIBRARY_PATH": "/srv/cudart"}, view)
    assert on["libcudart_so_found"] is True and on["libcudart_so"] == "/srv/cudart/libcudart.so"
    _touch(tmp_path / "usr/lib/x86_64-linux-gnu/libcudart.a")
    distro = probe_jit(_facts(PIP13), {}, view)
    assert distro["libcudart_so"] == "/usr/lib/x86_64-linux-gnu/libcudart.a"


def test_not_known_where_a_searched_directory_cannot_be_read(tmp_path: Path) -> None:
    _pip_cuda_home(tmp_path)
    view = HostView(str(tmp_path))
    relative = probe_jit(_facts(PIP13), {"LIBRARY_PATH": "libs"}, view)
    assert relative["libcudart_so_found"] is None and "'libs'" in relative["libcudart_so_reason"]
    conda = probe_jit(_facts(PIP13), {"CXX": "/opt/conda/bin/x86_64-conda-linux-gnu-c++"}, view)
    assert conda["libcudart_so_found"] is None and "CXX" in conda["libcudart_so_reason"]
    unprobed = probe_jit({}, {}, view)
    assert unprobed["libcudart_so_found"] is None and "cuda_toolkits" in unprobed["libcudart_so_reason"]


def test_the_other_architectures_library_does_not_count(tmp_path: Path) -> None:
    _pip_cuda_home(tmp_path)
    _touch(tmp_path / "usr/lib/aarch64-linux-gnu/libcudart.so")
    view = HostView(str(tmp_path))
    assert probe_jit(_facts(PIP13), {}, view)["libcudart_so_found"] is False
    unknown = nccl_link({}, view, PIP13, True, None)
    assert unknown["libcudart_so_found"] is None and "aarch64" in unknown["libcudart_so_reason"]
    # the -lnccl look keeps its own answer beside it
    assert unknown["libnccl_so_found"] is False


def test_probe_class_reads_the_target_environment(tmp_path: Path) -> None:
    _pip_cuda_home(tmp_path)
    _touch(tmp_path / "srv/cudart/libcudart.so")
    view = HostView(str(tmp_path))
    ctx = ProbeContext(env={"LIBRARY_PATH": "/srv/cudart"}, view=view, facts=_facts(PIP13))
    assert JitProbe().run(ctx).facts["jit"]["libcudart_so_found"] is True
    bare = ProbeContext(env={}, view=view, facts=_facts(PIP13))
    assert JitProbe().run(bare).facts["jit"]["libcudart_so_found"] is False
