"""SGLANG_NCCL_SO_PATH as a bare name (igap40, issue 16 item 3; probe stackcheck/probes/jit.py nccl_so_path, rules
symm-mem-nccl-so-path-version and symm-mem-nccl-wheel-cu12 / -cu13 / -system / -unread).

SGLang's pynccl hands the value to ctypes.CDLL as it is; dlopen of a name without a slash first takes an object
already loaded under that name or soname (glibc elf/dl-load.c _dl_map_object), then searches the loader's path.
"libnccl.so.2" is pynccl's own default (find_nccl_library's else branch): torch's libtorch_cuda.so NEEDs it, so it
is the NCCL torch loaded, which the wheel rules judge as for the variable unset (it was unknown on 0.5.1-0.5.4).
Another bare name is looked up as the dynamic loader would (LD_LIBRARY_PATH, the ld.so cache, the default
directories: stackcheck/probes/cudalibs.py probe_cuda_libs, the kernel runtime libraries' reading), and the file
found is read as a path would be; a name not found there stays unknown (the calling module's own RPATH is not
read). The libraries are our own (tests/elfwriter.py) with a version string of NCCL's shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from elfwriter import build_so
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_WINDOW, nccl_so_path
from stackcheck.readers.fsview import HostView

NAME = "libnccl-igap40-test.so.2"


def _library(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tail = b"\0" + f"NCCL version {version}+cuda13.0".encode() + b"\0"
    path.write_bytes(build_so(defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW], soname="libnccl.so.2") + tail)
    return path


def test_a_bare_name_is_found_on_ld_library_path(tmp_path: Path) -> None:
    # fails on the parent: a bare name was null (not read)
    _library(tmp_path / "lib" / NAME, "2.26.5")
    got = nccl_so_path({"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": str(tmp_path / "lib")}, HostView())
    assert got["nccl_so_path"] == NAME and got["nccl_so_path_found"] is True, got
    assert got["nccl_so_path_version"] == "2.26.5" and got["nccl_so_path_window"] is True, got


def test_a_bare_name_not_on_the_loaders_path_is_unknown(tmp_path: Path) -> None:
    _library(tmp_path / "elsewhere" / NAME, "2.27.7")
    got = nccl_so_path({"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": str(tmp_path / "lib")}, HostView())
    assert got["nccl_so_path_found"] is None and "LD_LIBRARY_PATH" in str(got["nccl_so_path_reason"]), got


def test_the_interpreters_rpath_comes_before_ld_library_path(tmp_path: Path) -> None:
    """A conda-shaped Python (DT_RPATH $ORIGIN/../lib) whose lib holds an NCCL 2.26.5 of that name, and a 2.27.7 on
    LD_LIBRARY_PATH: the loader takes the first (the executable's DT_RPATH is searched before LD_LIBRARY_PATH)."""
    from elfwriter import write_so

    prefix = tmp_path / "opt" / "conda"
    (prefix / "bin").mkdir(parents=True)
    write_so(prefix / "bin" / "python3.12", needed=["libc.so.6"], rpath="$ORIGIN/../lib")
    _library(prefix / "lib" / NAME, "2.26.5")
    _library(tmp_path / "other" / NAME, "2.27.7")
    env = {"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": "/other"}
    view = HostView(str(tmp_path))
    assert nccl_so_path(env, view)["nccl_so_path_version"] == "2.27.7"  # (the interpreter not known)
    got = nccl_so_path(env, view, interpreter="/opt/conda/bin/python3.12")
    assert (got["nccl_so_path_found"], got["nccl_so_path_version"]) == (True, "2.26.5"), got


def _gate(tmp_path: Path, release: str, value: str, wheel: str, env: dict[str, str]) -> dict[str, str]:
    """h200-newest at `release`, its nvidia-nccl-cu13 wheel at `wheel`, SGLANG_NCCL_SO_PATH=`value` read by the
    probe with `env`; the launch at tp 2 with --enable-symm-mem: {rule: result} of the NCCL rules."""
    box = release_box(tmp_path, release, "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"]["nvidia-nccl-cu13"].update(version=wheel, dist_version=wheel)
    section = doc["facts"]["jit"]
    section.update(libnccl_so_found=True, libnccl_so="/usr/lib/x86_64-linux-gnu/libnccl.so", cxx_found=True,
                   cxx="/usr/bin/c++", cxx_cuda_runtime_h_found=True, cxx_nccl_h_found=True,
                   libcudart_so_found=True)  # fmt: skip
    section.update(nccl_so_path({"SGLANG_NCCL_SO_PATH": value, **env}, HostView()))
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)),
            "--tp", "2", "--enable-symm-mem"]  # fmt: skip
    _, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    reasons = [x for r in out.get("reasons") or [] for x in r.get("reasons") or []]
    return {str(x.get("rule")): str(x.get("result")) for x in reasons if "nccl" in str(x.get("rule"))}


@pytest.mark.parametrize("release", ["0.5.1", "0.5.4"])
def test_libnccl_so_2_is_torchs_nccl_judged_by_the_wheel_rules(tmp_path: Path, release: str) -> None:
    # fails on the parent: symm-mem-nccl-so-path-version was unknown whatever torch's NCCL
    assert _gate(tmp_path, release, "libnccl.so.2", "2.30.7", {}) == {}  # (torch 2.14.1's pin)
    old = _gate(tmp_path, release, "libnccl.so.2", "2.26.2", {})
    # (ifc46: below torch 2.14.1's pin 2.30.7, `import torch` itself fails too)
    assert old == {"symm-mem-nccl-wheel-cu13": "fail", "torch-nccl-wheel-pin-cu13": "fail"}, old


def test_an_old_nccl_found_by_bare_name_fails_the_assertion(tmp_path: Path) -> None:
    # fails on the parent: unknown
    _library(tmp_path / "lib" / NAME, "2.26.5")
    got = _gate(tmp_path, "0.5.4", NAME, "2.30.7", {"LD_LIBRARY_PATH": str(tmp_path / "lib")})
    assert got == {"symm-mem-nccl-so-path-version": "fail"}, got


def test_a_new_nccl_found_by_bare_name_passes(tmp_path: Path) -> None:
    _library(tmp_path / "lib" / NAME, "2.27.7")
    assert _gate(tmp_path, "0.5.4", NAME, "2.30.7", {"LD_LIBRARY_PATH": str(tmp_path / "lib")}) == {}
