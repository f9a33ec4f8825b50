"""The user-space driver's release (stackcheck/probes/driver_libs.py, written into facts.driver by the NVML probe):
the release in the name of the real file behind the libnvidia-ml.so.1 and libcuda.so.1 the loader finds, read in
fake roots (an ld.so cache, LD_LIBRARY_PATH, the default directories), and NVML's own init error kept as a name."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from fake_nvml import FakeNVML, facts_of, load_doc
from probes.test_probe_issue16 import elf64
from readers.test_libs import _build_cache

from stackcheck.probes.driver_libs import read_userspace
from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.nvml import NvmlProbe
from stackcheck.readers.fsview import HostView

LIBDIR = "usr/lib/x86_64-linux-gnu"
PROC = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  {v}  Release Build  (root@box)  Thu Mar  6 2025\n"


def driver_tree(root: Path, nvml: str | None, cuda: str | None, libdir: str = LIBDIR, cache: bool = True) -> None:
    """A driver installed as the .run and the distributions' packages install it: the versioned file, and the
    soname a link to it; the ld.so cache lists the soname's link (as ldconfig writes it)."""
    entries: list[tuple[str, str, int]] = []
    for stem, release in (("libnvidia-ml", nvml), ("libcuda", cuda)):
        if release is None:
            continue
        real = elf64(root / libdir / f"{stem}.so.{release}")
        link = root / libdir / f"{stem}.so.1"
        link.symlink_to(real.name)
        entries.append((f"{stem}.so.1", f"/{libdir}/{stem}.so.1", 0x303))
    if cache and entries:
        (root / "etc").mkdir(exist_ok=True)
        (root / "etc/ld.so.cache").write_bytes(_build_cache(entries))


def test_the_release_of_the_files_the_loader_finds(tmp_path: Path) -> None:
    driver_tree(tmp_path, "570.124.04", "570.124.04")
    got = read_userspace({}, HostView(str(tmp_path)))
    assert got == {
        "userspace_version": "570.124.04",
        "userspace_file": f"/{LIBDIR}/libnvidia-ml.so.570.124.04",
        "libcuda_version": "570.124.04",
        "libcuda_file": f"/{LIBDIR}/libcuda.so.570.124.04",
    }


def test_ld_library_path_comes_before_the_cache(tmp_path: Path) -> None:
    """A second user-space driver on LD_LIBRARY_PATH is the one the launch loads (and so the one compared)."""
    driver_tree(tmp_path, "570.124.06", "570.124.06")
    driver_tree(tmp_path, "580.95.05", None, libdir="opt/drv/lib", cache=False)
    got = read_userspace({"LD_LIBRARY_PATH": "/opt/drv/lib"}, HostView(str(tmp_path)))
    assert got["userspace_version"] == "580.95.05" and got["userspace_file"] == "/opt/drv/lib/libnvidia-ml.so.580.95.05"
    assert got["libcuda_version"] == "570.124.06"  # not on that path: the cache's


def test_without_a_cache_the_default_directories(tmp_path: Path) -> None:
    driver_tree(tmp_path, "550.163.01", "550.163.01", cache=False)
    assert read_userspace({}, HostView(str(tmp_path)))["userspace_version"] == "550.163.01"


def test_a_forward_compatibility_libcuda_is_recorded_apart(tmp_path: Path) -> None:
    """cuda-compat puts a newer libcuda on LD_LIBRARY_PATH and no libnvidia-ml: the user-space release compared
    with the kernel module stays libnvidia-ml's."""
    driver_tree(tmp_path, "535.247.01", "535.247.01")
    driver_tree(tmp_path, None, "580.95.05", libdir="usr/local/cuda-13.0/compat", cache=False)
    got = read_userspace({"LD_LIBRARY_PATH": "/usr/local/cuda-13.0/compat"}, HostView(str(tmp_path)))
    assert (got["userspace_version"], got["libcuda_version"]) == ("535.247.01", "580.95.05")


def test_not_found_and_a_name_without_a_release(tmp_path: Path) -> None:
    got = read_userspace({}, HostView(str(tmp_path)))
    assert got["userspace_version"] is None and got["userspace_file"] is None and got["libcuda_version"] is None
    assert "libnvidia-ml.so.1: not found by the dynamic loader" in got["userspace_reason"]
    elf64(tmp_path / "usr/lib/wsl/lib/libnvidia-ml.so.1")  # WSL's: a real file named by its soname
    got = read_userspace({"LD_LIBRARY_PATH": "/usr/lib/wsl/lib"}, HostView(str(tmp_path)))
    assert got["userspace_version"] is None and got["userspace_file"] == "/usr/lib/wsl/lib/libnvidia-ml.so.1"
    assert "carries no driver release" in got["userspace_reason"]


def test_a_link_to_a_file_that_is_not_a_library(tmp_path: Path) -> None:
    """The loader fails on a file that is no ELF library: no user-space release, and no guess from its name."""
    (tmp_path / LIBDIR).mkdir(parents=True)
    (tmp_path / LIBDIR / "libnvidia-ml.so.570.124.04").write_text("not a library")
    (tmp_path / LIBDIR / "libnvidia-ml.so.1").symlink_to("libnvidia-ml.so.570.124.04")
    got = read_userspace({}, HostView(str(tmp_path)))
    assert got["userspace_version"] is None and "not found" in got["userspace_reason"]


class _ImageLike:
    """Any FileView that is not a HostView (an image's layers)."""


def test_an_image_is_not_read(tmp_path: Path) -> None:
    got = read_userspace({}, _ImageLike())  # type: ignore[arg-type]
    assert [got[k] for k in ("userspace_version", "userspace_file", "libcuda_version", "libcuda_file")] == [None] * 4
    assert "container runtime" in got["userspace_reason"]


def _ctx(root: Path, nvml: Any, env: dict[str, str] | None = None) -> ProbeContext:
    return ProbeContext(env={"PATH": "", **(env or {})}, root=root, path_dirs=[], subprocess_timeout_s=3.0, nvml=nvml)


def test_the_nvml_probe_records_both_halves_when_nvml_refuses(tmp_path: Path) -> None:
    """The source case's box (tinygrad/open-gpu-kernel-modules#47): 570.124.06 modules, the 570.124.04 .run's
    libraries; NVML's init raises NVMLError_LibRmVersionMismatch."""
    driver_tree(tmp_path, "570.124.04", "570.124.04")
    (tmp_path / "proc/driver/nvidia").mkdir(parents=True)
    (tmp_path / "proc/driver/nvidia/version").write_text(PROC.format(v="570.124.06"))
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "LibRmVersionMismatch")
    driver = NvmlProbe().run(_ctx(tmp_path, fake)).facts["driver"]
    assert (driver["version"], driver["source"]) == ("570.124.06", "proc")
    assert (driver["userspace_version"], driver["nvml_init_error"]) == ("570.124.04", "LibRmVersionMismatch")
    assert "userspace_reason" not in driver


def test_other_nvml_failures_are_named_and_an_import_failure_is_not(tmp_path: Path) -> None:
    fake = FakeNVML(load_doc("h200-1x.json")).fail("nvmlInit", "DriverNotLoaded")
    assert NvmlProbe().run(_ctx(tmp_path, fake)).facts["driver"]["nvml_init_error"] == "DriverNotLoaded"


def test_nvml_started_the_files_still_read(tmp_path: Path) -> None:
    doc = load_doc("h200-1x.json")
    release = facts_of(doc)["driver"]["version"]
    driver_tree(tmp_path, release, release)
    driver = NvmlProbe().run(_ctx(tmp_path, FakeNVML(doc))).facts["driver"]
    assert driver["source"] == "nvml" and driver["userspace_version"] == driver["version"] == release
    assert "nvml_init_error" not in driver


def test_the_launch_environment_decides(tmp_path: Path) -> None:
    """The loader environment the probe context gives (the launch's LD_LIBRARY_PATH in a gate) is the one read."""
    doc = load_doc("h200-1x.json")
    release = facts_of(doc)["driver"]["version"]
    driver_tree(tmp_path, release, release)
    driver_tree(tmp_path, "535.54.03", None, libdir="opt/old", cache=False)
    ctx = _ctx(tmp_path, FakeNVML(doc), env={"LD_LIBRARY_PATH": "/opt/old"})
    assert NvmlProbe().run(ctx).facts["driver"]["userspace_version"] == "535.54.03"


def test_the_read_is_cheap(tmp_path: Path) -> None:
    """One ld.so cache read and two links followed: well under the NVML probe's budget (6 s) on a loaded box."""
    driver_tree(tmp_path, "570.124.04", "570.124.04")
    view = HostView(str(tmp_path))
    start = time.process_time()
    for _ in range(50):
        read_userspace({}, view)
    assert (time.process_time() - start) / 50 < 0.05
