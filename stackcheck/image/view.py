"""`ImageView`: the FileView (stackcheck/probes/fsview.py) of an image read without running it."""

from __future__ import annotations

import errno
import posixpath
import stat as st
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from stackcheck.image.blobs import Blob, FileHandle, GzipIndex, Truncated
from stackcheck.image.tree import Node, Tree
from stackcheck.probes.fsview import FileKind, FileStat, FileView, NotRegularFile

if TYPE_CHECKING:
    from stackcheck.image.layout import ImageInfo


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


def _kind(node: Node) -> FileKind:
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

    # ---- beyond the protocol ----------------------------------------------------------------------
    def walk(self, top: str = "/") -> list[str]:
        """Every path below `top` (links not followed), for tests and tools; sorted."""
        real, node = self._tree.resolve(top)
        out: list[str] = []
        stack: list[tuple[str, Node]] = [(real, node)] if node is not None else []
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
