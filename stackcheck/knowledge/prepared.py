"""The shipped manifest documents kept parsed between runs (issue 21: the gate's first run of a new command line).

Every run that judges anything parses some of the shipped manifests (~2.5 MB of JSON; the gate of an SGLang
command line all eleven files: ~12 ms of CPU on the 2-core box), and the result is the same on every run until
a file changes. So each document, once parsed, is also written as a twin, `NAME-TAG.marshal`, in the user cache
directory ($STACKCHECK_CACHE_DIR, else $XDG_CACHE_HOME/stackcheck, else ~/.cache/stackcheck) under prepared/,
and a later run reads the twin instead of the JSON (marshal's loads builds the same dicts and lists about twice as
fast as json's, and reads a third fewer bytes).

A twin is marshal's encoding of (FORMAT, key, document): plain data only (dicts, lists, strings, numbers, booleans,
None), nothing that runs. The key names everything the document depends on: FORMAT, this interpreter's full
version string and marshal's format version (json's parser and marshal's encoding both come with the interpreter),
the manifest file's path and its stamp (package_data.shipped_files: size, modification and change times, inode
and device, from the stat taken before its text is read: an edit, a reinstall or a file put back with its old
mtime is a new key, as a change time cannot be set back; a file changed within a tick of the file system's clock
before the stat, where a same-size edit can leave both times as they were, gets a stamp no later run repeats, and
no twin is written for it), and the stamp (paths.code_stamp) of the two modules
that make the document from the text (knowledge/loader.py and this one). A twin whose key is not this run's is
never used, whatever it holds.

Twins are written and read as the plan cache's entries are (stackcheck.paths.write_private and read_private): a new
file of mode 0600 in a 0700 directory, renamed over the old one (atomic: a reader sees the old twin or the new
one, never half of one); one that is not a regular file, is a symbolic link, is larger than MAX_TWIN_BYTES, or
sits in a directory or file that another user owns or that group or others may write is not read at all (marshal's
loads is not safe against data crafted to crash it: it is only given bytes this user wrote). One that does not
decode, has another shape or names another key is a miss: the JSON is parsed, as without the cache, and the twin
written again. An unwritable directory is no cache. STACKCHECK_PLAN_CACHE=0 (paths.caches_turned_off) turns it off
with the other caches. Only the shipped files of an installed package directory have twins: a user's manifests
(--manifests, $STACKCHECK_MANIFESTS) are read and validated in full on every run, as before, and merged over the
shipped documents after they are parsed.

TAG (file_name) is a short hash of the shipped manifests directory's real path and this interpreter's version: two
checkouts, two installations or two interpreters used in turn each keep twins of their own, where one name per
document made each run of the other a miss (and a rewrite). The directory is kept bounded: after a twin is
written, the twins of all but the MAX_TAGS tags written most recently are removed (prune: only regular files of
this user named as twins, in a directory that passes the same private check as reading, links never followed;
twins named before the tags, `NAME.marshal`, are removed too)."""

from __future__ import annotations

import os

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

FORMAT = 1
#: the largest twin read (the largest shipped document, launch.json, encodes to ~0.6 MB)
MAX_TWIN_BYTES = 64 * 1024 * 1024
SUFFIX = ".marshal"
#: the manifests directories (with interpreters) whose twins are kept (~14 twins each, ~2.5 MB); older ones are pruned
MAX_TAGS = 16
#: the length of a tag: hex digits of a 64-bit FNV-1a hash
TAG_DIGITS = 12


#: _tag's answer in this process (the package a process runs does not move under it)
_TAG: list[str] = []


def _tag() -> str:
    """The tag of this process's twins: a short hash of the real path of the shipped manifests directory (the
    package's, where every twinned document comes from: package_data.shipped_files) and of this interpreter's
    version. Worked out once per process (a realpath: a few lstat calls); no hash module imported (FNV-1a)."""
    if _TAG:
        return _TAG[0]
    import sys

    from stackcheck.knowledge.package_data import _package_dir

    where = _package_dir("manifests") or ""

    h = 0xCBF29CE484222325
    for byte in f"{os.path.realpath(where) if where else ''}\n{sys.version}".encode("utf-8", "surrogateescape"):
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    _TAG[:] = [f"{h:016x}"[:TAG_DIGITS]]
    return _TAG[0]


def file_name(name: str) -> str:
    """The file of the twin `name` (a manifest file name, or the name of what is kept of them) in this process:
    NAME-TAG.marshal."""
    return f"{name}-{_tag()}{SUFFIX}"


def directory(env: Mapping[str, str] | None = None) -> str | None:
    """Where twins are kept, or None (the caches turned off, or no home directory)."""
    from stackcheck.paths import caches_turned_off, user_cache_dir

    env = os.environ if env is None else env
    if caches_turned_off(env):
        return None
    return user_cache_dir(env, "prepared")


def key_of(path: str, stamp: str, *readers: str) -> str:
    """The key of the twin of the shipped manifest at `path` whose stamp (package_data.shipped_files) is `stamp`, as
    the modules at `readers` (knowledge/loader.py: it passes its own file) read it. (What is made of shipped
    documents is kept under a name of its own as `path`, their stamps as `stamp`, the modules that make it as
    `readers`: pipeline._kept_readers.)"""
    import marshal
    import sys

    from stackcheck.paths import code_stamp_text

    # (each module stat'ed once per process: every twin's key names the same ones, loader.py, this one, pipeline.py)
    code = (*(code_stamp_text(r) for r in readers), code_stamp_text(__file__))
    return "\n".join((str(FORMAT), sys.version, str(marshal.version), path, stamp, *code))


def load(where: str, name: str, key: str) -> Any:
    """The document of the twin `name` in `where` when it holds `key`, else None (absent, not private, too large,
    corrupt, another shape or another key)."""
    from stackcheck.paths import read_private

    raw = read_private(where, file_name(name), MAX_TWIN_BYTES)
    if raw is None:
        return None
    import marshal

    try:
        data = marshal.loads(raw)  # noqa: S302 - bytes this user wrote (read_private), decoded as data only
    except (EOFError, ValueError, TypeError, MemoryError, RecursionError):
        return None
    if type(data) is not tuple or len(data) != 3 or data[0] != FORMAT or data[1] != key:
        return None
    doc = data[2]
    return doc if type(doc) is dict else None


#: directory -> whether this process may keep twins there (a read-only or full file system, a home it may not write,
#: a directory that is not private: False, and not tried again, as each try encodes its document first: ~4 ms of CPU
#: over the eleven shipped documents on the 2-core box, spent on every run where the cache cannot be written)
_WRITABLE: dict[str, bool] = {}


def _writable(where: str) -> bool:
    """Whether a twin may be written in `where` (made now where absent, as write_private does), before encoding it."""
    ok = _WRITABLE.get(where)
    if ok is None:
        try:
            os.makedirs(where, mode=0o700, exist_ok=True)
            ok = os.access(where, os.W_OK | os.X_OK)
        except (OSError, ValueError):
            ok = False
        _WRITABLE[where] = ok
    return ok


def keep(where: str, name: str, key: str, doc: Any) -> bool:
    """Write the twin of `doc` (a parsed shipped document) under `key`; False when it was not written: also where the
    key names a stamp taken within a tick of its file's change (package_data.racy), which no later run repeats."""
    from stackcheck.knowledge.package_data import racy

    if racy(key) or not _writable(where):
        return False
    import marshal

    try:
        data = marshal.dumps((FORMAT, key, doc))
    except ValueError:  # (something that is not plain data: never from json.loads)
        return False
    if len(data) > MAX_TWIN_BYTES:
        return False
    from stackcheck.paths import write_private

    if not write_private(where, file_name(name), data):
        _WRITABLE[where] = False  # (a full disk, a directory not private: the next documents are not encoded for it)
        return False
    if not _PRUNED:
        _PRUNED.append(where)
        prune(where)
    return True


#: the directories prune ran on in this process (once: a run that writes twins writes several)
_PRUNED: list[str] = []


def prune(where: str, keep_tags: int = MAX_TAGS) -> int:
    """Remove the twins of all but the `keep_tags` tags written most recently (this process's tag always kept), and
    twins named before the tags (NAME.marshal); the number of files removed. Only where the directory is private
    (paths.private_file, as read_private asks), and only regular files of this user whose names are twins' (a link,
    a directory, a temporary file of write_private or anything else is left alone; links are never followed)."""
    import stat

    from stackcheck.paths import private_file

    mine = _tag()
    try:
        if not private_file(os.stat(where)):
            return 0
        entries = list(os.scandir(where))
    except OSError:
        return 0
    newest: dict[str, int] = {}  # tag ("" for an untagged twin) -> its newest file's modification time
    twins: list[tuple[str, str]] = []  # (tag, path)
    for entry in entries:
        if not entry.name.endswith(SUFFIX) or entry.name.startswith("."):
            continue
        stem = entry.name[: -len(SUFFIX)]
        head, dash, tag = stem.rpartition("-")
        if not (dash and head and len(tag) == TAG_DIGITS and all(c in "0123456789abcdef" for c in tag)):
            tag = ""
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            continue
        twins.append((tag, entry.path))
        newest[tag] = max(newest.get(tag, 0), st.st_mtime_ns)
    ranked = sorted((t for t in newest if t and t != mine), key=lambda t: newest[t], reverse=True)
    kept = {mine, *ranked[: max(keep_tags - 1, 0)]}
    removed = 0
    for tag, path in twins:
        if tag in kept:
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        removed += 1
    return removed


def kept_for(manifests: Any, name: str, docs: tuple[str, ...], *readers: str) -> tuple[str, str, Any] | None:
    """(directory, key, the value kept or None) of what is made of the shipped documents `docs` of `manifests` (a
    loader.Manifests) by the modules at `readers`, kept under `name`; None when it cannot be kept: a document not as
    shipped (Manifests.shipped_stamp: a user's merged in, or not read from the package directory), the caches off."""
    stamp_of = getattr(manifests, "shipped_stamp", None)  # (a stand-in for Manifests has none: nothing kept)
    stamps = [stamp_of(doc) for doc in docs] if stamp_of is not None else [None]
    if None in stamps:
        return None
    where = directory()
    if where is None:
        return None
    key = key_of(name, "\n".join(str(s) for s in stamps), *readers)
    return where, key, load(where, name, key)
