"""One filesystem view for every probe: the host, a root directory, or a container image.

A probe reads the box through `FileView` with *box paths* (absolute paths as the server would see them:
`/opt/serve/lib/python3.12/site-packages/torch/version.py`), never through `open()` on a host path. That way
one probe serves the host (`HostView`), an unpacked or mounted root filesystem (`--root DIR`) and an image
read without running it (`--image PATH`, stackcheck.image), and image support is not a fork of every probe.

The contract, for every implementation:
- paths are absolute box paths; `..` and symbolic links are resolved inside the view (a link never escapes
  a root or an image);
- `stat(path)` returns None when nothing is there; it never raises for a missing path;
- `read_bytes(path, limit, offset)` reads at most `limit` bytes of a *regular* file and refuses anything
  else (FIFO, device, directory) with `NotRegularFile` before opening it, so a planted FIFO cannot hang a
  probe; `listdir` and `read_bytes` raise OSError (FileNotFoundError, PermissionError, ...) like the os
  module does;
- nothing is written anywhere.
"""

from __future__ import annotations

import os
import stat as stat_module
from dataclasses import dataclass
from typing import Literal, Protocol

FileKind = Literal["file", "dir", "link", "other"]


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory where a regular file was expected."""


@dataclass(frozen=True)
class FileStat:
    kind: FileKind
    size: int
    mtime: float
    mode: int = 0o644


class FileView(Protocol):
    """Read-only access to the box being audited (see the module docstring for the contract)."""

    #: a short human description: "this host", "root /mnt/img", "image serve.tar"
    description: str

    def stat(self, path: str, follow_symlinks: bool = True) -> FileStat | None: ...

    def listdir(self, path: str) -> list[str]: ...

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes: ...

    def readlink(self, path: str) -> str: ...

    def realpath(self, path: str) -> str: ...


class HostView:
    """The machine stackcheck runs on, optionally below a root directory (`--root DIR`, tests)."""

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root)
        self.description = "this host" if self.root == "/" else f"root {self.root}"

    def host_path(self, path: str) -> str:
        """The host path of a box path (links inside a root are resolved inside it by `realpath`)."""
        if self.root == "/":
            return path
        return os.path.join(self.root, path.lstrip("/"))

    def stat(self, path: str, follow_symlinks: bool = True) -> FileStat | None:
        try:
            target = self.realpath(path) if follow_symlinks else path
            st = os.stat(self.host_path(target), follow_symlinks=False)
        except (OSError, ValueError):
            return None
        mode = st.st_mode
        kind: FileKind
        if stat_module.S_ISREG(mode):
            kind = "file"
        elif stat_module.S_ISDIR(mode):
            kind = "dir"
        elif stat_module.S_ISLNK(mode):
            kind = "link"
        else:
            kind = "other"
        return FileStat(kind, st.st_size, st.st_mtime, stat_module.S_IMODE(mode))

    def listdir(self, path: str) -> list[str]:
        return os.listdir(self.host_path(self.realpath(path)))

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        real = self.host_path(self.realpath(path))
        st = os.stat(real)
        if not stat_module.S_ISREG(st.st_mode):
            raise NotRegularFile(f"{path}: not a regular file")
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if not stat_module.S_ISREG(os.fstat(fd).st_mode):  # replaced between stat and open
                raise NotRegularFile(f"{path}: not a regular file")
            return os.pread(fd, max(0, limit), offset)
        finally:
            os.close(fd)

    def readlink(self, path: str) -> str:
        return os.readlink(self.host_path(path))

    def realpath(self, path: str) -> str:
        """The box path with every link resolved; below a root, links are resolved inside the root."""
        if self.root == "/":
            return os.path.realpath(path)
        parts = [p for p in path.split("/") if p]
        resolved: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = "/" + "/".join([*resolved, part])
            host = self.host_path(candidate)
            if os.path.islink(host):
                hops += 1
                if hops > 40:
                    raise OSError(f"{path}: too many levels of symbolic links")
                target = os.readlink(host)
                if target.startswith("/"):
                    resolved = []
                parts = [p for p in target.split("/") if p] + parts
                continue
            resolved.append(part)
        return "/" + "/".join(resolved)
