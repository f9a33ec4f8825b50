"""imend3: the --deep resolver (readers/libs.py search_path) reads LD_LIBRARY_PATH as glibc does, through the one
reader (readers/ldpath.py ld_library_path, formerly the cuda_libs probe's): split at ':' and ';', an empty element the
working directory, a relative one read from it, and $ORIGIN expanded against the executable, not the object (glibc
elf/dl-load.c _dl_init_paths: fillin_rpath (..., ":;", ..., l) with l the main object's map). Before, its own
expand_dirs dropped empty elements, kept '/a;/b' as one directory, read a relative element from stackcheck's own
working directory (this host's file, under gate --facts another box's) and expanded $ORIGIN from the object: it
judged the wrong copy. Now a library not found before an element it cannot place is unknown ("unknown", never a
warning, never a winner), read from the launch directory where one is known; each answer is checked against the
real loader."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from readers.test_libs import _make_dep, _make_user, needs_gcc

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.readers import libs
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import builtin_shared_libs

DEP = "libsctdep.so.1"


def _real_loader(lib: Path, ld_library_path: str, cwd: Path) -> str | None:
    """Which libsctdep.so.1 the real dynamic loader maps for `lib`, the process started in `cwd`."""
    code = (
        "import ctypes, sys\n"
        "ctypes.CDLL(sys.argv[1])\n"
        "for line in open('/proc/self/maps'):\n"
        "    if line.rstrip().endswith('libsctdep.so.1'):\n"
        "        print(line.split()[-1]); break\n"
    )
    env = {**{k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}, "LD_LIBRARY_PATH": ld_library_path}
    done = subprocess.run(
        [sys.executable, "-c", code, str(lib)], env=env, cwd=cwd, capture_output=True, text=True, timeout=60
    )
    return done.stdout.strip() or None


@pytest.fixture
def box(tmp_path: Path) -> dict[str, Path]:
    """A RUNPATH library (LD_LIBRARY_PATH comes first for it) needing libsctdep.so.1, whose RUNPATH copy is `own`; a
    copy in `env`, one in the launch directory `srv` (and srv/rel), one beside the object, none in `here` (this
    process's directory)."""
    own = _make_dep(tmp_path / "own", "own").parent
    env = _make_dep(tmp_path / "env", "env").parent
    srv = _make_dep(tmp_path / "srv", "srv").parent
    _make_dep(srv / "rel", "srv-rel")
    here = _make_dep(tmp_path / "here" / "rel", "here-rel").parent.parent
    user = _make_user(tmp_path / "obj", own, str(own), "new")
    _make_dep(tmp_path / "obj", "beside")
    return {"own": own, "env": env, "srv": srv, "here": here, "user": user}


def _resolve(box: dict[str, Path], value: str, cwd: str | None = None) -> dict[str, object]:
    obj = libs.read_object(box["user"])
    return libs.resolve_needed(obj, DEP, {"LD_LIBRARY_PATH": value}, cache=[], dirs_default=[], cwd=cwd)


@needs_gcc
def test_a_semicolon_separates_elements(box: dict[str, Path]) -> None:
    value = f"/nonexistent-sct;{box['env']}"
    res = _resolve(box, value)
    # before: '/nonexistent-sct;/…/env' was one directory, and the RUNPATH copy won
    assert (res["winner"], res["via"]) == (str(box["env"] / DEP), "LD_LIBRARY_PATH")
    assert _real_loader(box["user"], value, box["here"]) == res["winner"]


@needs_gcc
def test_a_relative_element_is_unknown_without_the_launch_directory(
    box: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(box["here"])  # stackcheck's own directory holds rel/libsctdep.so.1: not the server's
    value = f"rel:{box['env']}"
    res = _resolve(box, value)
    # before: the winner was rel/libsctdep.so.1 read from this process's directory
    assert res["winner"] is None and "unknown" in res, res
    assert "'rel'" in str(res["unknown"]) and "working directory" in str(res["unknown"])
    assert libs.warnings_for(res, "obj") == []  # neither missing nor another copy: unknown
    # with the launch directory known, read from there, as the real loader started there does
    res = _resolve(box, value, cwd=str(box["srv"]))
    assert (res["winner"], res["via"]) == (str(box["srv"] / "rel" / DEP), "LD_LIBRARY_PATH")
    assert _real_loader(box["user"], value, box["srv"]) == res["winner"]


@needs_gcc
def test_an_empty_element_is_the_working_directory(box: dict[str, Path]) -> None:
    value = f":{box['env']}"
    res = _resolve(box, value)
    assert res["winner"] is None and "unknown" in res  # before: skipped, and the env copy won
    res = _resolve(box, value, cwd=str(box["srv"]))
    assert (res["winner"], res["via"]) == (str(box["srv"] / DEP), "LD_LIBRARY_PATH")
    assert _real_loader(box["user"], value, box["srv"]) == res["winner"]
    # a trailing empty element comes after the env copy: the env copy is found before it, known
    res = _resolve(box, f"{box['env']}:")
    assert res["winner"] == str(box["env"] / DEP) and "unknown" not in res


@needs_gcc
def test_origin_in_ld_library_path_is_not_the_objects_directory(box: dict[str, Path]) -> None:
    value = "$ORIGIN"
    res = _resolve(box, value)
    # before: $ORIGIN was the object's directory, whose copy won; the real loader expands it against the executable
    assert res["winner"] is None and "dynamic string token" in str(res["unknown"])
    assert _real_loader(box["user"], value, box["here"]) == str(box["own"] / DEP)  # not the copy beside the object


@needs_gcc
def test_an_object_lists_its_unknown_libraries_and_the_check_says_unknown(
    box: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(box["here"])
    wanted = re.compile(r"^libsctdep\.so")
    got = libs.resolve_object(box["user"], "obj/libsctuser.so", {"LD_LIBRARY_PATH": "rel"}, [], wanted=wanted)
    assert got["warnings"] == [] and len(got["unknown"]) == 1
    assert got["unknown"][0].startswith(f"obj/libsctuser.so: {DEP}: LD_LIBRARY_PATH's element 'rel'")
    # a soname torch loaded first from a copy not known: this object reuses that copy, not known either
    prior = {DEP: {"unknown": "LD_LIBRARY_PATH's element 'x'", "loaded_by": "torch"}}
    got = libs.resolve_object(box["user"], "obj/libsctuser.so", {}, [], already_loaded=prior, wanted=wanted)
    (lib,) = got["libs"]
    assert lib["winner"] is None and lib["own_winner"] == str(box["own"] / DEP)
    assert got["unknown"] == [f"obj/libsctuser.so: {DEP}: torch loads it first: LD_LIBRARY_PATH's element 'x'"]


def test_the_shared_libs_check_reads_the_unknown_libraries() -> None:
    facts = {"libs": {"warnings": [], "unknown": ["torch: lib/libtorch_cuda.so: libcudart.so.12: why"]}}
    reasons = builtin_shared_libs(Context(facts=facts, manifests=load_manifests([])))  # type: ignore[arg-type]
    assert [r["result"] for r in reasons] == ["unknown"]
    assert "libtorch_cuda.so: libcudart.so.12" in reasons[0]["message"]
