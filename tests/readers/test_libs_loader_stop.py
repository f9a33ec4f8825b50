"""A place of the loader's search that holds something under the library's name that glibc neither loads nor passes
over (irev45): a directory (what a bind mount of a file missing on the host leaves), an empty file, a file that is
not ELF. glibc's open_verify ends the whole dlopen there ("cannot read file data: Is a directory", "file too short",
"invalid ELF header"); only an ELF object of another class or machine, or nothing, sends it on. The static
resolution passed over such places and named the next copy the winner: the check said the library resolves while
the real load fails (NVIDIA-ISAAC-ROS/isaac_ros_visual_slam#149: "libcusolver.so.11: cannot read file data: Is a
directory"). Both hops now stop where the loader stops."""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from elfwriter import build_so

from stackcheck.readers import libs
from stackcheck.readers.elf import EM_AARCH64, EM_X86_64

GCC = shutil.which("gcc")
needs_gcc = pytest.mark.skipif(GCC is None, reason="gcc not installed")
DEP = "libsctstop.so.1"


def _obj(tmp_path: Path) -> libs.ObjectInfo:
    """An object whose RUNPATH searches A, then B (B holds the good copy)."""
    return libs.ObjectInfo(str(tmp_path / "libuser.so"), [DEP], None, "$ORIGIN/A:$ORIGIN/B", EM_X86_64)


def _good(path: Path, machine: int = EM_X86_64) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = bytearray(build_so(defined=["sct_dep"], soname=DEP))
    struct.pack_into("<H", data, 18, machine)
    path.write_bytes(bytes(data))


def _plant(tmp_path: Path, what: str) -> None:
    a = tmp_path / "A" / DEP
    a.parent.mkdir(parents=True, exist_ok=True)
    if what == "directory":
        a.mkdir()
    elif what == "empty":
        a.write_bytes(b"")
    elif what == "text":
        a.write_text("INPUT(-lsomething)\n" * 8)
    elif what == "aarch64":
        _good(a, EM_AARCH64)


STOPS = {"directory": "Is a directory", "empty": "file too short", "text": "invalid ELF header"}


@pytest.mark.parametrize("what", ["directory", "empty", "text", "aarch64", "nothing"])
def test_the_search_ends_where_glibc_ends_it(tmp_path: Path, what: str) -> None:
    _good(tmp_path / "B" / DEP)
    _plant(tmp_path, what)
    obj = _obj(tmp_path)
    res = libs.resolve_needed(obj, DEP, {}, [], dirs_default=[], stop=libs.loader_stop)
    won = libs.loader_winner(obj, DEP, {}, [], stop=libs.loader_stop)
    if what in STOPS:
        assert res["winner"] is None and STOPS[what] in res["stopped"]["error"]
        assert res["stopped"]["path"] == str(tmp_path / "A" / DEP) and res["stopped"]["via"] == "runpath"
        assert isinstance(won, str) and STOPS[what] in won
        (warning,) = libs.warnings_for(res, "pkg/libuser.so")
        assert "A/" + DEP in warning and STOPS[what] in warning and "fails" in warning
    else:  # another machine's copy, or none: the search goes on to B
        assert res["winner"] == str(tmp_path / "B" / DEP) and "stopped" not in res
        assert won == (str(tmp_path / "B" / DEP), "runpath")


def test_a_stop_after_the_winner_changes_nothing(tmp_path: Path) -> None:
    _good(tmp_path / "A" / DEP)
    (tmp_path / "B" / DEP).mkdir(parents=True)
    res = libs.resolve_needed(_obj(tmp_path), DEP, {}, [], dirs_default=[], stop=libs.loader_stop)
    assert res["winner"] == str(tmp_path / "A" / DEP) and "stopped" not in res


@needs_gcc
@pytest.mark.parametrize("what", ["directory", "empty", "text", "nothing"])
def test_resolve_object_agrees_with_the_real_loader(tmp_path: Path, what: str) -> None:
    assert GCC is not None
    b = tmp_path / "B"
    b.mkdir()
    (tmp_path / "dep.c").write_text("int sct_dep(void){return 1;}\n")
    subprocess.run([GCC, "-shared", "-fPIC", "-o", str(b / DEP), str(tmp_path / "dep.c"), f"-Wl,-soname,{DEP}"],
                   check=True, timeout=60)  # fmt: skip
    (tmp_path / "user.c").write_text("int sct_dep(void); int sct_user(void){return sct_dep();}\n")
    subprocess.run([GCC, "-shared", "-fPIC", "-o", str(tmp_path / "libuser.so"), str(tmp_path / "user.c"),
                    "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/A:$ORIGIN/B", f"-L{b}", f"-l:{DEP}"],
                   check=True, timeout=60)  # fmt: skip
    _plant(tmp_path, what)
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    code = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    real = subprocess.run([sys.executable, "-c", code, str(tmp_path / "libuser.so")], env=env,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    obj = libs.read_object(str(tmp_path / "libuser.so"))
    res = libs.resolve_needed(obj, DEP, {}, [], dirs_default=[], stop=libs.loader_stop)
    if what in STOPS:
        assert real.returncode != 0 and STOPS[what] in real.stderr
        assert res["winner"] is None and STOPS[what] in res["stopped"]["error"]
    else:
        assert real.returncode == 0, real.stderr
        assert res["winner"] == str(b / DEP)
    got = libs.resolve_object(tmp_path / "libuser.so", "libuser.so", {}, [], wanted=re.compile(r"^libsct"))
    (lib,) = got["libs"]
    assert (lib["winner"] is None) == (what in STOPS)
    assert bool(got["warnings"]) == (what in STOPS)


def test_the_second_hop_stops_where_the_loader_stops(tmp_path: Path) -> None:
    """torch -> libcusparse.so.12 (its wheel's RUNPATH) -> libnvJitLink.so.12, with a directory of that name first on
    LD_LIBRARY_PATH: libcusparse's load fails there, so its dependency is not judged as found in the wheel."""
    from stackcheck.readers.fsview import HostView

    site = tmp_path / "site"
    torch_cuda = site / "torch/lib/libtorch_cuda.so"
    for path, kw in (
        (torch_cuda, {"needed": ["libcusparse.so.12"], "rpath": "$ORIGIN/../../nvidia/cusparse/lib"}),
        (site / "nvidia/cusparse/lib/libcusparse.so.12",
         {"needed": ["libnvJitLink.so.12"], "soname": "libcusparse.so.12",
          "runpath": "$ORIGIN:$ORIGIN/../../nvjitlink/lib"}),
        (site / "nvidia/nvjitlink/lib/libnvJitLink.so.12", {"soname": "libnvJitLink.so.12"}),
    ):  # fmt: skip
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(build_so(defined=["sct_x"], **kw))
    (tmp_path / "env/libnvJitLink.so.12").mkdir(parents=True)
    env = {"LD_LIBRARY_PATH": str(tmp_path / "env")}
    hop = libs.follow_torch_libraries([str(torch_cuda)], str(site), env, [], HostView(), {})
    assert not [x for x in hop["libraries"] if x["needed"] == "libnvJitLink.so.12"]
    (error,) = [e for e in hop["errors"] if "libnvJitLink.so.12" in e]
    assert "env/libnvJitLink.so.12" in error and "Is a directory" in error
    (tmp_path / "env/libnvJitLink.so.12").rmdir()  # without it: the wheel's copy, through the RUNPATH
    hop = libs.follow_torch_libraries([str(torch_cuda)], str(site), env, [], HostView(), {})
    (found,) = [x for x in hop["libraries"] if x["needed"] == "libnvJitLink.so.12"]
    assert found["winner"].endswith("nvidia/nvjitlink/lib/libnvJitLink.so.12") and found["via"] == "runpath"
