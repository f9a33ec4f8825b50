"""igap43 (issue 16 item 1): a relative or empty PATH entry in the JIT probe's program lookups.

`fsview.which` passed such an entry over, so a program further on the PATH stood for the one that entry may hold. Where
it is looked up decides what is right:

- the JIT build's own programs (ninja, $CXX / c++, nvcc's gcc, NVCC_CCBIN, CC, PYTORCH_NVCC, collect2's ld:
  tests/launch/test_gate_igap43_relative_ld.py) start in
  the build directory: torch 2.8.0 cpp_extension.py:2595-2601 `subprocess.run(..., cwd=build_directory)`, FlashInfer
  0.6.18 cpp_ext.py:370-374, tvm-ffi 0.1.9 extension.py:531-533, SGLang 0.5.23 kernels/jit/utils/compile/ninja.py:
  160-162; a relative entry is that directory's (Python 3.11.7 run here: subprocess.run(['tool'], cwd=B,
  env={'PATH': 'rel'}) ran B/rel/tool). The build directory is not read: the key is unknown (null with a reason),
  never the next program's answer;
- tvm-ffi's _find_rocm_home runs shutil.which("hipcc") in the server's own process (0.1.9 extension.py:212): the
  server's working directory (gate --cwd), looked up there where known, unknown where not.
Read through a FileView below tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView, which_known


def _exe(path: Path, body: bytes = b"#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)
    return path


def _facts() -> dict[str, Any]:
    tk = {"path": "/usr/local/cuda", "version": "13.0.88", "source": "/usr/local/cuda", "active_for_build": True}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}


def _box(tmp_path: Path) -> HostView:
    for name in ("c++", "g++", "gcc", "ninja", "ld", "ccache"):
        _exe(tmp_path / "usr/bin" / name)
    _exe(tmp_path / "usr/local/cuda/bin/nvcc", b"\x7fELF\x02\x01\x01" + b"\0" * 57)
    return HostView(str(tmp_path))


def test_which_known_stops_at_a_relative_entry_it_cannot_read(tmp_path: Path) -> None:
    view = _box(tmp_path)
    assert which_known(view, "c++", "/usr/bin:.venv/bin", None, "B") == ("/usr/bin/c++", "")  # (after the hit)
    found, why = which_known(view, "c++", ".venv/bin:/usr/bin", None, "the build directory")
    assert found is None and "'.venv/bin'" in why and "the build directory" in why
    found, why = which_known(view, "c++", ":/usr/bin", None, "B")
    assert found is None and "an empty entry" in why
    _exe(tmp_path / "srv/app/.venv/bin/c++")  # a known directory: the entry is joined to it, as execvp's kernel does
    assert which_known(view, "c++", ".venv/bin:/usr/bin", "/srv/app", "B") == ("/srv/app/.venv/bin/c++", "")
    assert which_known(view, "c++", "bin:/usr/bin", "/srv/app", "B") == ("/usr/bin/c++", "")
    assert which_known(view, "nothing", "/usr/bin", None, "B") == (None, "")


@pytest.mark.parametrize("path_value", [".venv/bin:/usr/bin", ":/usr/bin", "/opt/none:tools:/usr/bin"])
def test_the_builds_programs_are_unknown_behind_a_relative_entry(tmp_path: Path, path_value: str) -> None:
    """Before: cxx_found, ninja_found and nvcc_host_found true from /usr/bin (the build may run another c++ from its
    directory's relative entry): a pass the box had not earned."""
    view = _box(tmp_path)
    jit = probe_jit(_facts(), {"PATH": path_value}, view)
    assert jit["cxx_found"] is None and "relative" in jit["cxx_reason"], jit
    assert jit["ninja_found"] is None and "build" in jit["ninja_reason"], jit
    assert jit["nvcc_host_found"] is None and "relative" in jit["nvcc_host_reason"], jit
    # the same box with the PATH absolute: found, as before
    plain = probe_jit(_facts(), {"PATH": "/usr/bin"}, view)
    assert (plain["cxx_found"], plain["ninja_found"], plain["nvcc_host_found"]) == (True, True, True), plain


def test_cc_ccbin_pytorch_nvcc_and_cxx_split_behind_a_relative_entry(tmp_path: Path) -> None:
    view = _box(tmp_path)
    env = {"PATH": "bin:/usr/bin", "CC": "gcc", "PYTORCH_NVCC": "nvcc", "NVCC_CCBIN": "g++", "CXX": "ccache g++"}
    jit = probe_jit(_facts(), env, view)
    assert jit["cc_host_found"] is None and "relative" in jit["cc_host_reason"], jit
    assert jit["pytorch_nvcc_found"] is None and "relative" in jit["pytorch_nvcc_reason"], jit
    assert "nvcc_host_found" not in jit and "NVCC_CCBIN='g++'" in jit["nvcc_host_reason"], jit
    assert jit["cxx_split_found"] is None and "relative" in jit["cxx_split_reason"], jit
    assert jit["cxx_quoted_found"] is None and "relative" in jit["cxx_quoted_reason"], jit


def test_rocm_home_joins_a_relative_entry_to_the_known_launch_directory(tmp_path: Path) -> None:
    """tvm-ffi's shutil.which('hipcc') runs in the server's process: gate --cwd DIR's entry `rocm/bin` is DIR/rocm/bin.
    Before: rocm_home absent (no /opt/rocm), rule tvm-ffi-rocm-home passed while tvm-ffi picked its HIP backend."""
    view = _box(tmp_path)
    _exe(tmp_path / "srv/app/rocm/bin/hipcc")
    env = {"PATH": "rocm/bin:/usr/bin"}
    assert probe_jit(_facts(), env, view, cwd="/srv/app")["rocm_home"] == "/srv/app/rocm"
    unknown = probe_jit(_facts(), env, view)  # no launch directory: null (a rule's `exists` is unknown), not absent
    assert "rocm_home" in unknown and unknown["rocm_home"] is None, unknown
    assert "working directory" in unknown["rocm_home_reason"]
    _exe(tmp_path / "opt/rocm-6.4/bin/hipcc")  # a hipcc before the relative entry: found as before
    assert probe_jit(_facts(), {"PATH": "/opt/rocm-6.4/bin:rocm/bin"}, view)["rocm_home"] == "/opt/rocm-6.4"
    assert "rocm_home" not in probe_jit(_facts(), env, view, cwd="/srv/elsewhere")
