"""The host readings the gate's preflight takes and a kept gate decision takes again (stackcheck.assembly.gate_cache
replays them): /dev/shm's size (`read_shm`), the locked-memory limit (`read_memlock`), whether the server's port is
free (`port_free`). They live outside the preflight package, so that a decision served from the cache, which reads
them again, imports none of the preflight's modules (the package, its checks, stackcheck.record: ~5 M instructions
of every served gate, iperf23); stackcheck.launch.preflight.host judges the readings and names them too."""

from __future__ import annotations

import os

from stackcheck.digits import whole_number
from stackcheck.lean_typing import NamedTuple


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
        (n := whole_number(p, 3, ascii_only=True)) is not None and n <= 255 and (p == "0" or p[0] != "0") for p in parts
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
