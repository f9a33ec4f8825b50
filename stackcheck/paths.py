"""Path names as pathlib spells them, without importing pathlib on the start-up path of a report (pathlib
pulls in urllib.parse and ipaddress: ~3 ms of every start). Probes that walk the box use pathlib itself."""

from __future__ import annotations

import os
from collections.abc import Mapping


def path_text(path: str | os.PathLike[str]) -> str:
    """str(pathlib.PurePosixPath(path)): empty and "." parts dropped, one leading "/" (two kept, as POSIX
    allows, three or more made one), no trailing "/", "." for nothing."""
    text = os.fspath(path)
    root = ""
    if text.startswith("/"):
        root = "//" if text.startswith("//") and not text.startswith("///") else "/"
    parts = [part for part in text.split("/") if part and part != "."]
    return (root + "/".join(parts)) or "."


def home_dir() -> str:
    """str(pathlib.Path.home()): the home directory, RuntimeError when it cannot be determined."""
    home = os.path.expanduser("~")
    if home[:1] == "~":
        raise RuntimeError("Could not determine home directory.")
    return path_text(home)


def user_cache_dir(env: Mapping[str, str], leaf: str) -> str | None:
    """stackcheck's cache directory for one kind of entry: $STACKCHECK_CACHE_DIR/LEAF, else
    $XDG_CACHE_HOME/stackcheck/LEAF, else ~/.cache/stackcheck/LEAF; None without a home directory."""
    if env.get("STACKCHECK_CACHE_DIR"):
        return os.path.join(env["STACKCHECK_CACHE_DIR"], leaf)
    base = env.get("XDG_CACHE_HOME")
    if not base:
        home = env.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "stackcheck", leaf)


def private_file(st: os.stat_result) -> bool:
    """Whether a cache file is one this user wrote and no one else can change: owned by this user, not writable by
    group or others (a cache entry that is not is not read)."""
    return st.st_uid == os.getuid() and not st.st_mode & 0o022
