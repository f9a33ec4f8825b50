"""The container and the host: /dev/shm for NCCL, the server's port, the locked-memory limit.

The readings are small probes (`read_shm`, `port_free`, `read_memlock`: stackcheck.launch.host_readers, named here
too); the checks are pure functions of them, so tests inject readings (a 64 MiB /dev/shm, a busy port) without a
container.
"""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.launch.host_readers import (  # the readings live there (a kept gate decision takes them again)
    DENIED,
    SHM_PATH,
    ShmReading,
    localhost_is_v6,
    loopback_for,
    port_free,
    read_memlock,
    read_shm,
)
from stackcheck.launch.preflight.result import CheckResult, gib
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "DENIED", "SHM_PATH", "ShmReading", "check_memlock", "check_port", "check_shm", "localhost_is_v6", "loopback_for",
    "port_free", "read_memlock", "read_shm",
]  # fmt: skip


#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = ("shm", "port", "memlock")


def check_port(host: str, port: int, reading: tuple[bool | None, str], spec: Mapping[str, Any]) -> CheckResult:
    free, where = reading
    src = spec.get("source")
    if free is True:
        return CheckResult(
            "port", "ok", {"bind": where}, "a free port", f"--host {host} --port {port}: free ({where})", src
        )
    if free is False and where.endswith(DENIED):
        return CheckResult(
            "port", "fail", {"bind": where, "denied": True}, "a port the server may bind",
            f"--host {host} --port {port}: not allowed here ({where}): the server would fail to bind after loading "
            "the weights (choose a --port of 1024 or above, or run the server with the privilege to bind it)", src,
        )  # fmt: skip
    if free is False:
        return CheckResult(
            "port", "fail", {"bind": where, "in_use": True}, "a free port",
            f"--host {host} --port {port}: already in use ({where}): the server would fail to bind after loading "
            "the weights (choose another --port, or stop the other server)", src,
        )  # fmt: skip
    # the test itself could not run (no IPv6 loopback, say): that says nothing about the port, so a note
    return CheckResult("port", "warn", {"bind": where}, "a free port", f"--port {port}: not tested: {where}", src)


def check_shm(reading: ShmReading, world: int, spec: Mapping[str, Any]) -> CheckResult | None:
    """The shared-memory filesystem, when more than one GPU process talks through NCCL on this node."""
    if world <= 1:
        return None
    src = spec.get("source")
    fail_below = int(spec.get("fail_below_bytes", 64 << 20))
    warn_below = int(spec.get("warn_below_bytes", 1 << 30))
    req = {"refuse_below_bytes": fail_below, "recommended_bytes": warn_below}
    if reading.available is None:
        return CheckResult("shm", "unknown", None, req, f"{reading.path}: {reading.error}", src)
    obs = {"size_bytes": reading.size, "available_bytes": reading.available}
    have = f"{reading.path}: {gib(reading.available)} available of {gib(reading.size)}"
    if reading.available < fail_below:
        return CheckResult(
            "shm", "fail", obs, req,
            f"{have}, with {world} GPU processes on this node: NCCL's shared-memory buffers do not fit (Docker's "
            "default is 64 MiB: run the container with --shm-size 16g or more, or --ipc=host)", src,
        )  # fmt: skip
    if reading.available < warn_below:
        return CheckResult(
            "shm", "warn", obs, req, f"{have}: below the 1 GiB NCCL's guide recommends for {world} GPU processes", src
        )
    return CheckResult("shm", "ok", obs, req, f"{have}", src)


def check_memlock(limit: tuple[int | None, str | None], nnodes: int, spec: Mapping[str, Any]) -> CheckResult | None:
    """RLIMIT_MEMLOCK when NCCL goes over the network (--nnodes > 1): a warning, never a refusal."""
    if nnodes <= 1:
        return None
    value, err = limit
    src = spec.get("source")
    need = int(spec.get("warn_below_bytes", 64 << 20))
    if value is None:
        return CheckResult("memlock", "unknown", None, "unlimited", f"ulimit -l: {err}", src)
    if value == -1 or value >= need:
        shown = "unlimited" if value == -1 else gib(value)
        return CheckResult("memlock", "ok", value, "unlimited", f"ulimit -l: {shown}", src)
    return CheckResult(
        "memlock", "warn", value, "unlimited",
        f"ulimit -l is {value // 1024} KiB with --nnodes {nnodes}: NCCL's InfiniBand/RoCE transport pins host "
        "memory and fails to register it under a small limit (run with --ulimit memlock=-1)", src,
    )  # fmt: skip
