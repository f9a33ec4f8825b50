"""System probe: OS, kernel, glibc, Python, machine, container hint, and an allow-listed, redacted env.

The redaction itself lives in stackcheck/redact.py (one module for every output); its names are
re-exported here for the callers that imported them from this probe.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from stackcheck.lazy_re import lazy_bytes as _lazy_bytes
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.readers.fsview import FileView, exists, is_file, is_host, read_text
from stackcheck.redact import (  # noqa: F401 - re-exported
    ENV_NAMES,
    ENV_PREFIXES,
    SECRET_NAME_PARTS,
    env_allowed,
    looks_secret,
    redact_env,
    scrub_path,
)

if TYPE_CHECKING:
    from typing import Any, ClassVar


def read_os_release(text: str) -> str | None:
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip("\"'")
    return fields.get("PRETTY_NAME") or (
        " ".join(x for x in (fields.get("NAME"), fields.get("VERSION_ID")) if x) or None
    )


def glibc_version() -> str | None:
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        text = None
    if text and text.startswith("glibc "):
        return text.split()[1]
    import platform  # (only where confstr does not say: platform's import is ~2 ms of every live audit)

    lib, version = platform.libc_ver()
    return version if lib == "glibc" and version else None


def uname_field(name: str) -> str:
    """platform.machine() / platform.release() ("machine", "release") without importing platform: os.uname()'s
    field, with "unknown" read as "" as platform reads it (a Linux box always has os.uname)."""
    value = str(getattr(os.uname(), name))
    return "" if value == "unknown" else value


_LIBC_BANNER = _lazy_bytes(rb"GNU C Library [^\n]*? release version (\d+\.\d+)")
_LIBC_PATHS = (
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/usr/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/aarch64-linux-gnu/libc.so.6",
    "/usr/lib/aarch64-linux-gnu/libc.so.6",
    "/lib64/libc.so.6",
    "/usr/lib64/libc.so.6",
    "/lib/libc.so.6",
)
LIBC_CAP = 8 << 20


def view_glibc_version(view: FileView) -> str | None:
    """The glibc of a root filesystem or an image, from the version banner inside its libc.so.6 (the
    library is not loaded: another root's libc may be for another machine)."""
    for path in _LIBC_PATHS:
        if not is_file(view, path):
            continue
        try:
            data = view.read_bytes(path, LIBC_CAP)
        except OSError:
            continue
        m = _LIBC_BANNER.search(data)
        if m:
            return m.group(1).decode()
    return None


_ELF_MACHINES = {62: "x86_64", 183: "aarch64", 21: "ppc64le", 243: "riscv64", 22: "s390x"}


def elf_machine(view: FileView, path: str) -> str | None:
    """The machine an executable is built for, from its ELF header (for an interpreter in an image)."""
    try:
        head = view.read_bytes(path, 20)
    except OSError:
        return None
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    machine = int.from_bytes(head[18:20], "little" if head[5] == 1 else "big")
    return _ELF_MACHINES.get(machine)


def container_hint(ctx: ProbeContext) -> str | None:
    view = ctx.fs
    if hasattr(view, "image_facts"):
        return "image"
    if exists(view, "/.dockerenv"):
        return "docker"
    if exists(view, "/run/.containerenv"):
        return "podman"
    if ctx.env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    try:
        cgroup = read_text(view, "/proc/1/cgroup", 1 << 20)
    except (OSError, ValueError):
        return None
    for needle, hint in (
        ("kubepods", "kubernetes"),
        ("docker", "docker"),
        ("libpod", "podman"),
        ("containerd", "containerd"),
        ("lxc", "lxc"),
    ):
        if needle in cgroup:
            return hint
    return None


def host_memory(meminfo: str = "/proc/meminfo") -> int | None:
    """This host's memory in bytes: MemTotal of /proc/meminfo (kB), None where not read (igap55)."""
    return meminfo_value("MemTotal", meminfo)


#: the memory limit files of the cgroup roots: v2 (memory.max, "max" for none), v1 (memory.limit_in_bytes)
CGROUP_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
CGROUP_LIMITS_MOUNT = "/sys/fs/cgroup"


def cgroup_memory_limit(paths: tuple[str, ...] = CGROUP_LIMITS) -> tuple[int | None, bool]:
    """The memory limit of the cgroup files `paths` in bytes (None: no limit) and whether a limit file was read
    (igap55; a v1 limit of 2**62 or more is none): the lowest of those read (irobust7). The process's own cgroup and
    its parents: own_cgroup_memory_limit."""
    lowest: int | None = None
    read = False
    for path in paths:
        try:
            with open(path, encoding="ascii", errors="replace") as fh:
                text = fh.read(64).strip()
        except OSError:
            continue
        if text == "max":
            read = True
        elif text.isascii() and text.isdigit():
            read = True
            value = int(text)
            if value < 2**62 and (lowest is None or value < lowest):
                lowest = value
    return lowest, read


def cgroup_limit_files(cgroup_text: str, mount: str = "/sys/fs/cgroup") -> list[str]:
    """The memory limit files that bound this process, from its cgroup (the text of /proc/self/cgroup) up to the
    hierarchy's root, at the usual mount points: v2 memory.max and memory.high (`0::PATH`), v1 the memory
    controller's memory.limit_in_bytes. SGLang 0.5.21+ bounds HiCache's host pools by the headroom under each of them
    (0.5.23 mem_cache/host_memory.py:41-134 `_cgroup_memory_headroom`: /proc/self/cgroup and mountinfo, walking up to
    the mount). irev74: igap55 read the mount's root files alone, which on a host without a cgroup namespace (a
    systemd service's MemoryMax, a Slurm job's cgroup) hold no limit, so the whole MemTotal was taken."""
    files: list[str] = []
    for line in cgroup_text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        controllers, path = parts[1], parts[2]
        names: tuple[str, ...]
        if not controllers:
            base, names = mount, ("memory.max", "memory.high")
        elif "memory" in controllers.split(","):
            base, names = mount + "/memory", ("memory.limit_in_bytes",)
        else:
            continue
        rel = [p for p in path.strip().split("/") if p]
        if ".." in rel or "." in rel or len(rel) > 64:  # (irobust7: a path no kernel writes, 5,000 levels deep)
            continue
        for k in range(len(rel), -1, -1):
            files.extend("/".join([base, *rel[:k], name]) for name in names)
    return files


def meminfo_value(key: str, meminfo: str = "/proc/meminfo") -> int | None:
    """A /proc/meminfo value in bytes (its kB figure x 1024), None where not read."""
    try:
        with open(meminfo, encoding="ascii", errors="replace") as fh:
            text = fh.read(1 << 16)
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith(key + ":"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isascii() and parts[1].isdigit() and len(parts[1]) <= 15:
                return int(parts[1]) * 1024
    return None


def _cgroup_number(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            text = fh.read(64).strip()
    except OSError:
        return None
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def _page_cache(stat_path: str, keys: tuple[str, str]) -> int | None:
    try:
        with open(stat_path, encoding="ascii", errors="replace") as fh:
            lines = fh.read(1 << 16).splitlines()
    except OSError:
        return None
    found = dict(line.split(None, 1) for line in lines if line.count(" ") == 1)
    values = [found.get(k, "").strip() for k in keys]
    return sum(int(v) for v in values) if all(v.isascii() and v.isdigit() for v in values) else None


def cgroup_memory(
    proc_cgroup: str = "/proc/self/cgroup", mount: str = "/sys/fs/cgroup"
) -> tuple[int | None, int | None, bool]:
    """The one reading of this process's cgroup memory (imend8; each file opened once): the lowest limit of its
    cgroup and its parents (cgroup_limit_files) and of the roots (CGROUP_LIMITS under `mount`; they alone where
    /proc/self/cgroup is not read), None where none is set or read (imend8: the probe read the roots again beside this
    walk, which reaches them at its top); the memory left under those limits, as SGLang 0.5.21+ bounds HiCache's host
    pools (0.5.23 mem_cache/host_memory.py:41-133 `_cgroup_memory_headroom`: for each cgroup from the process's up to
    the mount with memory.max / memory.high (v1 memory.limit_in_bytes) set, the limit less its usage (memory.current,
    v1 memory.usage_in_bytes) less the page cache (memory.stat active_file + inactive_file, v1 total_active_file +
    total_inactive_file), the lowest; None where no limit is set); and whether that headroom was read (False: a limit
    is set and its usage not read). 0.5.23's protected-descendants rule (page cache not taken off where a child has
    memory.min) is not followed: the headroom read here may then be higher than SGLang's (the HiCache rule keeps a
    margin)."""
    try:
        with open(proc_cgroup, encoding="utf-8", errors="replace") as fh:
            text = fh.read(1 << 16)
    except OSError:
        text = ""
    roots = [mount + path.removeprefix(CGROUP_LIMITS_MOUNT) for path in CGROUP_LIMITS]
    files = cgroup_limit_files(text, mount)
    files.extend(path for path in roots if path not in files)
    lowest: int | None = None
    room: int | None = None
    read = True
    for path in dict.fromkeys(files):
        limit, _read = cgroup_memory_limit((path,))
        if limit is None:
            continue
        lowest = limit if lowest is None else min(lowest, limit)
        base, name = path.rsplit("/", 1)
        v1 = name == "memory.limit_in_bytes"
        usage = _cgroup_number(base + ("/memory.usage_in_bytes" if v1 else "/memory.current"))
        keys = ("total_active_file", "total_inactive_file") if v1 else ("active_file", "inactive_file")
        cache = _page_cache(base + "/memory.stat", keys)
        if usage is None or cache is None:
            read = False
            continue
        left = max(0, limit - max(0, usage - cache))
        room = left if room is None else min(room, left)
    return lowest, (room if read else None), read


def own_cgroup_memory_limit(proc_cgroup: str = "/proc/self/cgroup", mount: str = "/sys/fs/cgroup") -> int | None:
    """The lowest memory limit of this process's cgroup, its parents and the roots (cgroup_memory)."""
    return cgroup_memory(proc_cgroup, mount)[0]


def own_cgroup_headroom(
    proc_cgroup: str = "/proc/self/cgroup", mount: str = "/sys/fs/cgroup"
) -> tuple[int | None, bool]:
    """The memory left under this process's cgroup limits and whether it was read (cgroup_memory)."""
    return cgroup_memory(proc_cgroup, mount)[1:]


def available_memory(
    meminfo: str = "/proc/meminfo",
    proc_cgroup: str = "/proc/self/cgroup",
    mount: str = "/sys/fs/cgroup",
    cgroup: tuple[int | None, int | None, bool] | None = None,
) -> int | None:
    """The memory available now as SGLang's HiCache check reads it at launch (imend8): MemAvailable (psutil's
    virtual_memory().available on Linux), lowered to the own cgroup's headroom (cgroup_memory, or `cgroup` where
    already read) where a limit is set; None where either is not read."""
    available = meminfo_value("MemAvailable", meminfo)
    _limit, headroom, read = cgroup if cgroup is not None else cgroup_memory(proc_cgroup, mount)
    if available is None or not read:
        return None
    return min(available, headroom) if headroom is not None else available


class SystemProbe(Probe):
    """OS, kernel, glibc, Python, machine and container of the box being audited. The kernel is always
    this host's (a container runs on its host's kernel); the OS, glibc and machine are the view's; the
    Python is the target interpreter's (facts.python)."""

    name: ClassVar[str] = "system"
    timeout_s: ClassVar[float] = 3.0
    sections: ClassVar[tuple[str, ...]] = ("system",)
    needs: ClassVar[tuple[str, ...]] = ("python",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        notes: list[str] = []
        view = ctx.fs
        host = is_host(view)
        os_name: str | None = None
        try:
            os_name = read_os_release(read_text(view, "/etc/os-release", 1 << 20))
        except (OSError, ValueError) as exc:
            notes.append(f"/etc/os-release: {getattr(exc, 'strerror', None) or exc}")
        python = ctx.facts.get("python")
        if isinstance(python, Mapping):
            py_version = python.get("version")
            py_impl = python.get("implementation")
            exe = python.get("executable")
        else:  # no python probe ran (a library caller): this process
            import platform

            py_version, py_impl, exe = platform.python_version(), platform.python_implementation(), None
        machine = uname_field("machine") or None
        if not host:
            machine = elf_machine(view, exe) if isinstance(exe, str) else None
        system: dict[str, Any] = {
            "os": os_name,
            "kernel": uname_field("release") or None,
            "glibc": glibc_version() if host else view_glibc_version(view),
            "python": py_version if isinstance(py_version, str) else None,
            "python_implementation": _implementation_name(py_impl),
            "machine": machine,
            "container": container_hint(ctx),
            "env": redact_env(ctx.env),
            # igap55: this host's memory and its cgroup's limit (HiCache's host pool is pinned in it); null where the
            # box is not this host (--root, --image) or the file was not read
            "memory_total_bytes": host_memory() if host else None,
            "memory_limit_bytes": None,
            # imend8: the memory available at the probe's time (MemAvailable, or the cgroup's headroom where lower),
            # which SGLang's HiCache check reads at launch; null where not read or not this host
            "memory_available_bytes": None,
        }
        if host:  # (irev74: the process's own cgroup and its parents; imend8: the roots in the same one reading)
            cgroup = cgroup_memory()
            system["memory_limit_bytes"] = cgroup[0]
            system["memory_available_bytes"] = available_memory(cgroup=cgroup)
        if notes:
            system["error"] = "; ".join(notes)
            return ProbeResult({"system": system}, "partial", notes[0])
        return ProbeResult({"system": system})


def _implementation_name(value: Any) -> str | None:
    """sys.implementation.name ("cpython") as platform names it ("CPython")."""
    if not isinstance(value, str) or not value:
        return None
    return {"cpython": "CPython", "pypy": "PyPy"}.get(value.lower(), value)
