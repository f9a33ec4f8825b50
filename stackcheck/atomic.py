"""Writing output: a file so that a reader never sees half of it, and standard output so that a full disk,
a closed descriptor or a vanished reader is a one-line error (exit 2), never a traceback.

`write_atomic`: a temporary file in the same directory, flushed and synced, then renamed over the target.
A failed write leaves the old file in place and no temporary file behind, whatever fails (the text is
encoded before the temporary file exists; the temporary file is removed on every error, interrupts
included). Text that cannot be encoded as UTF-8 (a lone surrogate from an undecodable byte) is written
as a `\\udcff` escape rather than failing.

Symbolic links are followed (the file a link points to is replaced, the link stays), one hop at a time, at
most 40 hops (a link loop, a self-link: a one-line error), and, as Linux's fs.protected_symlinks does, a
link in a sticky world-writable directory (/tmp) is followed only if its owner is the caller or the
directory's owner: a link another user planted in /tmp cannot make a root job replace a file it points
to. A target that is not a regular file (/dev/stdout, a FIFO, a character device) is written in place,
since it cannot be renamed over; a FIFO is opened without blocking (no reader: an error, not a hang) and,
in a sticky world-writable directory, only if the caller or the directory's owner owns it (as
fs.protected_fifos). An existing file keeps its permissions."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys

from stackcheck.errors import OutputError

MAX_LINK_HOPS = 40


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc) or type(exc).__name__


def _sticky_world_writable(st: os.stat_result) -> bool:
    return bool(st.st_mode & stat.S_ISVTX) and bool(st.st_mode & stat.S_IWOTH)


def _protected(path: str, owner: int, what: str) -> None:
    """Refuse `path` (a link or a FIFO owned by `owner`) in a sticky world-writable directory when neither
    the caller nor the directory's owner owns it."""
    parent = os.path.dirname(path) or "."
    try:
        dst = os.stat(parent)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
    if _sticky_world_writable(dst) and owner not in (os.geteuid(), dst.st_uid):
        raise OutputError(
            f"{path}: refusing to follow a {what} owned by uid {owner} in the sticky world-writable directory "
            f"{parent} (owned by uid {dst.st_uid}): another user may have planted it (as fs.protected_symlinks)"
        )


def resolve_target(path: str) -> str:
    """The file a write to `path` lands on: links followed one hop at a time, with the checks above."""
    current = os.fspath(path)
    for _ in range(MAX_LINK_HOPS + 1):
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return current  # a new file (or a dangling link's target): created
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
        if not stat.S_ISLNK(st.st_mode):
            return current
        _protected(current, st.st_uid, "symbolic link")
        try:
            target = os.readlink(current)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {_why(exc)}") from None
        current = os.path.join(os.path.dirname(current), target)
    raise OutputError(f"{path}: cannot write: too many levels of symbolic links (a link loop?)")


def write_atomic(path: str | os.PathLike[str], text: str, mode: int = 0o644) -> None:
    data = text.encode("utf-8", errors="backslashreplace")
    name, target, st, mode = _prepare(path, mode)
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_in_place(name, target, st, data)
        return
    _stage(name, target, mode, data).commit()


class Staged:
    """A file written in full to a temporary file beside its target and not yet renamed over it: `commit()`
    renames it (an OutputError where that fails, the temporary file removed), `abort()` removes it. Two outputs
    of one command (recommend's --output and --plan-facts) are staged so that neither replaces its file unless
    both could be written."""

    def __init__(self, name: str, tmp: str, target: str) -> None:
        self.name = name
        self._tmp = tmp
        self._target = target

    def commit(self) -> None:
        try:
            os.replace(self._tmp, self._target)
        except BaseException as exc:
            self.abort()
            if isinstance(exc, OSError):
                raise OutputError(f"{self.name}: cannot write: {_why(exc)}") from None
            raise

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            os.unlink(self._tmp)


def stage_atomic(path: str | os.PathLike[str], text: str, mode: int = 0o644) -> Staged | None:
    """`text` staged for `path` as write_atomic would write it (the same checks, the same errors), None where the
    target is not a regular file (a device, a FIFO): that cannot be staged, write_atomic writes it in place."""
    data = text.encode("utf-8", errors="backslashreplace")
    name, target, st, mode = _prepare(path, mode)
    if st is not None and not stat.S_ISREG(st.st_mode):
        return None
    return _stage(name, target, mode, data)


def _prepare(path: str | os.PathLike[str], mode: int) -> tuple[str, str, os.stat_result | None, int]:
    """(the name as given, the file it lands on, that file's stat (None: new), the mode to write it with)."""
    name = os.fspath(path)
    target = resolve_target(name)
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{name}: cannot write: {_why(exc)}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{name}: is a directory")
    if st is not None and stat.S_ISREG(st.st_mode):
        mode = stat.S_IMODE(st.st_mode)
    return name, target, st, mode


def _stage(name: str, target: str, mode: int, data: bytes) -> Staged:
    directory = os.path.dirname(target) or "."
    base = os.path.basename(target)
    try:
        import tempfile  # (with shutil and random: only a write to a file pays for them)

        fd, tmp = tempfile.mkstemp(prefix=f".{base}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"{name}: cannot write: {_why(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
    except BaseException as exc:  # whatever happens (a full disk, an interrupt), no .tmp file is left
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise OutputError(f"{name}: cannot write: {_why(exc)}") from None
        raise
    return Staged(name, tmp, target)


def _write_in_place(name: str, target: str, st: os.stat_result, data: bytes) -> None:
    """A device or a pipe: no rename possible. A FIFO is opened without blocking, so a FIFO nobody reads is
    an error (ENXIO) instead of a hang."""
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    if stat.S_ISFIFO(st.st_mode):
        _protected(target, st.st_uid, "FIFO")
        flags |= os.O_NONBLOCK
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OutputError(f"{name}: cannot write: a FIFO with no reader") from None
        raise OutputError(f"{name}: cannot write: {_why(exc)}") from None
    try:
        if flags & os.O_NONBLOCK:
            os.set_blocking(fd, True)  # a reader is there: now wait for it as a normal write would
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise OutputError(f"{name}: cannot write: {_why(exc)}") from None
    finally:
        os.close(fd)


def write_stdout(text: str) -> None:
    """Write a command's output to standard output. A closed standard output (`>&-`), a full device
    (`> /dev/full`) or another write error is an OutputError (exit 2, one line); a reader that went away
    (`| head -1`) is BrokenPipeError, which the CLI ends quietly. Either way the unwritten rest is discarded,
    so the interpreter's own flush at exit cannot fail again."""
    stream = sys.stdout
    if stream is None:
        raise OutputError("standard output is closed: nothing was written (use --output FILE)")
    encoding = getattr(stream, "encoding", None) or "utf-8"
    data = text.encode(encoding, errors="backslashreplace")
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is None:  # a text-only stream (a test's StringIO)
            stream.write(data.decode(encoding))
            stream.flush()
            return
        stream.flush()
        buffer.write(data)
        buffer.flush()
    except BrokenPipeError:
        discard_stdout()
        raise
    except (OSError, ValueError) as exc:  # ValueError: the stream was closed
        discard_stdout()
        why = _why(exc) if isinstance(exc, OSError) else "closed"
        raise OutputError(f"standard output: cannot write: {why}") from None


def discard_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so that what is still buffered for it is dropped at exit
    instead of failing again (the recipe of Python's signal documentation for SIGPIPE)."""
    try:
        fileno = sys.stdout.fileno() if sys.stdout is not None else 1
        devnull = os.open(os.devnull, os.O_WRONLY)
    except (OSError, ValueError, AttributeError):
        return
    try:
        os.dup2(devnull, fileno)
    except OSError:
        pass
    finally:
        os.close(devnull)
