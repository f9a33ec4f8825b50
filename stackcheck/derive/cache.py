"""A small on-disk cache for what derive reads from installed files, keyed by each file's path, size,
modification and change times and inode: a file that changed (an upgrade, a local patch, a rewrite in place at the
same size with its modification time put back) is read again.

Entries live in the user cache directory ($STACKCHECK_CACHE_DIR, else $XDG_CACHE_HOME/stackcheck, else
~/.cache/stackcheck), under derive/, one JSON file per entry, written atomically (a temporary file and a
rename: a reader never sees half an entry; two audits racing both write a whole one), read and written only in
a directory and as files that are this user's and no one else may write, never through a link (paths.read_private,
paths.write_private). A cache that cannot be read or written is no cache: derive reads the files again and the
audit goes on."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stackcheck.derive.tree import FileKey

FORMAT = 2  # 2: each file's change time and inode kept beside its size and modification time
MAX_ENTRY_BYTES = 8 * 1024 * 1024


def default_dir(env: Mapping[str, str] | None = None) -> Path | None:
    from stackcheck.paths import user_cache_dir

    found = user_cache_dir(os.environ if env is None else env, "derive")
    return None if found is None else Path(found)


def current_key(path: str | Path) -> FileKey | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return FileKey.of(str(path), st)


class Cache:
    """get/put values under a key string, valid while the files they were read from are unchanged."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path | None:
        if self.root is None:
            return None
        return self.root / (hashlib.sha256(key.encode()).hexdigest()[:40] + ".json")

    def get(self, key: str, files: Sequence[FileKey]) -> Any:
        """The value stored for `key` if every file it was read from, and every file of `files` (the
        inputs known now), is unchanged; else None."""
        path = self._path(key)
        if path is None:
            return None
        from stackcheck.paths import read_private

        raw = read_private(str(path.parent), path.name, MAX_ENTRY_BYTES)  # ours, private, not through a link
        try:
            entry = json.loads(raw) if raw is not None else None
        except (ValueError, RecursionError):
            entry = None
        if entry is None:
            self.misses += 1
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != key:
            self.misses += 1
            return None
        recorded = {tuple(f) for f in entry.get("files") or [] if isinstance(f, list) and len(f) == 5}
        wanted = {f.stamp() for f in files}
        if not wanted <= recorded:
            self.misses += 1
            return None
        for kept in recorded - wanted:
            now = current_key(str(kept[0]))
            if now is None or now.stamp() != kept:
                self.misses += 1
                return None
        self.hits += 1
        return entry.get("value")

    def put(self, key: str, files: Sequence[FileKey], value: Any) -> None:
        path = self._path(key)
        if path is None:
            return
        from stackcheck.paths import write_private

        entry = {"format": FORMAT, "key": key, "files": [list(f.stamp()) for f in files], "value": value}
        try:
            text = json.dumps(entry, separators=(",", ":"))
        except (TypeError, ValueError):
            return
        write_private(str(path.parent), path.name, text)  # a link at the name is replaced, never written through
