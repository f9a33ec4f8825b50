"""checks.json nccl rule symm-mem-allocator-cudart-link read against the real wheels (igap24): SGLang's allocator is
built with load_inline(with_cuda=True); torch's _prepare_ldflags then adds -L<CUDA home>/lib64 (lib where only that
exists) and a bare -lcudart; and the pip CUDA runtime wheels ship only a versioned libcudart.so.N, which -lcudart does
not take. A torch that links another name, a SGLang that drops with_cuda, or a runtime wheel that ships libcudart.so
fails here."""

from __future__ import annotations

import re
import zipfile

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

ALLOCATOR = "sglang/srt/distributed/device_communicators/pynccl_allocator.py"
CPP_EXT = "torch/utils/cpp_extension.py"
SGLANG_ALL = ["0.5.1", "0.5.1.post3", *(f"0.5.{n}" for n in range(2, 24))]
SGLANG_DEFAULT = ["0.5.1", "0.5.5", "0.5.12", "0.5.23"]
TORCH = ["2.7.1", "2.8.0", "2.9.1", "2.11.0", "2.14.1"]
RUNTIME = [
    ("nvidia-cuda-runtime-cu12", "12.8.90", "nvidia/cuda_runtime"),
    ("nvidia-cuda-runtime", "13.0.96", "nvidia/cu13"),
]


@pytest.mark.registry
@pytest.mark.parametrize("version", SGLANG_ALL if run_all() else SGLANG_DEFAULT)
def test_the_allocator_is_built_with_cuda(version: str) -> None:
    code = read_texts(fetch_wheel("sglang", version), lambda n: n == ALLOCATOR)[ALLOCATOR]
    call = re.search(r"torch\.utils\.cpp_extension\.load_inline\((.*?)\n\s*\)", code, re.S)
    assert call is not None, version
    assert re.search(r"with_cuda\s*=\s*True", call.group(1)), f"{version}: {call.group(1)}"


@pytest.mark.registry
@pytest.mark.parametrize("version", TORCH)
def test_torchs_with_cuda_link_adds_the_cuda_homes_lib64_and_a_bare_lcudart(version: str) -> None:
    code = read_texts(fetch_wheel("torch", version), lambda n: n == CPP_EXT)[CPP_EXT]
    body = code[code.index("def _prepare_ldflags") :]
    body = body[: body.index("\ndef ", 1)]
    linux = body[body.index("elif not IS_HIP_EXTENSION") :]
    assert re.search(r'extra_lib_dir = "lib64"', linux) and re.search(r'extra_lib_dir = "lib"\n', linux), version
    assert "extra_ldflags.append(f'-L{_join_cuda_home(extra_lib_dir)}')" in linux, version
    assert "extra_ldflags.append('-lcudart')" in linux, version
    # the link runs the C++ compiler (so LIBRARY_PATH and the linker's own directories are searched as well)
    assert "command = $cxx $in $ldflags -o $out" in code, version


@pytest.mark.registry
@pytest.mark.parametrize(("dist", "version", "base"), RUNTIME)
def test_the_pip_runtime_wheels_ship_no_unversioned_libcudart(dist: str, version: str, base: str) -> None:
    with zipfile.ZipFile(fetch_wheel(dist, version)) as whl:
        names = whl.namelist()
    assert f"{base}/include/cuda_runtime.h" in names, dist
    libs = [n for n in names if n.startswith(f"{base}/lib/libcudart")]
    assert any(re.fullmatch(rf"{base}/lib/libcudart\.so\.\d+", n) for n in libs), libs
    assert f"{base}/lib/libcudart.so" not in names and f"{base}/lib/libcudart.a" not in names, libs
    assert not any(n.startswith(f"{base}/lib64/") for n in names), dist
