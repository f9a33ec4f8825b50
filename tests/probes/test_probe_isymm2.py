"""The jit probe's other hops of SGLang's `--enable-symm-mem` allocator build (torch's load_inline, -lnccl): torch's
own lib directory is the link's first -L (torch 2.8.0-2.14.1 _prepare_ldflags), so a libnccl.so there satisfies the
link; and the C++ compiler load_inline runs ($CXX, else c++) on the server's PATH. Read through a FileView below
tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stackcheck.probes import _TABLE
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.jit import JitProbe, probe_jit
from stackcheck.readers.fsview import HostView

SITE = "/opt/conda/lib/python3.12/site-packages"


def _touch(path: Path, mode: int = 0o644) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    path.chmod(mode)
    return path


def _facts(torch: dict[str, Any] | None) -> dict[str, Any]:
    tk = {"path": "/usr/local/cuda-12.8", "version": "12.8.93", "source": "/usr/local/cuda", "active_for_build": True}
    facts: dict[str, Any] = {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}
    if torch is not None:
        facts["packages"] = {"torch": torch}
    return facts


def _torch(location: str = SITE) -> dict[str, Any]:
    return {"installed": True, "version": "2.8.0", "location": location, "editable": False, "copies": 1}


def test_a_libnccl_so_in_torchs_own_lib_directory_satisfies_the_link(tmp_path: Path) -> None:
    """A conda/NGC-style torch keeping libnccl.so beside libtorch: -L<torch>/lib comes first on the link line.
    Before: that directory was not searched, libnccl_so_found was false and the gate refused (a false block)."""
    _touch(tmp_path / "usr/local/cuda-12.8/lib64/libcudart.so")
    _touch(tmp_path / SITE.lstrip("/") / "torch/lib/libnccl.so")
    jit = probe_jit(_facts(_torch()), {"PATH": "/usr/bin"}, HostView(str(tmp_path)))
    assert jit["libnccl_so_found"] is True, jit
    assert jit["libnccl_so"] == f"{SITE}/torch/lib/libnccl.so"
    assert jit["libnccl_so_dirs"][:2] == [f"{SITE}/torch/lib", "/usr/local/cuda-12.8/lib64"]


def test_only_the_versioned_library_in_torchs_lib_is_not_enough(tmp_path: Path) -> None:
    _touch(tmp_path / SITE.lstrip("/") / "torch/lib/libnccl.so.2")
    jit = probe_jit(_facts(_torch()), {}, HostView(str(tmp_path)))
    assert jit["libnccl_so_found"] is False and f"{SITE}/torch/lib" in jit["libnccl_so_dirs"]


def test_torchs_location_not_read_leaves_a_miss_unknown(tmp_path: Path) -> None:
    view = HostView(str(tmp_path))
    for torch in (None, {"error": "packages probe timed out"}, {"installed": True, "location": "rel/site"}):
        jit = probe_jit(_facts(torch), {}, view)
        assert jit["libnccl_so_found"] is None and "torch's location" in jit["libnccl_so_reason"], torch
    # torch not installed: no -L of its own to read (the server does not start either); the rest decides
    assert probe_jit(_facts({"installed": False}), {}, view)["libnccl_so_found"] is False
    # found elsewhere, the unread directory does not matter
    _touch(tmp_path / "usr/lib/x86_64-linux-gnu/libnccl.so")
    assert probe_jit(_facts(None), {}, view)["libnccl_so_found"] is True


def test_the_jit_probe_waits_for_the_packages(tmp_path: Path) -> None:
    """The runner hands a probe only the sections its needs name as finished: torch's location needs `packages`."""
    assert "packages" in JitProbe.needs
    assert next(row for row in _TABLE if row[0] == "jit")[4] == JitProbe.needs
    _touch(tmp_path / SITE.lstrip("/") / "torch/lib/libnccl.so")
    ctx = ProbeContext(env={}, view=HostView(str(tmp_path)), facts=_facts(_torch()))
    assert JitProbe().run(ctx).facts["jit"]["libnccl_so_found"] is True


def test_the_cxx_compiler_on_the_servers_path(tmp_path: Path) -> None:
    view = HostView(str(tmp_path))
    facts = _facts(_torch())
    none = probe_jit(facts, {"PATH": "/usr/local/bin:/usr/bin"}, view)
    assert none["cxx_found"] is False and "cxx" not in none
    _touch(tmp_path / "usr/bin/c++", 0o755)
    found = probe_jit(facts, {"PATH": "/usr/local/bin:/usr/bin"}, view)
    assert found["cxx_found"] is True and found["cxx"] == "/usr/bin/c++"
    # $CXX replaces c++; a file that is not executable is not a compiler
    assert probe_jit(facts, {"PATH": "/usr/bin", "CXX": "g++-13"}, view)["cxx_found"] is False
    _touch(tmp_path / "opt/gcc/bin/g++", 0o644)
    assert probe_jit(facts, {"CXX": "/opt/gcc/bin/g++"}, view)["cxx_found"] is False
    _touch(tmp_path / "opt/gcc/bin/g++", 0o755)
    assert probe_jit(facts, {"CXX": "/opt/gcc/bin/g++"}, view)["cxx"] == "/opt/gcc/bin/g++"
    # no PATH at all: /bin/sh's own default path (ninja runs the command through it)
    assert probe_jit(facts, {}, view)["cxx"] == "/usr/bin/c++"
    # an empty CXX is an empty command (torch's os.environ.get('CXX', 'c++') keeps it)
    assert probe_jit(facts, {"CXX": "", "PATH": "/usr/bin"}, view)["cxx_found"] is False


def test_a_cxx_not_read_is_null_with_the_reason(tmp_path: Path) -> None:
    view = HostView(str(tmp_path))
    for cxx in ("ccache g++", "bin/g++"):
        jit = probe_jit(_facts(_torch()), {"CXX": cxx, "PATH": "/usr/bin"}, view)
        assert jit["cxx_found"] is None and cxx in jit["cxx_reason"], jit


def _headers_box(root: Path) -> None:
    """A pip torch and a CUDA toolkit with its headers; NCCL from the nvidia-nccl wheel (nccl.h in site-packages)."""
    _touch(root / "usr/local/cuda-12.8/include/cuda_runtime.h")
    _touch(root / SITE.lstrip("/") / "torch/include/torch/extension.h")
    _touch(root / SITE.lstrip("/") / "nvidia/nccl/include/nccl.h")


def test_the_allocators_headers_where_the_compile_looks(tmp_path: Path) -> None:
    """0.5.5 on include cuda_runtime.h (the CUDA home's include, as torch's include_paths('cuda') passes it);
    0.5.1-0.5.4 include nccl.h, which the nvidia-nccl wheel keeps where no -isystem or default directory reaches."""
    _headers_box(tmp_path)
    view = HostView(str(tmp_path))
    jit = probe_jit(_facts(_torch()), {"PATH": "/usr/bin"}, view)
    assert jit["cxx_cuda_runtime_h_found"] is True and jit["cxx_nccl_h_found"] is False, jit
    # CPATH / CPLUS_INCLUDE_PATH reach it, as does libnccl-dev's /usr/include/nccl.h
    env = {"CPATH": f"{SITE}/nvidia/nccl/include"}
    assert probe_jit(_facts(_torch()), env, view)["cxx_nccl_h_found"] is True
    _touch(tmp_path / "usr/include/nccl.h")
    assert probe_jit(_facts(_torch()), {}, view)["cxx_nccl_h_found"] is True


def test_a_toolkit_without_its_headers_is_not_found(tmp_path: Path) -> None:
    """A runtime-only CUDA home (libraries, no include/): cuda_runtime.h is in none of the compile's directories."""
    _touch(tmp_path / "usr/local/cuda-12.8/lib64/libcudart.so.12")
    jit = probe_jit(_facts(_torch()), {}, HostView(str(tmp_path)))
    assert jit["cxx_cuda_runtime_h_found"] is False and "cxx_headers_reason" not in jit
    # the header in another architecture's triplet directory is not this compile's
    _touch(tmp_path / "usr/include/aarch64-linux-gnu/cuda_runtime.h")
    assert probe_jit(_facts(_torch()), {}, HostView(str(tmp_path)))["cxx_cuda_runtime_h_found"] is False
    _touch(tmp_path / "usr/include/x86_64-linux-gnu/cuda_runtime.h")
    assert probe_jit(_facts(_torch()), {}, HostView(str(tmp_path)))["cxx_cuda_runtime_h_found"] is True


def test_headers_not_read_are_null_with_the_reason(tmp_path: Path) -> None:
    view = HostView(str(tmp_path))
    for env, words in (({"CPATH": "inc"}, "'inc'"), ({"CPLUS_INCLUDE_PATH": "/a::/b"}, "''"),
                       ({"CXX": "/opt/conda/bin/x86_64-conda-linux-gnu-c++"}, "CXX="),
                       ({"CUDA_INC_PATH": "cuda/include"}, "CUDA_INC_PATH")):  # fmt: skip
        jit = probe_jit(_facts(_torch()), env, view)
        assert jit["cxx_cuda_runtime_h_found"] is None and words in jit["cxx_headers_reason"], (env, jit)
    unprobed = probe_jit({}, {}, view)
    assert unprobed["cxx_nccl_h_found"] is None and "cuda_toolkits" in unprobed["cxx_headers_reason"]
    # found in a directory read, an unread one does not matter
    _headers_box(tmp_path)
    assert probe_jit(_facts(_torch()), {"CPATH": "inc"}, view)["cxx_cuda_runtime_h_found"] is True
