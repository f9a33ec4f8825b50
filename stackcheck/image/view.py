"""`ImageView`: the FileView (stackcheck/readers/fsview.py) of an image read without running it."""

from __future__ import annotations

import errno
import posixpath
import stat as st
from collections.abc import Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from stackcheck.image.blobs import Blob, FileHandle, GzipIndex, Truncated
from stackcheck.image.tree import AnyNode, Tree
from stackcheck.readers.fsview import ConfiguredView, FileKind, FileStat, FileView, NotRegularFile

if TYPE_CHECKING:
    from stackcheck.image.info import ImageInfo

PASSWD_CAP = 1 << 20


def home_of(view: FileView, user: str | None) -> str:
    """The home directory the container runtime gives the config's User when the Env sets no HOME: runc's
    setupUser looks the user up in the image's /etc/passwd (a name, or a uid; the part before ":"; empty
    means root, uid 0) and falls back to "/" when there is no such entry (opencontainers/runc
    libcontainer/init_linux.go, setupUser: defaultExecUser Home "/", then HOME from the entry)."""
    spec = (user or "").split(":", 1)[0].strip() or "0"
    try:
        text = view.read_bytes("/etc/passwd", PASSWD_CAP).decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return "/"
    for line in text.splitlines():
        fields = line.split(":")
        if len(fields) < 7:
            continue
        if spec in (fields[0], fields[2]):
            home = fields[5]
            return home if home.startswith("/") else "/"
    return "/"


def runtime_environment(view: FileView, env: Mapping[str, str], user: str | None) -> dict[str, str]:
    """The environment a container of this image starts with, as far as the files decide it: the config's
    Env, PATH defaulted as docker does when the config has none, and HOME from the User's passwd entry
    when the Env sets none (`home_of`)."""
    from stackcheck.assembly.target import DEFAULT_PATH  # docker's PATH for a config without one

    out = dict(env)
    if not out.get("PATH"):
        out["PATH"] = DEFAULT_PATH
    if not out.get("HOME"):
        out["HOME"] = home_of(view, user)
    return out


class ContentNotRead(OSError):
    """The file exists in the image but its bytes cannot be served (the message says why)."""


@dataclass
class LayerData:
    """Where one layer's stream is, to serve file contents: an uncompressed blob or a gzip index."""

    blob: Blob
    gzip: GzipIndex | None = None

    def read(self, offset: int, n: int) -> bytes:
        if self.gzip is not None:
            return self.gzip.read(offset, n)
        try:
            return self.blob.pread(offset, n)
        except Truncated as exc:
            raise OSError(str(exc)) from None


def _kind(node: AnyNode) -> FileKind:
    if node.is_file:
        return "file"
    if node.is_dir:
        return "dir"
    if node.is_link:
        return "link"
    return "other"


class ImageView:
    """Read-only access to an image's merged filesystem, with box paths (see `FileView`).

    Built by `stackcheck.image.open_image`; close it (or use it as a context manager) to release the
    files it holds open. Safe to share between probe threads.
    """

    def __init__(
        self,
        tree: Tree,
        layers: list[LayerData],
        handles: list[FileHandle],
        info: ImageInfo,
    ) -> None:
        self._tree = tree
        self._layers = layers
        self._handles = handles
        self.info = info
        self.description = f"image {info.reference or info.path}"
        self._environment: dict[str, str] | None = None

    # ---- lifetime ---------------------------------------------------------------------------------
    def close(self) -> None:
        for h in self._handles:
            h.close()

    def __enter__(self) -> ImageView:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ---- FileView ---------------------------------------------------------------------------------
    def stat(self, path: str, follow_symlinks: bool = True) -> FileStat | None:
        try:
            _, node = self._tree.resolve(path, follow_last=follow_symlinks)
        except OSError:
            return None
        if node is None:
            return None
        return FileStat(_kind(node), node.size, float(node.mtime), st.S_IMODE(node.mode))

    def listdir(self, path: str) -> list[str]:
        _, node = self._tree.resolve(path)
        if node is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        if not isinstance(node.where, dict):
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", path)
        return list(node.where)

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        _, node = self._tree.resolve(path)
        if node is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        if not node.is_file:
            raise NotRegularFile(f"{path}: not a regular file")
        n = max(0, min(limit, node.size - max(0, offset)))
        if n == 0 or offset < 0:
            return b""
        data = node.where
        if isinstance(data, bytes):
            return data[offset : offset + n]
        if isinstance(data, str):
            raise ContentNotRead(errno.EIO, data, path)
        if isinstance(data, tuple):
            layer, start = data
        else:
            layer, start = node.layer, int(data)
        return self._layers[layer].read(start + offset, n)

    def readlink(self, path: str) -> str:
        _, node = self._tree.resolve(path, follow_last=False)
        if node is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        if not node.is_link or not isinstance(node.where, str):
            raise OSError(errno.EINVAL, "Invalid argument", path)
        return node.where

    def realpath(self, path: str) -> str:
        return self._tree.resolve(path)[0]

    # ---- ConfiguredView (stackcheck/readers/fsview.py) -------------------------------------------------
    def environment(self) -> dict[str, str]:
        """The environment the server starts with in a container of this image (`runtime_environment`).
        It holds the config's whole Env, secrets included: for reading the image, never for a report."""
        if self._environment is None:
            self._environment = runtime_environment(self, self.info.raw_env, self.info.user)
        return dict(self._environment)

    def command(self) -> list[str]:
        """What a container of this image runs by default: Entrypoint + Cmd (raw: never for a report)."""
        return list(self.info.command)

    def workdir(self) -> str:
        """Where that command starts (the config's WorkingDir, else "/")."""
        wd = self.info.workdir or "/"
        return wd if wd.startswith("/") else "/" + wd

    def image_facts(self) -> dict[str, Any]:
        """The `facts.image` section (`ImageInfo.to_facts`: allow-listed env, secrets dropped)."""
        return self.info.to_facts()

    # ---- beyond the protocol ----------------------------------------------------------------------
    def walk(self, top: str = "/") -> list[str]:
        """Every path below `top` (links not followed), for tests and tools; sorted."""
        real, node = self._tree.resolve(top)
        out: list[str] = []
        stack: list[tuple[str, AnyNode]] = [(real, node)] if node is not None else []
        while stack:
            path, cur = stack.pop()
            if isinstance(cur.where, dict):
                for name, child in cur.where.items():
                    child_path = posixpath.join(path, name)
                    out.append(child_path)
                    if child.is_dir:
                        stack.append((child_path, child))
        return sorted(out)


if TYPE_CHECKING:

    def _is_a_file_view(view: ImageView) -> FileView:
        return view  # mypy checks that ImageView implements the FileView protocol

    def _is_a_configured_view(view: ImageView) -> ConfiguredView:
        return view  # ... and the ConfiguredView one the pipeline takes the Env and facts.image from
