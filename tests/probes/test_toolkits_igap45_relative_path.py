"""igap45 (issue 16, loader item 4): the toolkits probe's nvcc PATH lookup, which stands for torch's _find_cuda_home in
the server's process (torch/utils/cpp_extension.py, torch 2.11.0 :117-141: `shutil.which("nvcc")`, its grandparent the
CUDA home; shutil.which joins a relative or empty PATH entry to the name as written, so it is read from the process's
working directory). The probe passed such an entry over, so `PATH=bin:/usr/local/cuda-12.8/bin` judged the build's
toolkit as 12.8 where a server started in a directory whose bin/ holds another nvcc builds with that one (a false
pass). Now the entry is read from the launch directory where it is known (gate --cwd), and where it is not, which
toolkit a build picks is not stated (unknown), never the one found past it nor /usr/local/cuda."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from probes.test_probe_toolkits import make_exe, make_root

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.toolkits import ToolkitsProbe, path_nvcc
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts.context import Context, Missing


def _launch_dir(root: Path) -> None:
    """/srv/run holds a CUDA 13.0 toolkit whose bin/ is the launch's relative PATH entry."""
    run = root / "srv/run"
    run.mkdir(parents=True)
    (run / "version.json").write_text(json.dumps({"cuda": {"version": "13.0.2"}}), encoding="utf-8")
    make_exe(run / "bin/nvcc", "exit 1")


def test_a_relative_entry_with_no_launch_directory_leaves_the_build_toolkit_unknown(tmp_path: Path) -> None:
    # fails before: /usr/local/cuda-12.8 (the nvcc after the entry) was the build's toolkit
    root = make_root(tmp_path)
    _launch_dir(root)
    ctx = ProbeContext(env={"PATH": "bin:/usr/local/cuda-12.8/bin"}, root=root, path_dirs=[])
    result = ToolkitsProbe().run(ctx)
    assert result.status == "partial" and "'bin'" in str(result.reason), result.reason
    entries = result.facts["cuda_toolkits"]
    assert entries and not any("active_for_build" in e for e in entries), entries
    with pytest.raises(Missing):
        Context(facts={"cuda_toolkits": entries}, manifests=None).toolkit_found("toolkit.found")  # type: ignore[arg-type]


@pytest.mark.parametrize("entry", ["bin", "./bin/", ""])
def test_a_relative_entry_found_from_the_launch_directory_leaves_the_build_toolkit_unknown(
    tmp_path: Path, entry: str
) -> None:
    # fails before igap45: the entry passed over, /usr/local/cuda-12.8 taken; igap45 then took the launch directory
    # as torch's CUDA home, but torch keeps the home relative ('' here: read on the lent H100), and the JIT's steps
    # read it from the build directory: unknown, never /usr/local/cuda-12.8 nor a toolkit of the launch directory
    root = make_root(tmp_path)
    _launch_dir(root)
    make_exe(root / "srv/run/bin/bin/nvcc", "exit 1")  # (for the empty entry: /srv/run/bin/nvcc)
    cwd = "/srv/run" if entry else "/srv/run/bin"
    ctx = ProbeContext(env={"PATH": f"{entry}:/usr/local/cuda-12.8/bin"}, root=root, path_dirs=[], launch_cwd=cwd)
    result = ToolkitsProbe().run(ctx)
    entries = result.facts["cuda_toolkits"]
    assert not [e for e in entries if e.get("active_for_build")], entries
    assert result.status == "partial" and "relative" in str(result.reason) and "not known" in str(result.reason)


def test_the_lookup_follows_torchs_home_rule(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    _launch_dir(root)
    view = HostView(str(root))
    assert path_nvcc(view, "/usr/local/cuda-12.8/bin:bin", None) == (
        "/usr/local/cuda-12.8/bin/nvcc",
        "/usr/local/cuda-12.8",
        "",
    )  # (an absolute entry found first: the relative one after it never counts)
    got = path_nvcc(view, "bin", "/srv/run")
    assert got[:2] == (None, None) and "/srv/run/bin/nvcc" in got[2] and "CUDA home ''" in got[2]
    assert path_nvcc(view, "", "/srv/run") == (None, None, "")  # (PATH='' matches nothing, as shutil.which)
    got = path_nvcc(view, ":/usr/local/cuda-12.8/bin", None)
    assert got[:2] == (None, None) and "an empty entry" in got[2]
