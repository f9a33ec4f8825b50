"""System probe: OS, kernel, glibc, Python, machine, container hint, and an allow-listed, redacted env.

`redact_env` and `scrub_path` are exported for reuse (reports, triage, fleet).
"""

from __future__ import annotations

import math
import os
import platform
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from stackcheck.probes.fsview import FileView, exists, is_file, is_host, read_text
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult

ENV_NAMES = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "CUDA_HOME",
        "CUDA_PATH",
        "LD_LIBRARY_PATH",
        "TORCH_CUDA_ARCH_LIST",
        "FLASHINFER_CUDA_ARCH_LIST",
        "PYTORCH_CUDA_ALLOC_CONF",
        "CUDA_LAUNCH_BLOCKING",
        "CUDA_MODULE_LOADING",
    }
)
ENV_PREFIXES = ("NCCL_", "FLASHINFER_", "SGLANG_", "TORCH_SYMM_MEM_", "NVSHMEM_")
SECRET_NAME_PARTS = ("TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH")
_SECRET_PREFIX = re.compile(r"(?:^|[^A-Za-z0-9])(hf_|ghp_|gho_|ghs_|github_pat_|sk-|xox[abp]-|AKIA|ASIA)[A-Za-z0-9]")
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<cred>[^/@\s:]*:[^/@\s]*)@")
_TOKEN_SPLIT = re.compile(r"[,;:=\s]+")
_TOKEN_CHARS = re.compile(r"[A-Za-z0-9+/=_\-.]+")
_UUID = re.compile(r"(?:GPU-|MIG-)?[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}")


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_secret(value: str) -> bool:
    """True for values that look like credentials: known token prefixes or long high-entropy strings."""
    if _SECRET_PREFIX.search(value):
        return True
    for token in _TOKEN_SPLIT.split(value):
        if len(token) < 20 or token[0] in "/~." or _UUID.fullmatch(token):
            continue
        if not _TOKEN_CHARS.fullmatch(token):
            continue
        has_digit = any(ch.isdigit() for ch in token)
        has_alpha = any(ch.isalpha() for ch in token)
        if has_digit and has_alpha and _entropy(token) >= 3.5:
            return True
    return False


def scrub_path(p: str, home: str | None = None) -> str:
    """Replace the user's home directory prefix with "~" ("/home/ann/venv" -> "~/venv")."""
    home = home if home is not None else str(Path.home())
    home = home.rstrip("/")
    if not home or home == "~":
        return p
    if p == home:
        return "~"
    if p.startswith(home + "/"):
        return "~" + p[len(home) :]
    return p


def _scrub_value(value: str, home: str) -> str:
    home = home.rstrip("/")
    if not home:
        return value
    return re.sub(re.escape(home) + r"(?=/|$|:|,|;)", "~", value)


def env_allowed(name: str) -> bool:
    return name in ENV_NAMES or name.startswith(ENV_PREFIXES)


def redact_env(env: Mapping[str, str], home: str | None = None) -> dict[str, str]:
    """The allow-listed environment variables, minus anything that looks like a secret.

    Names outside the allow-list are dropped; allowed names that mention TOKEN/SECRET/PASSWORD/KEY/...
    are dropped; credentials inside URLs (`user:password@`) are replaced by `***`; values that still
    look like a secret (hf_/ghp_/sk-/AKIA prefixes, long high-entropy strings) are dropped. The home
    directory prefix in values becomes "~".
    """
    if home is None:
        home = env.get("HOME") or str(Path.home())
    out: dict[str, str] = {}
    for name in sorted(env):
        if not env_allowed(name):
            continue
        upper = name.upper()
        if any(part in upper for part in SECRET_NAME_PARTS):
            continue
        value = _URL_CREDENTIALS.sub(lambda m: f"{m.group('scheme')}***@", str(env[name]))
        if looks_secret(value):
            continue
        out[name] = _scrub_value(value, home)
    return out


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
    lib, version = platform.libc_ver()
    return version if lib == "glibc" and version else None


_LIBC_BANNER = re.compile(rb"GNU C Library [^\n]*? release version (\d+\.\d+)")
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
            py_version, py_impl, exe = platform.python_version(), platform.python_implementation(), None
        machine = platform.machine() or None
        if not host:
            machine = elf_machine(view, exe) if isinstance(exe, str) else None
        system: dict[str, Any] = {
            "os": os_name,
            "kernel": platform.release() or None,
            "glibc": glibc_version() if host else view_glibc_version(view),
            "python": py_version if isinstance(py_version, str) else None,
            "python_implementation": _implementation_name(py_impl),
            "machine": machine,
            "container": container_hint(ctx),
            "env": redact_env(ctx.env),
        }
        if notes:
            system["error"] = "; ".join(notes)
            return ProbeResult({"system": system}, "partial", notes[0])
        return ProbeResult({"system": system})


def _implementation_name(value: Any) -> str | None:
    """sys.implementation.name ("cpython") as platform names it ("CPython")."""
    if not isinstance(value, str) or not value:
        return None
    return {"cpython": "CPython", "pypy": "PyPy"}.get(value.lower(), value)
