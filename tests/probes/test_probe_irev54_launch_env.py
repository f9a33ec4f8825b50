"""irev54: the jit probe reads the environment the gated command's server starts with. Where the audited interpreter
is named otherwise (--python, --env, STACKCHECK_PYTHON) the probe context's `env` is the audit's own, while the gated
command's `env NAME=VALUE` prefix still sets the server's PATH and CXX (`launch_env`, as the loader probes read it).
tvm-ffi's and SGLang's ninja files take $CXX (else c++) from the server process and ninja is looked up on its PATH
(apache-tvm-ffi 0.1.9 tvm_ffi/cpp/extension.py:414 and :524-531; sglang 0.5.23
sglang/kernels/jit/utils/compile/toolchain.py:133-139), so the audit's PATH and CXX decided nothing there: a launch
whose prefix names a compiler the box lacks was allowed (false pass), one whose prefix adds the compiler's directory was
refused. Read through a FileView below tmp_path."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.jit import JitProbe
from stackcheck.readers.fsview import HostView


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF")
    path.chmod(0o755)


def _facts() -> dict[str, Any]:
    tk = {"path": "/usr/local/cuda-12.8", "version": "12.8.93", "source": "/usr/local/cuda", "active_for_build": True}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}


def _jit(root: Path, env: dict[str, str], launch_env: dict[str, str] | None) -> dict[str, Any]:
    ctx = ProbeContext(env=env, launch_env=launch_env, view=HostView(str(root)), facts=_facts())
    jit: dict[str, Any] = JitProbe().run(ctx).facts["jit"]
    return jit


def test_a_compiler_the_launch_names_and_the_box_lacks_is_not_found(tmp_path: Path) -> None:
    """`gate --python X -- env CXX=/opt/gcc-14/bin/g++ python -m sglang.launch_server ...`: the audit's c++ is there,
    the server's $CXX is not. Before: cxx_found true from the audit's environment (a false pass)."""
    _touch(tmp_path / "usr/bin/c++")
    _touch(tmp_path / "usr/bin/ninja")
    audit = {"PATH": "/usr/bin"}
    jit = _jit(tmp_path, audit, {"PATH": "/usr/bin", "CXX": "/opt/gcc-14/bin/g++"})
    assert jit["cxx_found"] is False and "cxx" not in jit, jit
    # a launch PATH without the directory that holds them: neither ninja nor c++ is found by the server
    jit = _jit(tmp_path, audit, {"PATH": "/opt/venv/bin"})
    assert jit["cxx_found"] is False and jit["ninja_found"] is False, jit


def test_a_compiler_on_the_launchs_own_path_is_found(tmp_path: Path) -> None:
    """`gate --python X -- env PATH=/opt/gcc/bin:/opt/venv/bin python -m ...`: the server finds them where the audit's
    PATH does not reach. Before: cxx_found and ninja_found false, and every 0.5.9+ launch refused (sglang-jit-cxx,
    sglang-jit-ninja)."""
    _touch(tmp_path / "opt/gcc/bin/c++")
    _touch(tmp_path / "opt/venv/bin/ninja")
    jit = _jit(tmp_path, {"PATH": "/usr/bin"}, {"PATH": "/opt/gcc/bin:/opt/venv/bin"})
    assert jit["cxx_found"] is True and jit["cxx"] == "/opt/gcc/bin/c++", jit
    assert jit["ninja_found"] is True and jit["ninja"] == "/opt/venv/bin/ninja", jit


def test_without_a_gated_command_the_audits_environment_decides(tmp_path: Path) -> None:
    _touch(tmp_path / "usr/bin/c++")
    assert _jit(tmp_path, {"PATH": "/usr/bin"}, None)["cxx_found"] is True
    assert _jit(tmp_path, {"PATH": "/opt/x"}, None)["cxx_found"] is False


def test_the_toolkit_a_jit_build_picks_follows_the_launchs_cuda_home(tmp_path: Path) -> None:
    """`gate --python X -- env CUDA_HOME=/usr/local/cuda-11.8 python -m sglang.launch_server ...`: the server's JIT
    builds take that toolkit (CUDA_HOME first: apache-tvm-ffi 0.1.9 tvm_ffi/cpp/extension.py:136, sglang 0.5.23
    sglang/kernels/jit/utils/compile/toolchain.py:50), not the audit's. Before: the audit's CUDA_HOME chose it (jit.cuda
    12.8, so marlin-jit-cxx20 passed a CUDA 11.8 build that rejects -std=c++20: a false pass)."""
    from stackcheck.probes.toolkits import ToolkitsProbe

    for version in ("11.8", "12.8"):
        home = tmp_path / f"usr/local/cuda-{version}"
        (home / "bin").mkdir(parents=True)
        (home / "version.txt").write_text(f"CUDA Version {version}.89\n")
        _touch(home / "bin/nvcc")
    audit = {"PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda-12.8"}
    launch = {"PATH": "/usr/bin", "CUDA_HOME": "/usr/local/cuda-11.8"}
    ctx = ProbeContext(env=audit, launch_env=launch, view=HostView(str(tmp_path)), path_dirs=[])
    tks = ToolkitsProbe().run(ctx).facts["cuda_toolkits"]
    (build,) = [t for t in tks if t["active_for_build"]]
    assert build["path"] == "/usr/local/cuda-11.8" and build["source"] == "CUDA_HOME", tks
    # no gated command: the audit's own
    tks = ToolkitsProbe().run(ctx.replace(launch_env=None)).facts["cuda_toolkits"]
    assert [t["path"] for t in tks if t["active_for_build"]] == ["/usr/local/cuda-12.8"], tks
