"""A bare SGLANG_NCCL_SO_PATH name (igap40) looked up on an LD_LIBRARY_PATH the loader reads otherwise than the probe
did (irev67). glibc splits LD_LIBRARY_PATH at ':' and ';' and keeps an empty or relative element, which it searches
from the process's working directory (elf/dl-load.c _dl_init_paths: fillin_rpath (llp_tmp, ..., ":;", ...); in
fillin_rpath an empty element gives the directory name "" and a relative one is kept as written). The probe split at
':' only and passed empty and relative elements over, so `LD_LIBRARY_PATH=:/opt/nccl/lib` (what `export
LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/nccl/lib` makes from an unset variable) read /opt/nccl/lib's copy where the
server loads the one in its working directory: a CUDA 13 build there under a CUDA 12 driver passed rule
nccl-so-path-cuda-driver (a false pass). Now such an element is read from the server's directory where it is known
(gate --cwd, `env -C`) and leaves the name unknown where it is not. The libraries are our own (tests/elfwriter.py)
with a version string of NCCL's shape."""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck
from elfwriter import build_so

from stackcheck.probes.jit import PYNCCL_FUNCTIONS, PYNCCL_WINDOW, nccl_so_path
from stackcheck.readers.fsview import HostView

NAME = "libnccl-irev67-test.so.2"
XY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _library(directory: Path, cuda: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    tail = b"\0" + f"NCCL version 2.27.7+cuda{cuda}".encode() + b"\0"
    path = directory / NAME
    path.write_bytes(build_so(defined=[*PYNCCL_FUNCTIONS, *PYNCCL_WINDOW], soname="libnccl.so.2") + tail)
    return path


def _box(tmp_path: Path) -> tuple[Path, Path]:
    """(the server's working directory, holding a CUDA 13.0 build; a system directory holding a CUDA 12.9 one)."""
    launch, system = tmp_path / "launch", tmp_path / "sys"
    _library(launch, "13.0")
    _library(launch / "lib", "13.0")
    _library(system, "12.9")
    return launch, system


@pytest.mark.parametrize("value", [":{sys}", "::{sys}", ".:{sys}", "lib:{sys}", "./lib;{sys}"])
def test_a_relative_element_is_searched_from_the_servers_directory(tmp_path: Path, value: str) -> None:
    # fails before: the system copy (CUDA 12.9) was read
    launch, system = _box(tmp_path)
    env = {"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": value.format(sys=system)}
    got = nccl_so_path(env, HostView(), cwd=str(launch))
    assert got["nccl_so_path_found"] is True and got["nccl_so_path_cuda"] == "13.0", got
    assert got["nccl_so_path"] == NAME, got


@pytest.mark.parametrize("value", [":{sys}", "lib:{sys}", "$ORIGIN/lib:{sys}"])
def test_a_relative_element_without_a_known_directory_is_unknown(tmp_path: Path, value: str) -> None:
    # fails before: found, the system copy (CUDA 12.9)
    _launch, system = _box(tmp_path)
    env = {"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": value.format(sys=system)}
    got = nccl_so_path(env, HostView())
    assert got["nccl_so_path_found"] is None and "nccl_so_path_cuda" not in got, got
    reason = str(got["nccl_so_path_reason"])
    assert ("dynamic string token" if "$" in value else "working directory") in reason, got


def test_absolute_elements_alone_are_read_as_before(tmp_path: Path) -> None:
    _launch, system = _box(tmp_path)
    got = nccl_so_path({"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": f"{tmp_path}/none:{system}/"}, HostView())
    assert got["nccl_so_path_found"] is True and got["nccl_so_path_cuda"] == "12.9", got


def test_a_semicolon_separates_elements(tmp_path: Path) -> None:
    # fails before: "/x;/y" was one directory, found nowhere
    _launch, system = _box(tmp_path)
    got = nccl_so_path({"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": f"{tmp_path}/none;{system}"}, HostView())
    assert got["nccl_so_path_found"] is True and got["nccl_so_path_cuda"] == "12.9", got


def test_the_gate_refuses_the_working_directorys_cuda13_build_under_a_cuda12_driver(tmp_path: Path) -> None:
    """The real `python -m stackcheck gate --cwd DIR --dry-run -- env LD_LIBRARY_PATH=:SYS SGLANG_NCCL_SO_PATH=NAME
    VENV/bin/python -m sglang.launch_server --tp 2` with the driver assumed at R575 (CUDA 12.9)."""
    import subprocess

    launch, system = _box(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    info = venv / "lib" / f"python{XY}" / "site-packages" / "sglang-0.5.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n")
    line = ["env", f"LD_LIBRARY_PATH=:{system}", f"SGLANG_NCCL_SO_PATH={NAME}", str(venv / "bin/python"), "-m",
            "sglang.launch_server", "--model-path", "m", "--tp", "2"]  # fmt: skip
    env = clean_env("VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH", XDG_CACHE_HOME=str(tmp_path / "cache"))
    args = ["--dry-run", "--format", "json", "--assume-gpu", "9.0x2", "--assume-driver", "575.57.08"]
    proc = run_stackcheck("gate", *args, "--cwd", str(launch), "--", *line, env=env, cwd=tmp_path, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    rules = {str(r.get("rule")): str(r.get("result")) for b in doc.get("reasons") or [] for r in b.get("reasons") or []}
    assert rules.get("nccl-so-path-cuda-driver") == "fail", (rules, proc.stderr[-300:])
    assert doc["decision"] != "allow"


UNREAD = "nccl-so-path-cuda-unread"


def _facts_gate(tmp_path: Path, jit: Mapping[str, object], *flags: str) -> dict[str, str]:
    """tests/cases/h200-newest at SGLang 0.5.11 with the jit probe's `jit` keys: the gate's {rule: result}."""
    from gate_cli import LLAMA3, cli_json, model_dir, release_box

    box = release_box(tmp_path, "0.5.11", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["jit"].update(jit)
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", LLAMA3)), *flags]
    _, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
    return {str(x.get("rule")): str(x.get("result")) for r in out.get("reasons") or [] for x in r.get("reasons") or []}


def test_a_library_not_placed_at_tp_2_is_unknown(tmp_path: Path) -> None:
    # fails before: nothing judged it (nccl-so-path-cuda-driver needs the library found and its CUDA build read)
    _launch, system = _box(tmp_path)
    jit = nccl_so_path({"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": f":{system}"}, HostView())
    assert jit["nccl_so_path_found"] is None, jit
    assert _facts_gate(tmp_path, jit, "--tp", "2").get(UNREAD) == "unknown"
    assert _facts_gate(tmp_path, jit, "--pp-size", "2").get(UNREAD) == "unknown"
    relative = {"nccl_so_path": "lib/libnccl.so.2", "nccl_so_path_found": None, "nccl_so_path_reason": "relative"}
    assert _facts_gate(tmp_path, relative, "--tp", "2").get(UNREAD) == "unknown"


def test_what_is_read_or_needs_no_reading_is_left_to_the_other_rules(tmp_path: Path) -> None:
    _launch, system = _box(tmp_path)
    read = nccl_so_path({"SGLANG_NCCL_SO_PATH": str(system / NAME)}, HostView())
    got = _facts_gate(tmp_path, read, "--tp", "2")
    assert UNREAD not in got and "nccl-so-path-cuda-driver" not in got, got  # (12.9 under the case's 13.0 driver)
    own = {"nccl_so_path": "libnccl.so.2", "nccl_so_path_found": True}  # torch's NCCL (igap40)
    missing = {"nccl_so_path": str(tmp_path / "none.so"), "nccl_so_path_found": False}  # pynccl falls back
    for jit in (own, missing):
        assert UNREAD not in _facts_gate(tmp_path, jit, "--tp", "2")
    unplaced = nccl_so_path({"SGLANG_NCCL_SO_PATH": NAME, "LD_LIBRARY_PATH": f":{system}"}, HostView())
    assert UNREAD not in _facts_gate(tmp_path, unplaced, "--tp", "1")  # (no group of more than one rank)
