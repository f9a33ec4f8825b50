"""The user-space driver's release (facts.driver.userspace_*), beside the kernel module's (facts.driver.version):
the check driver-userspace-match compares them.

The kernel module answers every user-space client's first request with a version check: the client sends its own
version string and the module compares it with its own (open-gpu-kernel-modules, RmPerformVersionCheck in
src/nvidia/arch/nvalloc/unix/src/osapi.c: a strict request compares the whole string, a relaxed one only up to
the first '.', an override skips it). NVML's start fails on a difference with NVML_ERROR_LIB_RM_VERSION_MISMATCH
('Failed to initialize NVML: Driver/library version mismatch'), and the module logs "API mismatch".

The user-space release is read from the files, never by loading them: the libnvidia-ml.so.1 the dynamic loader
finds (the launch's LD_LIBRARY_PATH, the ld.so cache, the default directories: stackcheck.probes.cudalibs, one
read of the cache) is followed to its real file, whose name carries the release (libnvidia-ml.so.570.124.04, as
the .run installer and the distributions' packages name it). libcuda.so.1 is read the same way and recorded,
not judged: a CUDA forward-compatibility package (cuda-compat) brings a newer libcuda.so on purpose, and it
does not bring libnvidia-ml.

Inside an image (--image) nothing is read: the container runtime mounts the host's driver libraries when the
container starts, so the image's files are not the ones that load.
"""

from __future__ import annotations

import posixpath

from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.readers.fsview import FileView, HostView

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

NVML_LIB = "libnvidia-ml.so.1"
LIBCUDA = "libcuda.so.1"
#: the real file's name: lib<name>.so.<release>; the release as the driver writes it (570.124.04, 396.26)
_RELEASE_IN_NAME = lazy(r"lib(?:nvidia-ml|cuda)\.so\.(\d+\.\d+(?:\.\d+)?)")
#: facts.driver keys this module writes
KEYS = ("userspace_version", "userspace_file", "libcuda_version", "libcuda_file")


def _release(view: FileView, found: Any) -> tuple[str | None, str | None, str | None]:
    """(the release, the real file, why no release) of a library the loader finds at `found`."""
    if not isinstance(found, str):
        return None, None, "not found by the dynamic loader (LD_LIBRARY_PATH, the ld.so cache, the default directories)"
    try:
        real = view.realpath(found)
    except (OSError, ValueError) as exc:
        return None, None, f"{found}: cannot be resolved: {exc}"
    m = _RELEASE_IN_NAME.fullmatch(posixpath.basename(real))
    if m is None:
        return None, real, f"{real}: the file's name carries no driver release"
    return m.group(1), real, None


def read_userspace(env: Mapping[str, str], view: FileView) -> dict[str, Any]:
    """The facts.driver keys of the user-space driver (KEYS, and `userspace_reason` where the release of
    libnvidia-ml.so.1 is not known), as the loader would resolve the libraries with the environment `env`."""
    if not isinstance(view, HostView):
        reason = "not read inside an image: the container runtime mounts the host's driver libraries at start"
        return {**dict.fromkeys(KEYS), "userspace_reason": reason}
    from stackcheck.probes.cudalibs import probe_cuda_libs

    libs = probe_cuda_libs(env, view, (NVML_LIB, LIBCUDA))
    listed = libs.get("unreadable")
    unreadable: dict[str, Any] = listed if isinstance(listed, dict) else {}
    out: dict[str, Any] = {}
    for soname, key in ((NVML_LIB, "userspace"), (LIBCUDA, "libcuda")):
        version: str | None
        real: str | None
        why: str | None
        if soname in unreadable:
            version, real, why = None, None, f"the loader's copy could not be read: {unreadable[soname]}"
        else:
            version, real, why = _release(view, libs.get(soname))
        out[f"{key}_version"], out[f"{key}_file"] = version, real
        if key == "userspace" and why is not None:
            out["userspace_reason"] = f"{soname}: {why}"
    return out
