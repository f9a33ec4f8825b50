"""irev69: the toolkits probe's nvcc lookup with no PATH in the server's environment (`env -i python -m
sglang.launch_server ...`, a gated command's env prefix). torch's _find_cuda_home calls shutil.which("nvcc"), which
searches os.confstr("CS_PATH") ('/bin:/usr/bin' on glibc; os.defpath where that is unavailable) when PATH is unset,
and nothing when PATH is '' (CPython 3.11 Lib/shutil.py which(): `path = os.environ.get("PATH", None)`, then
`os.confstr("CS_PATH")`; `if not path: return None`). The probe read an unset PATH as '', so a distribution's
/usr/bin/nvcc (CUDA home /usr) was passed over and /usr/local/cuda was judged the build's toolkit (a false pass where
the two differ); the jit probe's own shutil.which readers (rocm_home, ninja_on_path) already take posixpath.defpath."""

from __future__ import annotations

from pathlib import Path

from probes.test_probe_toolkits import by_path, make_exe, make_root

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.toolkits import ToolkitsProbe, path_nvcc
from stackcheck.readers.fsview import HostView


def _usr_nvcc(root: Path) -> None:
    """A distribution's nvcc in /usr/bin (CUDA home /usr), beside /usr/local/cuda -> cuda-13.0."""
    make_exe(root / "usr/bin/nvcc", "echo 'Cuda compilation tools, release 12.0, V12.0.140'")


def test_an_unset_path_searches_the_default_path_as_shutil_which(tmp_path: Path) -> None:
    # fails before: PATH unset was read as '', no nvcc found, and /usr/local/cuda (13.0) was the build's toolkit
    root = make_root(tmp_path)
    _usr_nvcc(root)
    result = ToolkitsProbe().run(ProbeContext(env={}, root=root, path_dirs=[]))
    tks = by_path(result.facts["cuda_toolkits"])
    assert tks["/usr"]["active_for_build"] is True, tks
    assert tks["/usr"]["nvcc"] == "/usr/bin/nvcc"
    assert tks["/usr/local/cuda"]["active_for_build"] is False


def test_an_empty_path_still_finds_no_nvcc(tmp_path: Path) -> None:
    # PATH='' matches nothing in shutil.which (bpo-35755): torch's third guess, /usr/local/cuda, is the build's
    root = make_root(tmp_path)
    _usr_nvcc(root)
    result = ToolkitsProbe().run(ProbeContext(env={"PATH": ""}, root=root, path_dirs=[]))
    tks = by_path(result.facts["cuda_toolkits"])
    assert "/usr" not in tks and tks["/usr/local/cuda"]["active_for_build"] is True


def test_path_nvcc_takes_none_as_unset(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    _usr_nvcc(root)
    view = HostView(str(root))
    assert path_nvcc(view, None, None) == ("/usr/bin/nvcc", "/usr", "")
    assert path_nvcc(view, "", None) == (None, None, "")
