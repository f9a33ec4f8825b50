"""checks.json nccl rules symm-mem-allocator-ninja / -cuda-home / -cxx and the jit probe's torch lib directory, read
against the real wheels: each SGLang release's allocator is C++ only (load_inline with_cuda=True and no cuda_sources:
nvcc never runs), and the torch it pins (METADATA Requires-Dist) checks for ninja before anything else, needs a CUDA
home for the link flags, compiles with $CXX or c++, and puts -L<torch>/lib on the link line. A release or torch that
changes any of these fails here."""

from __future__ import annotations

import re
import zipfile
from typing import Any

import pytest
from registry_wheels import fetch_wheel, read_texts, run_all

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load

ALLOCATOR = "sglang/srt/distributed/device_communicators/pynccl_allocator.py"
CPP_EXTENSION = "torch/utils/cpp_extension.py"
ALL = ["0.5.1", *(f"0.5.{n}" for n in range(2, 24))]
DEFAULT = ["0.5.1", "0.5.10", "0.5.17", "0.5.23"]
HOPS = ("symm-mem-allocator-ninja", "symm-mem-allocator-cuda-home", "symm-mem-allocator-cxx")


def _versions() -> list[str]:
    return ALL if run_all() else DEFAULT


def _rules() -> dict[str, dict[str, Any]]:
    nccl = next(c for c in load([], env={}).checks if c["id"] == "nccl")
    return {str(r["id"]): dict(r) for r in nccl["rules"] if str(r["id"]).startswith("symm-mem-allocator")}


def _torch_pin(version: str) -> str:
    wheel = fetch_wheel("sglang", version)
    with zipfile.ZipFile(wheel) as z:
        meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(meta).decode()
    pins = re.findall(r"^Requires-Dist: torch==([\d.]+)(?:;\s*extra == \"(\w+)\")?$", text, re.M)
    default = [v for v, extra in pins if extra in ("", "srt")]
    assert default, f"sglang {version}: no torch pin"
    return str(default[0])


def _function(code: str, name: str) -> str:
    start = code.index(f"\ndef {name}(")
    end = code.find("\ndef ", start + 1)
    return code[start : end if end > 0 else len(code)]


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_allocator_is_cpp_only_and_the_rules_name_its_torch(version: str) -> None:
    code = read_texts(fetch_wheel("sglang", version), lambda n: n == ALLOCATOR)[ALLOCATOR]
    call = re.search(r"torch\.utils\.cpp_extension\.load_inline\((.*?)\n\s*\)", code, re.S)
    assert call is not None, version
    assert "with_cuda=True" in call.group(1) and "cuda_sources" not in call.group(1), version
    # the headers its compile needs (rules symm-mem-allocator-nccl-header / -cuda-header)
    includes = re.findall(r"#include <([\w./]+)>", code)
    assert ("nccl.h" in includes) is (version_in(version, "<0.5.5") is True), (version, includes)
    assert "nccl.h" in includes or "cuda_runtime.h" in includes, (version, includes)
    nccl_scope = _rules()["symm-mem-allocator-nccl-header"]["when"]["all"][-1]["value"]
    assert nccl_scope == ">=0.5.1,<0.5.5"
    pin = _torch_pin(version)
    # the rules' shared source states each release's torch pin: "0.5.A-0.5.B torch X" / "0.5.A-0.5.B X"
    title = _rules()["symm-mem-allocator-cxx"]["source"][0]["title"]
    spans = re.findall(r"(0\.5\.\d+)-(0\.5\.\d+) (?:torch )?(\d+\.\d+\.\d+)", title)
    stated = [torch for lo, hi, torch in spans if version_in(version, f">={lo},<={hi}")]
    assert stated == [pin], (version, pin, spans)


@pytest.mark.registry
@pytest.mark.parametrize("version", _versions())
def test_the_pinned_torch_builds_as_the_rules_say(version: str) -> None:
    pin = _torch_pin(version)
    code = read_texts(fetch_wheel("torch", pin), lambda n: n == CPP_EXTENSION)[CPP_EXTENSION]
    build = _function(code, "_write_ninja_file_and_build_library")
    # ninja first (symm-mem-allocator-ninja), then the link flags, which need a CUDA home (-cuda-home)
    assert build.index("verify_ninja_availability()") < build.index("_prepare_ldflags("), pin
    assert re.search(r"check_output\(\s*(?:\['ninja', '--version'\]|'ninja --version'\.split\(\))", code), pin
    ldflags = _function(code, "_prepare_ldflags")
    # torch's own lib directory is on every non-Windows link line (the jit probe's first -lnccl directory)
    assert "extra_ldflags.append(f'-L{TORCH_LIB_PATH}')" in ldflags, pin
    assert "_join_cuda_home(extra_lib_dir)" in ldflags, pin
    join = _function(code, "_join_cuda_home")
    assert "if CUDA_HOME is None:" in join and "raise OSError('CUDA_HOME environment variable is not set" in join
    find = _function(code, "_find_cuda_home")
    order = [find.index(s) for s in ("os.environ.get('CUDA_HOME') or os.environ.get('CUDA_PATH')",
                                     'shutil.which("nvcc")', "cuda_home = '/usr/local/cuda'")]  # fmt: skip
    assert order == sorted(order), pin
    # the compiler: $CXX, else c++ (symm-mem-allocator-cxx), written into build.ninja as `cxx`
    assert "compiler = os.environ.get('CXX', 'c++')" in _function(code, "get_cxx_compiler"), pin
    # (2.13 on: through _wrap_compiler, ccache/sccache first where on PATH, which still runs the compiler)
    assert re.search(r"config\.append\(f'cxx = \{(?:compiler|_shell_join\(_wrap_compiler\(compiler\)\))\}'\)", code), (
        pin
    )
    assert "error_prefix=f\"Error building extension '{name}'\"" in build, pin
    # the compile's -isystem directories: torch's own, the CUDA home's include (symm-mem-allocator-cuda-header)
    include = _function(code, "include_paths")
    assert "cuda_home_include = _join_cuda_home('include')" in include and "CUDA_INC_PATH" in include, pin
    assert 'system_includes = include_paths("cuda")' in code, pin
    # each rule's torch source names this torch release
    for rule in HOPS:
        titles = " ".join(str(s.get("title")) for s in _rules()[rule]["source"])
        assert re.search(rf"(?<![\d.]){re.escape(pin)} :\d", titles), (rule, pin)
