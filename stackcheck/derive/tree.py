"""Where derive reads a release from: a wheel read as a zip (never unpacked), an unpacked wheel, or an
installed distribution in a site directory. All three answer the same questions (which files the release
has, the bytes of a small file, a random-access source for a binary) through `ReleaseTree`.

`open_releases(path)` finds the distributions a command-line argument names:
- `X.whl`: the one distribution of the wheel;
- a directory with `*.dist-info/` inside (an unpacked wheel, or a site-packages directory): each of them;
- a package directory inside a site directory (`…/site-packages/sglang`): the distribution whose RECORD
  lists it.
"""

from __future__ import annotations

import csv
import io
import os
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from stackcheck.derive.zipmember import ZipMemberError, ZipMemberSource
from stackcheck.readers.elf import ByteSource

MAX_TEXT_BYTES = 8 * 1024 * 1024
"""Largest text file derive reads (METADATA, RECORD, a Python source): larger ones are refused."""
MAX_FILES = 200_000
"""A release with more files than this is cut there (with a note)."""


class TreeError(Exception):
    """A release or a file in it cannot be read; the message names the file and the reason (one line)."""


def normalise(name: str) -> str:
    out = []
    for char in name.lower():
        out.append("-" if char in "_." else char)
    text = "".join(out)
    while "--" in text:
        text = text.replace("--", "-")
    return text


def _safe(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and not name.startswith("/") and ".." not in parts


@dataclass(frozen=True)
class FileKey:
    """What identifies an installed file for the cache: its path, size and modification time, and its change
    time and inode (a file rewritten in place at the same size with its modification time put back, by
    `cp -p`, `rsync -a`, `touch -r` or an image layer with fixed timestamps, keeps the first three; the kernel
    sets ctime on every write and nobody can set it back)."""

    path: str
    size: int
    mtime_ns: int
    ctime_ns: int = 0
    ino: int = 0

    @classmethod
    def of(cls, path: str, st: os.stat_result) -> FileKey:
        return cls(path, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)

    def stamp(self) -> tuple[str, int, int, int, int]:
        """What an entry keeps and compares."""
        return self.path, self.size, self.mtime_ns, self.ctime_ns, self.ino


class ReleaseTree:
    """The files of one distribution. Subclasses: WheelTree, DirTree."""

    label: str  # the wheel's file name, or the directory
    kind: str  # "wheel" | "directory"

    def names(self) -> list[str]:
        raise NotImplementedError

    def names_under(self, prefix: str) -> list[str]:
        return [n for n in self.names() if n.startswith(prefix)]

    def exists(self, name: str) -> bool:
        raise NotImplementedError

    def read_bytes(self, name: str, limit: int = MAX_TEXT_BYTES) -> bytes:
        raise NotImplementedError

    def binary(self, name: str) -> tuple[str, ByteSource | None]:
        """(a display path, a source) for ElfFile; the source is None when the file is on disk (path)."""
        raise NotImplementedError

    def file_key(self, name: str) -> FileKey | None:
        """The cache key of an installed file; None inside a wheel (the wheel's own key covers it)."""
        return None

    def where(self, name: str) -> str:
        return f"{self.label}!{name}"

    def close(self) -> None:
        return None


class WheelTree(ReleaseTree):
    kind = "wheel"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.label = path.name
        try:
            st = path.stat()
            if not stat.S_ISREG(st.st_mode):
                raise TreeError(f"{path}: not a regular file")
            self._zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile, ValueError) as exc:
            raise TreeError(f"{path}: not a readable wheel: {exc}") from None
        self.size = st.st_size
        self.mtime_ns = st.st_mtime_ns
        self._fd = os.open(path, os.O_RDONLY)
        infos = [i for i in self._zip.infolist() if not i.is_dir() and _safe(i.filename)]
        self._infos = {i.filename: i for i in infos[:MAX_FILES]}
        self.truncated = len(infos) > MAX_FILES

    def names(self) -> list[str]:
        return list(self._infos)

    def exists(self, name: str) -> bool:
        return name in self._infos

    def info(self, name: str) -> zipfile.ZipInfo:
        try:
            return self._infos[name]
        except KeyError:
            raise TreeError(f"{self.where(name)}: no such member") from None

    def read_bytes(self, name: str, limit: int = MAX_TEXT_BYTES) -> bytes:
        info = self.info(name)
        if info.file_size > limit:
            raise TreeError(f"{self.where(name)}: {info.file_size} bytes, larger than the {limit}-byte limit")
        try:
            source = ZipMemberSource(self._fd, info, self.size)
            data = source.read_at(0, info.file_size)
            source.close()
        except OSError as exc:
            raise TreeError(f"{self.where(name)}: {exc}") from None
        if len(data) != info.file_size:
            raise TreeError(f"{self.where(name)}: member ends after {len(data)} of {info.file_size} bytes")
        return data

    def binary(self, name: str) -> tuple[str, ByteSource | None]:
        try:
            return self.where(name), ZipMemberSource(self._fd, self.info(name), self.size)
        except ZipMemberError as exc:
            raise TreeError(f"{self.where(name)}: {exc}") from None

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._zip.close()


class DirTree(ReleaseTree):
    """A release on disk under `root` (a site directory or an unpacked wheel). `files`, when given (from
    the RECORD), are the release's files; otherwise the directories asked for are walked."""

    kind = "directory"

    def __init__(self, root: Path, files: list[str] | None = None) -> None:
        self.root = root
        self.label = str(root)
        self._files = files
        self._set = set(files) if files is not None else None

    def names(self) -> list[str]:
        if self._files is None:
            self._files = self._walk("")
            self._set = set(self._files)
        return list(self._files)

    def names_under(self, prefix: str) -> list[str]:
        if self._files is not None:
            return [n for n in self._files if n.startswith(prefix)]
        return self._walk(prefix)

    def _walk(self, prefix: str) -> list[str]:
        base = self.root / prefix if prefix else self.root
        out: list[str] = []
        if not base.is_dir():
            return out
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames.sort()
            rel_dir = Path(dirpath).relative_to(self.root).as_posix()
            for fname in sorted(filenames):
                out.append(fname if rel_dir == "." else f"{rel_dir}/{fname}")
                if len(out) >= MAX_FILES:
                    return out
        return out

    def _path(self, name: str) -> Path:
        if not _safe(name):
            raise TreeError(f"{self.root}: refused path {name!r}")
        return self.root.joinpath(*PurePosixPath(name).parts)

    def exists(self, name: str) -> bool:
        if self._set is not None and name not in self._set:
            return False
        try:
            return self._path(name).is_file()
        except (OSError, TreeError):
            return False

    def read_bytes(self, name: str, limit: int = MAX_TEXT_BYTES) -> bytes:
        path = self._path(name)
        try:
            st = path.stat()
            if not stat.S_ISREG(st.st_mode):
                raise TreeError(f"{path}: not a regular file")
            if st.st_size > limit:
                raise TreeError(f"{path}: {st.st_size} bytes, larger than the {limit}-byte limit")
            with path.open("rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            raise TreeError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if len(data) > limit:
            raise TreeError(f"{path}: larger than the {limit}-byte limit")
        return data

    def binary(self, name: str) -> tuple[str, ByteSource | None]:
        return str(self._path(name)), None

    def file_key(self, name: str) -> FileKey | None:
        path = self._path(name)
        try:
            st = path.stat()
        except OSError:
            return None
        return FileKey.of(str(path), st)

    def where(self, name: str) -> str:
        return str(self._path(name))


@dataclass
class Release:
    """One distribution inside a tree: its dist-info directory (a prefix of the tree's names)."""

    tree: ReleaseTree
    dist_info: str  # "sglang-0.5.23.dist-info"
    name: str = ""  # normalised, from METADATA (filled by derive)
    version: str = ""
    notes: list[str] = field(default_factory=list)

    @property
    def origin(self) -> str:
        """How a source names the release: the wheel file, or the dist-info directory on disk."""
        if self.tree.kind == "wheel":
            return self.tree.label
        return f"{self.tree.label}/{self.dist_info}"


def _record_files(root: Path, dist_info: str) -> list[str] | None:
    """The files a RECORD lists, relative to `root` (entries outside it are left out); None without one."""
    record = root / dist_info / "RECORD"
    try:
        if not record.is_file() or record.stat().st_size > MAX_TEXT_BYTES:
            return None
        text = record.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    out = []
    for row in csv.reader(io.StringIO(text)):
        if row and _safe(row[0]):
            out.append(row[0])
    return out


def _dist_infos(directory: Path) -> list[str]:
    try:
        return sorted(e.name for e in os.scandir(directory) if e.name.endswith(".dist-info") and e.is_dir())
    except OSError as exc:
        raise TreeError(f"{directory}: cannot list: {exc.strerror or exc}") from None


def open_releases(arg: str | Path) -> Iterator[Release]:
    """The distributions a command-line argument names (see the module docstring). Raises TreeError."""
    path = Path(arg)
    try:
        st = path.stat()
    except OSError as exc:
        raise TreeError(f"{path}: {exc.strerror or exc}") from None
    if stat.S_ISREG(st.st_mode):
        if path.suffix != ".whl":
            raise TreeError(f"{path}: not a wheel (.whl) or a directory")
        tree = WheelTree(path)
        infos = sorted({n.split("/", 1)[0] for n in tree.names() if n.split("/", 1)[0].endswith(".dist-info")})
        if len(infos) != 1:
            tree.close()
            raise TreeError(f"{path}: {len(infos)} .dist-info directories (a wheel has one)")
        yield Release(tree, infos[0])
        return
    if not stat.S_ISDIR(st.st_mode):
        raise TreeError(f"{path}: not a wheel or a directory")
    infos = _dist_infos(path)
    if infos:
        for info in infos:
            yield Release(DirTree(path, _record_files(path, info)), info)
        return
    # a package directory inside a site directory: the distribution whose RECORD lists it
    parent = path.resolve().parent
    top = path.resolve().name
    for info in _dist_infos(parent):
        files = _record_files(parent, info)
        if files is not None and any(f.startswith(f"{top}/") for f in files):
            yield Release(DirTree(parent, files), info)
            return
    raise TreeError(f"{path}: no .dist-info here or beside it that lists {top}/ (not a wheel or an installed package)")


def installed_release(location: str | Path, name: str) -> Release | None:
    """The installed distribution `name` (normalised) in the site directory `location`, reading the disk
    lazily (no RECORD: the files derive asks for are looked up directly)."""
    root = Path(location)
    try:
        infos = _dist_infos(root)
    except TreeError:
        return None
    for info in infos:
        dist = info[: -len(".dist-info")].rsplit("-", 1)[0]
        if normalise(dist) == name:
            return Release(DirTree(root), info)
    return None
