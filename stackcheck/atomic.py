"""Write a file so that a reader never sees half of it: a temporary file in the same directory, flushed
and synced, then renamed over the target. A failed write leaves the old file in place."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from stackcheck.errors import OutputError


def write_atomic(path: str | Path, text: str, mode: int = 0o644) -> None:
    target = Path(path)
    directory = target.parent if str(target.parent) else Path()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
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
        raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from None
