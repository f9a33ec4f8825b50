"""Path names as pathlib spells them, without importing pathlib on the start-up path of a report (pathlib
pulls in urllib.parse and ipaddress: ~3 ms of every start). Probes that walk the box use pathlib itself."""

from __future__ import annotations

import os
from collections.abc import Mapping
from stat import S_ISREG  # (os imports stat: nothing more is loaded)


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
    $XDG_CACHE_HOME/stackcheck/LEAF (an absolute one: the XDG spec has a relative value ignored, as the python
    probe's cache does), else ~/.cache/stackcheck/LEAF; None without a home directory."""
    if env.get("STACKCHECK_CACHE_DIR"):
        return os.path.join(env["STACKCHECK_CACHE_DIR"], leaf)
    base = env.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):
        home = env.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "stackcheck", leaf)


def caches_turned_off(env: Mapping[str, str]) -> bool:
    """Whether STACKCHECK_PLAN_CACHE turns stackcheck's caches off (the plans, the plan answers, the gate's decisions
    and the manifests kept parsed)."""
    return env.get("STACKCHECK_PLAN_CACHE", "").strip().lower() in ("0", "no", "off", "false")


def private_file(st: os.stat_result) -> bool:
    """Whether a cache file is one this user wrote and no one else can change: owned by this user, not writable by
    group or others (a cache entry that is not is not read)."""
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def read_private(directory: str, name: str, limit: int) -> bytes | None:
    """The bytes of the cache entry `directory`/`name`, or None: absent, unreadable, larger than `limit`, not a regular
    file (a FIFO is not waited on), a symbolic link (not followed), or in a directory or a file that someone else
    owns or may write (private_file; such an entry may have been planted or swapped, so it is not read)."""
    import stat

    try:
        if not private_file(os.stat(directory)):
            return None
        # O_NONBLOCK: a FIFO at the name is opened at once (and then refused as not a regular file), never waited on
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        fd = os.open(os.path.join(directory, name), flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not private_file(st) or st.st_size > limit:
            return None
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            # the size fstat gave and one byte more (a file that grew since is read on, to `limit` and one byte): a
            # read of `limit + 1` at once has the buffer of that size made first, 64 MB for a twin of 0.5 MB, and
            # cut down after (~0.1 ms a file on the 2-core box; a first `plan --want` reads ten)
            data = fh.read(st.st_size + 1)
            if len(data) > st.st_size:
                data += fh.read(limit + 1 - len(data))
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data if len(data) <= limit else None  # one that grew past `limit` since fstat is refused too


def write_private(directory: str, name: str, text: str | bytes) -> bool:
    """Keep `text` (str: written as UTF-8, surrogates escaped; bytes: as they are) as the cache entry
    `directory`/`name`: the directory made (mode 0700) where absent and used only
    where private_file holds for it; a new file of mode 0600 (created exclusively, never through a link) renamed
    over the entry, so a link planted at the entry's name is replaced, never followed. False when not written."""
    import contextlib

    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{os.urandom(6).hex()}.tmp")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not private_file(os.stat(directory)):
            return False
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)
            os.replace(tmp, os.path.join(directory, name))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except (OSError, ValueError):
        return False
    return True


#: the home directory this process's own probes were scrubbed of (assembly.pipeline: the facts it probed name it
#: "~"), set when it scrubs them; empty until then
SCRUBBED_HOME: list[str] = []


def unscrub_home(path: str, home: str | None = None) -> str | None:
    """The path a fact named before assembly.pipeline.scrub_home put "~" for the home directory in it
    (facts.python.sys_path, facts.packages.*.location): what a check that reads the box again must open. A path
    without that "~" is returned as it is. The "~" is mapped back only to the home this process scrubbed from its
    own probes (SCRUBBED_HOME; `home` to give it): in facts this process did not probe (a facts file, made by
    another user or on another host) "~" is someone's home directory this process does not know, so such a path
    is None, not openable: a check that would read it is unknown, never a read of the wrong user's directory."""
    if path != "~" and not path.startswith("~/"):
        return path
    if home is None:
        home = SCRUBBED_HOME[-1] if SCRUBBED_HOME else None
    home = home.rstrip("/") if home is not None else None
    if not home or home[:1] == "~":
        return None
    return home + path[1:]


#: code_stamp's answers in this process, by path (forget_code_stamps empties it: a new run, as tests model one)
_CODE_STAMPS: dict[str, tuple[int, int, int, int, int] | None] = {}


def code_stamp(path: str) -> tuple[int, int, int, int, int] | None:
    """(size, modification time, change time, inode, device) of the regular file at `path` (links followed; times
    in nanoseconds), None where it is absent, unreadable or not a regular file: the stamp of a file of code or data
    whose contents make what a cache keeps (stackcheck's own source files in the plan, plan answer and gate caches'
    key; the readers and their data in readers.kept's; the loader in knowledge.prepared's). An edit is a new stamp,
    one written in place at the same size with its modification time put back too (the kernel sets the change time
    on every write; nobody can set it back), a file replaced by a rename a new inode. Each file is stat'ed once per
    process: the code a process runs is the code it imported, and the three caches name the same files."""
    if path in _CODE_STAMPS:
        return _CODE_STAMPS[path]
    stamp = None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        pass
    else:
        if S_ISREG(st.st_mode):
            stamp = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    _CODE_STAMPS[path] = stamp
    return stamp


def code_stamp_text(path: str) -> str:
    """`path` and its code_stamp as one line of a cache's key ("PATH -" without one)."""
    got = code_stamp(path)
    return f"{path} {' '.join(map(str, got)) if got is not None else '-'}"


def forget_code_stamps() -> None:
    """Empty code_stamp's memory (what a new process starts with)."""
    _CODE_STAMPS.clear()
