"""The cudalibs probe counts the audited interpreter's DT_RPATH (igap14): glibc's loader searches the executable's
DT_RPATH for every library the process loads whose requesting object has no DT_RUNPATH, before LD_LIBRARY_PATH
(elf/dl-load.c _dl_map_object: the loader chain's RPATHs, then the main map's; ld.so(8)). A conda Python carries
$ORIGIN/../lib there, so torch_memory_saver's preload hook (no RPATH/RUNPATH of its own) finds a conda
libcudart.so.12 in the scheduler process, and --enable-memory-saver must not be refused. An executable's DT_RUNPATH
serves only its own DT_NEEDED and does not count. The ELF files are written by tests/elfwriter.py, and one is
linked by the C compiler where there is one, and run under the real loader with a preloaded object. On the parent 9
of these fail (no interpreter argument)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from elfwriter import write_so

from stackcheck.probes.cudalibs import CudaLibsProbe, probe_cuda_libs
from stackcheck.probes.interface import ProbeContext
from stackcheck.readers.fsview import HostView

CUDART = "libcudart.so.12"


def _conda(root: Path, rpath: str | None = "$ORIGIN/../lib", runpath: str | None = None, lib: bool = True) -> str:
    """A conda-shaped prefix under `root`: bin/python -> python3.12 (an ELF with `rpath` / `runpath`) and, with
    `lib`, lib/libcudart.so.12 (conda's cuda-cudart package puts it there). Returns the interpreter's box path."""
    prefix = root / "opt" / "conda"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    write_so(prefix / "bin" / "python3.12", needed=["libpython3.12.so.1.0", "libc.so.6"], rpath=rpath, runpath=runpath)
    os.symlink("python3.12", prefix / "bin" / "python")
    if lib:
        write_so(prefix / "lib" / CUDART, soname=CUDART)
    return "/opt/conda/bin/python"


def test_the_interpreter_rpath_finds_conda_libcudart(tmp_path: Path) -> None:
    python = _conda(tmp_path)
    libs = probe_cuda_libs({}, HostView(str(tmp_path)), interpreter=python)
    assert libs[CUDART] == "/opt/conda/lib/libcudart.so.12"
    own = libs["interpreter_rpath"]
    assert own["rpath"] == "$ORIGIN/../lib" and own["dirs"] == ["/opt/conda/lib"]
    assert own["interpreter"] == python


def test_the_rpath_comes_before_ld_library_path(tmp_path: Path) -> None:
    python = _conda(tmp_path)
    (tmp_path / "other").mkdir()
    write_so(tmp_path / "other" / CUDART, soname=CUDART)
    libs = probe_cuda_libs({"LD_LIBRARY_PATH": "/other"}, HostView(str(tmp_path)), interpreter=python)
    assert libs[CUDART] == "/opt/conda/lib/libcudart.so.12"


def test_a_runpath_interpreter_does_not_count(tmp_path: Path) -> None:
    # DT_RUNPATH is not inherited by the libraries other objects need, and it turns the object's DT_RPATH off
    python = _conda(tmp_path, rpath="$ORIGIN/../lib", runpath="$ORIGIN/../lib")
    libs = probe_cuda_libs({}, HostView(str(tmp_path)), interpreter=python)
    assert libs[CUDART] is None and libs["interpreter_rpath"]["dirs"] == []
    assert libs["interpreter_rpath"]["runpath"] == "$ORIGIN/../lib"


def test_no_rpath_or_no_library_finds_nothing(tmp_path: Path) -> None:
    bare = _conda(tmp_path / "a", rpath=None)
    assert probe_cuda_libs({}, HostView(str(tmp_path / "a")), interpreter=bare)[CUDART] is None
    empty = _conda(tmp_path / "b", lib=False)
    assert probe_cuda_libs({}, HostView(str(tmp_path / "b")), interpreter=empty)[CUDART] is None


@pytest.mark.parametrize("content", [b'#!/bin/sh\nexec python3 "$@"\n', b"\x7fELF\x02\x01\x01" + b"\0" * 9])
def test_an_unreadable_interpreter_is_recorded_not_raised(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").write_bytes(content)
    libs = probe_cuda_libs({}, HostView(str(tmp_path)), interpreter="/bin/python")
    assert libs[CUDART] is None and "error" in libs["interpreter_rpath"]
    missing = probe_cuda_libs({}, HostView(str(tmp_path)), interpreter="/no/such/python")
    assert "error" in missing["interpreter_rpath"]


def test_the_probe_reads_the_target_interpreter(tmp_path: Path) -> None:
    from stackcheck.assembly.target import Target

    python = _conda(tmp_path)
    view = HostView(str(tmp_path))
    ctx = ProbeContext(env={}, root=str(tmp_path), view=view, target=Target(python, "test"))
    result = CudaLibsProbe().run(ctx)
    assert result.facts["cuda_libs"][CUDART] == "/opt/conda/lib/libcudart.so.12"


def test_memory_saver_is_not_refused_under_a_conda_interpreter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the facts the probe now writes: the memory-saver feature's hook-cudart-12 rule passes (it was blocked)
    from stackcheck.cli import main

    python = _conda(tmp_path / "box")
    libs = probe_cuda_libs({}, HostView(str(tmp_path / "box")), interpreter=python)
    torch = {"installed": True, "version": "2.9.1+cu128", "variant": "cu128", "cuda": "12.8"}
    packages: dict[str, Any] = {"sglang": {"installed": True, "version": "0.5.23"}, "torch": torch,
                                "torch-memory-saver": {"installed": True, "version": "0.0.10"}}  # fmt: skip
    facts = {"gpus": [{"index": 0, "name": "NVIDIA H200", "compute_capability": "9.0"}], "packages": packages,
             "cuda_libs": libs}  # fmt: skip
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    main(["audit", "--facts", str(path), "--format", "json"])
    feature = next(f for f in json.loads(capsys.readouterr().out)["features"] if f["id"] == "memory-saver")
    assert feature["status"] == "ok", feature["reasons"]


def _cc(cc: str, out: Path, source: str, *args: str) -> None:
    cmd = [cc, "-x", "c", "-", "-x", "none", "-o", str(out), *args]
    proc = subprocess.run(cmd, input=source.encode(), capture_output=True, timeout=60)
    if proc.returncode != 0:
        pytest.skip(f"the C compiler failed: {proc.stderr[-200:]!r}")


def test_a_linked_executable_and_the_real_loader_agree(tmp_path: Path) -> None:
    """Real executables linked with -rpath under --disable-new-dtags (DT_RPATH, as conda-build's python carries)
    and --enable-new-dtags (DT_RUNPATH), run with a preloaded object that needs libcudart.so.12 and carries no
    RPATH (torch_memory_saver's hook's shape): the probe's answer is the loader's (exit 0, or 127)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None or os.uname().sysname != "Linux":
        pytest.skip("no C compiler, or not Linux")
    lib = tmp_path / "build" / CUDART
    lib.parent.mkdir()
    _cc(cc, lib, "int cudart_probe(void){return 7;}\n", "-shared", "-fPIC", f"-Wl,-soname,{CUDART}")
    hook = tmp_path / "build" / "hook.so"
    source = "int cudart_probe(void); __attribute__((constructor)) static void init(void){ cudart_probe(); }\n"
    _cc(cc, hook, source, "-shared", "-fPIC", str(lib))
    found, ran = {}, {}
    for dtags in ("--disable-new-dtags", "--enable-new-dtags"):
        root = tmp_path / dtags.strip("-")
        _conda(root, rpath=None, lib=False)
        prefix = root / "opt" / "conda"
        shutil.copy(lib, prefix / "lib" / CUDART)
        exe = prefix / "bin" / "python3.12"
        exe.unlink()
        _cc(cc, exe, "int main(void){return 0;}\n", f"-Wl,{dtags}", "-Wl,-rpath,$ORIGIN/../lib")
        found[dtags] = probe_cuda_libs({}, HostView(str(root)), interpreter="/opt/conda/bin/python")[CUDART]
        env = {"PATH": "/usr/bin:/bin", "LD_PRELOAD": str(hook)}
        ran[dtags] = subprocess.run(
            [str(prefix / "bin" / "python")], env=env, capture_output=True, timeout=30
        ).returncode
    assert found == {"--disable-new-dtags": "/opt/conda/lib/libcudart.so.12", "--enable-new-dtags": None}
    assert ran == {"--disable-new-dtags": 0, "--enable-new-dtags": 127}
