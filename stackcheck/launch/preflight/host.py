"""The container and the host: /dev/shm for NCCL, the server's port, the locked-memory limit.

The readings are small probes (`read_shm`, `port_free`, `read_memlock`); the checks are pure functions of
them, so tests inject readings (a 64 MiB /dev/shm, a busy port) without a container.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from stackcheck.launch.preflight.result import CheckResult, gib
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any


class ShmReading(NamedTuple):
    path: str
    size: int | None  # bytes of the filesystem
    available: int | None  # bytes free for an unprivileged writer
    error: str | None = None


SHM_PATH = "/dev/shm"  # noqa: S108 - read with statvfs, never written


def read_shm(path: str = SHM_PATH) -> ShmReading:
    try:
        st = os.statvfs(path)
    except OSError as exc:
        return ShmReading(path, None, None, f"{path}: {exc.strerror or exc}")
    return ShmReading(path, st.f_blocks * st.f_frsize, st.f_bavail * st.f_frsize)


def read_memlock() -> tuple[int | None, str | None]:
    """The soft RLIMIT_MEMLOCK in bytes (-1: unlimited), or an error."""
    try:
        import resource

        soft, _hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    except (ImportError, OSError, ValueError) as exc:
        return None, str(exc)
    return (-1 if soft == resource.RLIM_INFINITY else int(soft)), None


def _ipv4(text: str) -> bool:
    """Whether `text` is a dotted-quad IPv4 address as ipaddress reads one: four parts of one to three
    ASCII digits, no leading zero, none above 255 (so that it is also its own canonical spelling)."""
    parts = text.split(".")
    return len(parts) == 4 and all(
        0 < len(p) <= 3 and p.isascii() and p.isdigit() and (p == "0" or p[0] != "0") and int(p) <= 255 for p in parts
    )


def loopback_for(host: str) -> tuple[str, int, str | None]:
    """The loopback address to bind for a --host value, its family, and a note when it is not the host itself.

    Only loopback is ever bound: a listener on the wildcard address or on loopback blocks the bind, which is the
    common case ("another server on 30000"); a listener bound only to another interface is not seen. An IPv4
    address or a name is told without ipaddress (~1.5 ms of the gate's start); an IPv6 address is its to read.
    """
    from _socket import AF_INET, AF_INET6

    text = host.strip("[]")
    if _ipv4(text):
        if text.startswith("127."):  # 127.0.0.0/8, ipaddress's is_loopback
            return text, AF_INET, None
        return "127.0.0.1", AF_INET, f"tested on 127.0.0.1 (loopback), not {host}"
    if ":" not in text:  # neither IPv4 nor IPv6 (ipaddress reads no IPv6 address without a colon): a name
        if host == "localhost":
            return "127.0.0.1", AF_INET, None
        return "127.0.0.1", AF_INET, f"--host {host} is a name: tested on 127.0.0.1 (no lookup is made)"
    import ipaddress

    try:
        addr = ipaddress.ip_address(text)
    except ValueError:
        return "127.0.0.1", AF_INET, f"--host {host} is a name: tested on 127.0.0.1 (no lookup is made)"
    if addr.is_loopback:
        return str(addr), AF_INET6 if addr.version == 6 else AF_INET, None
    if addr.version == 6:
        return "::1", AF_INET6, f"tested on ::1 (loopback), not {host}"
    return "127.0.0.1", AF_INET, f"tested on 127.0.0.1 (loopback), not {host}"


#: how port_free says a bind was refused for want of privileges (a port in use says only where)
DENIED = "permission denied (a port below 1024 needs privileges)"


#: where the names of the hosts file live (read to know whether "localhost" also means ::1 here)
HOSTS_FILE = "/etc/hosts"


def localhost_is_v6(path: str | None = None) -> bool:
    """Whether the hosts file maps `localhost` to ::1 too (Debian, Fedora and RHEL write `::1 localhost ...`;
    Ubuntu names ::1 ip6-localhost only): a server bound to localhost then listens on both loopbacks."""
    try:
        with open(path or HOSTS_FILE, "rb") as fh:
            data = fh.read(1 << 16)
    except OSError:
        return False
    for raw in data.decode("utf-8", "replace").splitlines():
        words = raw.split("#", 1)[0].split()
        if len(words) >= 2 and words[0] == "::1" and "localhost" in words[1:]:
            return True
    return False


def _also_v6(host: str) -> bool:
    """A --host whose listener also takes the IPv6 loopback: the empty host (asyncio binds every family's
    wildcard, 0.0.0.0 and ::) and localhost where the hosts file maps it to ::1."""
    return host == "" or (host == "localhost" and localhost_is_v6())


def port_free(host: str, port: int) -> tuple[bool | None, str]:
    """Whether the server could bind (host, port) now: a bind on loopback with SO_REUSEADDR, as uvicorn sets it
    (a TIME_WAIT connection does not block it, a listener does). Never connects anywhere. The socket is the C
    module's own (_socket): the `socket` module's enums and wrappers are ~2 ms of the gate's start, for a bind.
    For a host that also listens on IPv6 (_also_v6) ::1 is bound too; a box without IPv6 skips that one."""
    from _socket import AF_INET6

    addr, family, note = loopback_for(host)
    free, where = _bind_once(addr, family, port, note)
    if free is True and family != AF_INET6 and _also_v6(host):
        free6, where6 = _bind_once("::1", AF_INET6, port, f"--host {host!r} listens on IPv6 too")
        if free6 is False:
            return free6, where6
    return free, where


def _bind_once(addr: str, family: int, port: int, note: str | None) -> tuple[bool | None, str]:
    import errno
    from _socket import AF_INET, SO_REUSEADDR, SOCK_STREAM, SOL_SOCKET, socket

    where = f"{addr}:{port}" if family == AF_INET else f"[{addr}]:{port}"
    sock = None
    try:
        sock = socket(family, SOCK_STREAM)
        sock.setsockopt(SOL_SOCKET, SO_REUSEADDR, 1)
        sock.bind((addr, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            return False, where + (f" ({note})" if note else "")
        if exc.errno == errno.EACCES:
            return False, f"{where}: {DENIED}"
        return None, f"{where}: {exc.strerror or exc}"
    finally:
        if sock is not None:
            sock.close()
    return True, where + (f" ({note})" if note else "")


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
