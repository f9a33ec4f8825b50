"""Write a file so that a reader never sees half of it: a temporary file in the same directory, flushed
and synced, then renamed over the target. A failed write leaves the old file in place.

A symbolic link is followed (the file it points to is replaced, the link stays); a target that is not a
regular file (/dev/stdout, a FIFO, a character device) is written in place, since it cannot be renamed over;
an existing file keeps its permissions."""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from stackcheck.errors import OutputError


def write_atomic(path: str | Path, text: str, mode: int = 0o644) -> None:
    target = Path(path)
    try:
        if target.is_symlink():
            target = target.resolve()
        st = target.stat() if target.exists() else None
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        try:
            with target.open("w", encoding="utf-8") as fh:  # a device or a pipe: no rename possible
                fh.write(text)
        except OSError as exc:
            raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
        return
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    directory = target.parent if str(target.parent) else Path()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise OutputError(f"{path}: cannot write: {exc.strerror or exc}") from None
