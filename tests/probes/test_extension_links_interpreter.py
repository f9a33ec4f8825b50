"""igap15: the NVSHMEM library of DeepEP's deep_ep_cpp is looked for in the loader's own order, the audited
interpreter's DT_RPATH included (packages.deep-ep.extension_links; check moe-a2a-package).

glibc's loader (elf/dl-load.c _dl_map_object; ld.so(8)) searches, for a library an object without DT_RUNPATH needs,
that object's DT_RPATH, then the executable's DT_RPATH (a conda Python's $ORIGIN/../lib), then LD_LIBRARY_PATH, the
ld.so cache and the default directories; for an object with DT_RUNPATH, LD_LIBRARY_PATH, then its RUNPATH, then the
cache (no RPATH counts). The cudalibs probe counted the interpreter's RPATH since igap14; extension_links did not
pass the interpreter, so DeepEP under a conda Python whose lib/ holds NVSHMEM was refused ('not found'), and a
RUNPATH copy was preferred to an LD_LIBRARY_PATH one. ELF files are written by tests/elfwriter.py.
On the parent (5e61616) all 5 fail: three for what they guard, the two guards (a RUNPATH module, the module's own RPATH
first) only because extension_links takes no interpreter there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from elfwriter import write_so

from stackcheck.probes.interface import ProbeContext
from stackcheck.readers.fsview import HostView

SO = "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"
NVSHMEM = "libnvshmem_host.so.3"
SITE = "/opt/conda/lib/python3.12/site-packages"


def _conda(root: Path, rpath: str | None = None, runpath: str | None = None, nvshmem: bool = True) -> str:
    """A conda-shaped prefix under `root`: bin/python (an ELF whose DT_RPATH is $ORIGIN/../lib), lib/ with NVSHMEM's
    host library where `nvshmem`, and DeepEP 1.2.1 in site-packages whose deep_ep_cpp links it with `rpath` /
    `runpath`. Returns the interpreter's box path."""
    prefix = root / "opt" / "conda"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "lib").mkdir()
    write_so(prefix / "bin" / "python3.12", needed=["libpython3.12.so.1.0", "libc.so.6"], rpath="$ORIGIN/../lib")
    os.symlink("python3.12", prefix / "bin" / "python")
    if nvshmem:
        write_so(prefix / "lib" / NVSHMEM, soname=NVSHMEM)
    sp = root / SITE.lstrip("/")
    meta = sp / "deep_ep-1.2.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: deep_ep\nVersion: 1.2.1\n")
    (sp / "deep_ep").mkdir()
    (sp / "deep_ep" / "__init__.py").write_text("")
    write_so(sp / SO, needed=[NVSHMEM, "libc10.so"], rpath=rpath, runpath=runpath)
    return "/opt/conda/bin/python"


def _links(root: Path, env: dict[str, str], interpreter: str | None) -> dict[str, Any]:
    from stackcheck.probes.packages import extension_links, find_distributions, package_facts

    view = HostView(str(root))
    entry = package_facts("deep-ep", find_distributions({"deep-ep"}, [SITE], view)["deep-ep"], view)
    record: dict[str, Any] = extension_links(entry, env, view, interpreter)[SO]
    return record


def test_the_interpreter_rpath_finds_conda_nvshmem(tmp_path: Path) -> None:
    python = _conda(tmp_path)
    assert _links(tmp_path, {}, python)["found"] == {NVSHMEM: f"/opt/conda/lib/{NVSHMEM}"}


def test_a_runpath_module_does_not_take_the_interpreter_rpath(tmp_path: Path) -> None:
    # a guard (passes on the parent): a DT_RUNPATH in deep_ep_cpp turns every RPATH off
    python = _conda(tmp_path, runpath="/opt/nvshmem-gone/lib")
    assert _links(tmp_path, {}, python)["found"] == {NVSHMEM: None}


def test_ld_library_path_comes_before_a_runpath(tmp_path: Path) -> None:
    python = _conda(tmp_path, runpath="/opt/conda/lib")
    other = tmp_path / "other"
    other.mkdir()
    write_so(other / NVSHMEM, soname=NVSHMEM)
    env = {"LD_LIBRARY_PATH": "/other"}
    assert _links(tmp_path, env, python)["found"] == {NVSHMEM: f"/other/{NVSHMEM}"}


def test_the_module_rpath_still_comes_first(tmp_path: Path) -> None:
    python = _conda(tmp_path, rpath="/own")
    own = tmp_path / "own"
    own.mkdir()
    write_so(own / NVSHMEM, soname=NVSHMEM)
    assert _links(tmp_path, {}, python)["found"] == {NVSHMEM: f"/own/{NVSHMEM}"}


def test_the_probe_passes_the_target_interpreter(tmp_path: Path) -> None:
    from stackcheck.assembly.target import Target
    from stackcheck.probes.packages import PackagesProbe

    python = _conda(tmp_path)
    view = HostView(str(tmp_path))
    ctx = ProbeContext(env={}, root=str(tmp_path), view=view, target=Target(python, "test"), path_dirs=[SITE])
    entry = PackagesProbe().run(ctx).facts["packages"]["deep-ep"]
    assert entry["extension_links"][SO]["found"] == {NVSHMEM: f"/opt/conda/lib/{NVSHMEM}"}
