"""irev55: nvcc's host compiler must compile C++. nvcc hands the host side of a .cu file to its default host compiler,
gcc on the PATH, as C++ (nvcc 13.0.88 of the nvidia-cuda-nvcc wheel, -dryrun -c: 'gcc ... -E -x c++', 'gcc ... -c -x
c++'), and the gcc driver compiles C++ with cc1plus (gcc 12, gcc -### -x c++), which Debian ships in the g++-N
package, not in gcc-N / cpp-N (dpkg -S on Debian 12: g++-12 owns /usr/lib/gcc/x86_64-linux-gnu/12/cc1plus, cpp-12
owns .../12/cc1). A box with gcc but no g++ had jit.nvcc_host_found true, so sglang-jit-nvcc-host passed, and where
$CXX names another compiler (clang++) sglang-jit-cxx passed too: the first JIT build then failed ('cannot execute
cc1plus'). The probe now reads the found gcc's own program directory (PREFIX/lib/gcc/TRIPLET/VERSION or
PREFIX/libexec/gcc/...): where it holds cc1 and no cc1plus, the host compiler is not found. A layout it does not
know (no such directory) is left as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.probes.jit import probe_jit
from stackcheck.readers.fsview import HostView

HOME = "/usr/local/cuda-12.8"
RULE = "sglang-jit-nvcc-host"


def _touch(path: Path, body: bytes = b"\x7fELF") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(body)
    path.chmod(0o755)


def _facts() -> dict[str, Any]:
    tk = {"path": HOME, "version": "12.8.93", "source": "/usr/local/cuda", "active_for_build": True}
    return {"cuda_toolkits": [tk], "system": {"machine": "x86_64"}}


def _box(root: Path, libexec: str, *, cc1plus: bool) -> HostView:
    _touch(root / HOME.lstrip("/") / "bin/nvcc")
    _touch(root / "usr/bin/clang++")
    _touch(root / "usr/bin/gcc")
    _touch(root / libexec / "cc1")
    if cc1plus:
        _touch(root / libexec / "cc1plus")
    return HostView(str(root))


ENV = {"PATH": "/usr/local/bin:/usr/bin", "CXX": "clang++"}


def test_debian_gcc_without_g_plus_plus_is_no_host_compiler(tmp_path: Path) -> None:
    jit = probe_jit(_facts(), ENV, _box(tmp_path, "usr/lib/gcc/x86_64-linux-gnu/12", cc1plus=False))
    assert jit["cxx_found"] is True and jit["nvcc_host_found"] is False, jit
    assert "cc1plus" in jit["nvcc_host_reason"], jit


def test_rhel_gcc_without_gcc_cxx_is_no_host_compiler(tmp_path: Path) -> None:
    jit = probe_jit(_facts(), ENV, _box(tmp_path, "usr/libexec/gcc/x86_64-redhat-linux/11", cc1plus=False))
    assert jit["nvcc_host_found"] is False, jit


def test_gcc_with_cc1plus_or_an_unknown_layout_is_found(tmp_path: Path) -> None:
    jit = probe_jit(_facts(), ENV, _box(tmp_path / "a", "usr/lib/gcc/x86_64-linux-gnu/12", cc1plus=True))
    assert jit["nvcc_host_found"] is True and jit["nvcc_host"] == "/usr/bin/gcc", jit
    # a second version that has cc1plus (the gcc symlink's own version is not read): found
    root = tmp_path / "b"
    _box(root, "usr/lib/gcc/x86_64-linux-gnu/12", cc1plus=False)
    _touch(root / "usr/lib/gcc/x86_64-linux-gnu/13/cc1plus")
    assert probe_jit(_facts(), ENV, HostView(str(root)))["nvcc_host_found"] is True
    # no lib/gcc or libexec/gcc directory beside the gcc: not read, left as found
    root = tmp_path / "c"
    _touch(root / HOME.lstrip("/") / "bin/nvcc")
    _touch(root / "usr/bin/gcc")
    assert probe_jit(_facts(), ENV, HostView(str(root)))["nvcc_host_found"] is True


def test_the_gate_refuses_with_words_that_name_the_cxx_compiler(tmp_path: Path) -> None:
    path = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(path.read_text())
    jit = doc["facts"]["jit"]
    jit.update(cxx_found=True, cxx="/usr/bin/clang++", nvcc_host_found=False, nvcc_host="/usr/bin/gcc")
    path.write_text(json.dumps(doc))
    model = model_dir(tmp_path, "llama3", LLAMA3)
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1"]
    out = cli_json(["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line])[1]
    hits = [x for r in out.get("reasons") or [] for x in r.get("reasons") or [] if x.get("rule") == RULE]
    assert out["decision"] == "refuse" and hits, out.get("reasons")
    assert "g++" in json.dumps(hits), hits
