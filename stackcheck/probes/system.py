"""System probe: OS, kernel, glibc, Python, machine, container hint, and an allow-listed, redacted env.

The redaction itself lives in stackcheck/redact.py (one module for every output); its names are
re-exported here for the callers that imported them from this probe.
"""

from __future__ import annotations

import os
import platform
from typing import Any, ClassVar

from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.redact import (  # noqa: F401 - re-exported
    ENV_NAMES,
    ENV_PREFIXES,
    SECRET_NAME_PARTS,
    env_allowed,
    looks_secret,
    redact_env,
    scrub_path,
)


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


def container_hint(ctx: ProbeContext) -> str | None:
    if ctx.rooted("/.dockerenv").exists():
        return "docker"
    if ctx.rooted("/run/.containerenv").exists():
        return "podman"
    if ctx.env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes"
    try:
        cgroup = ctx.rooted("/proc/1/cgroup").read_text(encoding="utf-8", errors="replace")
    except OSError:
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
    name: ClassVar[str] = "system"
    timeout_s: ClassVar[float] = 3.0
    sections: ClassVar[tuple[str, ...]] = ("system",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        notes: list[str] = []
        os_name: str | None = None
        try:
            text = ctx.rooted("/etc/os-release").read_text(encoding="utf-8", errors="replace")
            os_name = read_os_release(text)
        except OSError as exc:
            notes.append(f"/etc/os-release: {exc.strerror or exc}")
        system: dict[str, Any] = {
            "os": os_name,
            "kernel": platform.release() or None,
            "glibc": glibc_version(),
            "python": platform.python_version(),
            "python_implementation": platform.python_implementation(),
            "machine": platform.machine() or None,
            "container": container_hint(ctx),
            "env": redact_env(ctx.env),
        }
        if notes:
            system["error"] = "; ".join(notes)
            return ProbeResult({"system": system}, "partial", notes[0])
        return ProbeResult({"system": system})
