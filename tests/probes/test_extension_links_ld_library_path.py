"""DeepEP's NVSHMEM lookup (packages.NAME.extension_links) reads LD_LIBRARY_PATH as the loader does: it split the value
at `:` only and dropped relative and empty elements, so for a RUNPATH module `LD_LIBRARY_PATH=lib` (the server's
./lib, searched first) was skipped and the RUNPATH copy judged (glibc elf/dl-load.c `_dl_init_paths`: `:;`, empty and
relative elements kept; read through cudalibs.ld_library_path, igap45). Where the server's directory is not known,
a library not found before such an element is unknown, never found past it. ELF files by tests/elfwriter.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from elfwriter import write_so

from stackcheck.readers.fsview import HostView

SO = "deep_ep_cpp.cpython-312-x86_64-linux-gnu.so"
NVSHMEM = "libnvshmem_host.so.3"
SITE = "/opt/venv/lib/python3.12/site-packages"


def _box(root: Path) -> None:
    """DeepEP 1.2.1 whose deep_ep_cpp has DT_RUNPATH /opt/nvshmem/lib (holding NVSHMEM), and a ./srv/lib copy."""
    sp = root / SITE.lstrip("/")
    meta = sp / "deep_ep-1.2.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: deep_ep\nVersion: 1.2.1\n")
    (sp / "deep_ep").mkdir()
    (sp / "deep_ep" / "__init__.py").write_text("")
    write_so(sp / SO, needed=[NVSHMEM, "libc10.so"], runpath="/opt/nvshmem/lib")
    for d in ("opt/nvshmem/lib", "srv/lib"):
        (root / d).mkdir(parents=True)
        write_so(root / d / NVSHMEM, soname=NVSHMEM)


def _links(root: Path, env: dict[str, str], cwd: str | None) -> dict[str, Any]:
    from stackcheck.probes.packages import extension_links, find_distributions, package_facts

    view = HostView(str(root))
    entry = package_facts("deep-ep", find_distributions({"deep-ep"}, [SITE], view)["deep-ep"], view)
    record: dict[str, Any] = extension_links(entry, env, view, None, cwd)[SO]
    return record


def test_a_relative_element_is_searched_from_the_server_directory(tmp_path: Path) -> None:
    _box(tmp_path)
    assert _links(tmp_path, {"LD_LIBRARY_PATH": "lib"}, "/srv")["found"] == {NVSHMEM: f"/srv/lib/{NVSHMEM}"}
    assert _links(tmp_path, {"LD_LIBRARY_PATH": ":"}, "/srv/lib")["found"] == {NVSHMEM: f"/srv/lib/{NVSHMEM}"}


def test_a_relative_element_without_the_directory_is_unknown_never_the_runpath_copy(tmp_path: Path) -> None:
    _box(tmp_path)
    record = _links(tmp_path, {"LD_LIBRARY_PATH": "lib"}, None)
    assert record["found"] == {NVSHMEM: None}  # before: the RUNPATH copy, found
    assert "'lib'" in record["unreadable"][NVSHMEM] and "working directory" in record["unreadable"][NVSHMEM]


def test_a_semicolon_separates_as_a_colon_does(tmp_path: Path) -> None:
    _box(tmp_path)
    assert _links(tmp_path, {"LD_LIBRARY_PATH": "/nowhere;/srv/lib"}, None)["found"] == {NVSHMEM: f"/srv/lib/{NVSHMEM}"}
    assert _links(tmp_path, {}, None)["found"] == {NVSHMEM: f"/opt/nvshmem/lib/{NVSHMEM}"}  # (the RUNPATH: a guard)
