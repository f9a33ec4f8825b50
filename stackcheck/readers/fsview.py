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

import fnmatch
import os
import posixpath
import stat as stat_module

from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any, Literal, Protocol

    FileKind = Literal["file", "dir", "link", "other"]
else:  # typing is not imported at run time: the views are protocols to the type checker, plain classes here
    Protocol = object
    FileKind = str


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory where a regular file was expected."""


class FileStat(NamedTuple):
    """What stat says of a path (immutable: a NamedTuple, not a dataclass, which costs ~8 ms of imports)."""

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
            if self.root == "/":  # the host itself: the kernel resolves links, nothing can escape
                st = os.stat(path, follow_symlinks=follow_symlinks)
            else:
                target = self.realpath(path) if follow_symlinks else self._parent_resolved(path)
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

    # On the host itself (root "/") a path is first listed or read as it is: the kernel resolves its links as
    # `realpath` does (physically), without that walk's lstat of every component in Python, each of which lets
    # go of the interpreter lock and waits to take it back while another thread works (the probes run beside
    # the manifests' loading). Where that fails, the path goes the resolved way as before, so every error (its
    # file name included) and every answer of a path the two resolve differently ("" is the working
    # directory to realpath; "/missing/../etc" a path to it) stays what it was.

    def listdir(self, path: str) -> list[str]:
        if self.root == "/" and path:
            try:
                return os.listdir(path)
            except (OSError, ValueError):
                pass
        return os.listdir(self.host_path(self.realpath(path)))

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        if self.root == "/" and path:
            try:
                return self._read(path, path, limit, offset)
            except NotRegularFile:
                raise  # (the same file either way: the same answer)
            except (OSError, ValueError):
                pass
        return self._read(path, self.host_path(self.realpath(path)), limit, offset)

    def _read(self, path: str, real: str, limit: int, offset: int) -> bytes:
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
        return os.readlink(self.host_path(self._parent_resolved(path)))

    def _parent_resolved(self, path: str) -> str:
        """The path with its directories resolved inside the root and its last component kept as it is (a
        link in a parent directory must not lead the host's own `stat` out of the root)."""
        if self.root == "/":
            return path
        head, tail = posixpath.split(path.rstrip("/") or "/")
        if not tail:
            return "/"
        return posixpath.join(self.realpath(head or "/"), tail)

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


# -- helpers over any view --------------------------------------------------------------------------------
# These are functions, not protocol methods, so that a view implementation (HostView, the image view) only
# provides the five primitives above and every probe gets the same globbing, PATH lookup and text reading.


class ConfiguredView(FileView, Protocol):
    """A view of a box that carries its own configuration: a container image.

    `stackcheck.image` (the image reader) provides one through `open_image_view(path) -> ConfiguredView`;
    the pipeline takes the environment the server would start with from `environment()` (the image
    config's Env: PATH, LD_LIBRARY_PATH, CUDA_VERSION, NVIDIA_REQUIRE_CUDA, ...) and the `facts.image`
    section from `image_facts()` (reference or path, digest, layers, config env, labels).
    """

    def environment(self) -> dict[str, str]: ...

    def image_facts(self) -> dict[str, Any]: ...


def is_host(view: FileView) -> bool:
    """True for the machine stackcheck runs on, seen from its own root: only there can a file be executed."""
    return isinstance(view, HostView) and view.root == "/"


def kind_of(view: FileView, path: str, follow_symlinks: bool = True) -> FileKind | None:
    """ "file", "dir", "link", "other", or None when nothing is there (or it cannot be seen)."""
    try:
        st = view.stat(path, follow_symlinks=follow_symlinks)
    except (OSError, ValueError):
        return None
    return st.kind if st is not None else None


def is_dir(view: FileView, path: str) -> bool:
    return kind_of(view, path) == "dir"


def is_file(view: FileView, path: str) -> bool:
    return kind_of(view, path) == "file"


def exists(view: FileView, path: str) -> bool:
    return kind_of(view, path) is not None


def read_text(view: FileView, path: str, limit: int) -> str:
    """At most `limit` bytes of a regular file as text (UTF-8, undecodable bytes replaced). Raises OSError
    (NotRegularFile for a FIFO or a device); a file larger than `limit` is refused with ValueError, so a
    caller never parses half of a file as if it were whole."""
    data = view.read_bytes(path, limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path}: larger than {limit} bytes")
    return data.decode("utf-8", errors="replace")


def listdir_or_empty(view: FileView, path: str) -> list[str]:
    try:
        return sorted(view.listdir(path))
    except (OSError, ValueError):
        return []


def which(view: FileView, name: str, path_value: str | None, cwd: str | None = None) -> str | None:
    """The first executable `name` on a PATH value, as a box path (like shutil.which, through the view). A relative
    or empty PATH entry is the working directory's (execvp joins it to the name, and the kernel resolves that from
    the process's directory): with `cwd` (an absolute directory, the one the program is started in) it is looked up
    there, else passed over (a box's working directory is not known)."""
    if "/" in name:
        st = _stat_quiet(view, name)
        return name if st is not None and st.kind == "file" and st.mode & 0o111 else None
    for entry in (path_value or "").split(":"):
        directory = entry
        if not entry.startswith("/"):
            if cwd is None or not cwd.startswith("/"):
                continue  # a relative PATH entry depends on a working directory the box does not have
            directory = posixpath.join(cwd, entry) if entry else cwd
        candidate = posixpath.join(directory, name)
        st = _stat_quiet(view, candidate)
        if st is not None and st.kind == "file" and st.mode & 0o111:
            return candidate
    return None


def which_known(
    view: FileView, name: str, path_value: str | None, cwd: str | None, unknown_dir: str
) -> tuple[str | None, str]:
    """(the first executable `name` on a PATH value, as `which` finds it; why the answer is not known, or ""). A
    relative or empty PATH entry met before any hit is looked up in `cwd` where that is known (an absolute directory);
    where it is not, the search stops there with no answer and the reason names the entry and `unknown_dir` (the
    directory it would be read in: the server's working directory, a JIT build's directory), so a program found
    further on never stands for the one that entry may hold (a false pass)."""
    if "/" in name:
        return which(view, name, path_value), ""
    for entry in path_value.split(":") if path_value is not None else ():
        if entry.startswith("/"):
            found = which(view, name, entry)
        elif cwd is not None and cwd.startswith("/"):
            found = which(view, name, entry, cwd)
        else:
            shown = repr(entry) if entry else "an empty entry"
            return None, f"PATH has {shown} before any {name}: relative, it is read in {unknown_dir}, not read here"
        if found is not None:
            return found, ""
    return None, ""


def _stat_quiet(view: FileView, path: str) -> FileStat | None:
    try:
        return view.stat(path)
    except (OSError, ValueError):
        return None


class GlobLimit(Exception):
    """A glob visited more entries than it may (a pathological tree); the caller records a reason."""


def _entries(view: FileView, directory: str) -> list[tuple[str, bool, bool]]:
    """(name, is a directory following links, is a directory without following them), sorted by name. On a
    HostView one os.scandir call answers both without a stat per entry (the file types come with the
    listing); other views pay a stat per entry."""
    if isinstance(view, HostView):
        try:
            real = directory if view.root == "/" else view.host_path(view.realpath(directory))
            out = []
            with os.scandir(real) as it:
                for entry in it:
                    try:
                        link = entry.is_symlink()
                        if link and view.root != "/":  # the host would resolve it outside the root
                            follow = is_dir(view, posixpath.join(directory, entry.name))
                        else:
                            follow = entry.is_dir()
                        out.append((entry.name, follow, entry.is_dir(follow_symlinks=False)))
                    except OSError:  # a symlink loop (ELOOP): a name that is there and is not a directory
                        out.append((entry.name, False, False))
            return sorted(out)
        except (OSError, ValueError):
            return []
    return [
        (
            name,
            is_dir(view, posixpath.join(directory, name)),
            kind_of(view, posixpath.join(directory, name), False) == "dir",
        )
        for name in listdir_or_empty(view, directory)
    ]


def glob(view: FileView, base: str, pattern: str, max_visits: int = 200_000) -> list[str]:
    """Box paths under `base` matching a relative glob pattern (`torch/lib/*.so`, `sgl_kernel/**/*.so`),
    sorted. `**` matches zero or more directories and does not descend through symbolic links (no loops);
    the other components follow links, as pathlib does. Raises GlobLimit past `max_visits` entries."""
    parts = [p for p in pattern.split("/") if p and p != "."]
    found: set[str] = set()
    visits = [0]
    listed: dict[str, list[tuple[str, bool, bool]]] = {}  # `**` and the next component list a directory once

    def entries(directory: str) -> list[tuple[str, bool, bool]]:
        if directory not in listed:
            listed[directory] = _entries(view, directory)
        return listed[directory]

    def count(directory: str) -> None:
        visits[0] += 1
        if visits[0] > max_visits:
            raise GlobLimit(f"{base}: more than {max_visits} entries under {pattern!r}")

    def step(directory: str, index: int) -> None:
        if index == len(parts):
            found.add(directory)
            return
        part = parts[index]
        last = index + 1 == len(parts)
        if part == "**":
            step(directory, index + 1)  # zero directories
            for name, _follow, real_dir in entries(directory):
                count(directory)
                if real_dir:
                    step(posixpath.join(directory, name), index)
            return
        if not any(ch in part for ch in "*?["):
            child = posixpath.join(directory, part)
            if (last and exists(view, child)) or (not last and is_dir(view, child)):
                step(child, index + 1)
            return
        for name, follow, _real_dir in entries(directory):
            count(directory)
            if name.startswith(".") and not part.startswith("."):
                continue  # as pathlib and the shell: a wildcard does not match a hidden name
            if fnmatch.fnmatchcase(name, part) and (last or follow):
                step(posixpath.join(directory, name), index + 1)

    step(base.rstrip("/") or "/", 0)
    return sorted(found)
