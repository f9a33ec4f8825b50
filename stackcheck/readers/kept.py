"""What audit --deep learned about each file, kept between runs (issue 21: `audit --deep` within 1.5x of the driver
floor).

The deep probes read the same files on every run of an unchanged environment: torch's libraries and the kernel
packages' (thousands of fatbin entry headers, one small read each), and the ELF records of the CUDA libraries they
load. A file's answer depends only on its bytes and on the code that reads them, so each answer is kept with the
file's stamp, and a later run that finds the same stamp takes the answer instead of reading the file.

The stamp is (device, inode, size, modification time, change time), both times in nanoseconds, from the `os.stat`
taken BEFORE the file is read: a file changed while it is read has a later change time than the stamp kept, so the
next run reads it again. A change time cannot be set back (touch and utime set it to the present), so a file
rewritten in place at the same size with its modification time put back is a new stamp; a file replaced by a
rename is a new inode. A file changed less than RACY_NS before its stamp was taken is not kept at all: a change
made right after the stat could share its times on a file system with coarse timestamps ("racily clean", as git
calls it), so such a file is read again on every run until it is older.

Only this host's files are kept (not a --root or --image view), by absolute path, in one JSON document per probe
(`deep/NAME.json` under $STACKCHECK_CACHE_DIR, else $XDG_CACHE_HOME/stackcheck, else ~/.cache/stackcheck), whose
key names FORMAT and the stamps of the modules whose code makes the answers (the readers and this module) and of any
data they read (the shipped architectures.json names the targets): a document with another key is never used,
whatever it holds. Documents are written and read as the plan cache's entries are (stackcheck.paths.write_private,
read_private): mode 0600 in a 0700 directory, renamed over the old one; one not private to this user, not a regular
file, too large, not JSON or of another shape is a miss (the files are read, and the document written again). A
document begins with its integrity mark (iperf42: `{"mark":"HEX",` then the rest, a BLAKE2b of that rest, as the plan
cache marks its kept lists): one edited by hand (a kept answer changed: a cubin family made ready, a kept list of odd
names emptied, a fatbin's targets), cut or emptied is a miss too, never an answer taken.
STACKCHECK_PLAN_CACHE=0 (paths.caches_turned_off) turns it off with the other caches; the probes' `cache_dir` ""
does too."""

from __future__ import annotations

import os

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

FORMAT = 2  # (2: the document's integrity mark, iperf42)
#: the largest document read (a box with every kernel package: a few hundred files, ~100 KB)
MAX_BYTES = 16 * 1024 * 1024
#: files kept per probe at most (the least recently used go first)
MAX_FILES = 4096
#: a file changed less than this before its stamp was taken is not kept (see the module's text)
RACY_NS = 2_000_000_000
SUFFIX = ".json"

#: get()'s answer for a file with no answer kept under its stamp
MISS: Any = object()


def directory(cache_dir: str | None = None, env: Mapping[str, str] | None = None) -> str | None:
    """Where the documents are kept: `cache_dir`/deep when one is given (the probes' ProbeContext.cache_dir), none
    for "" or with the caches turned off, else the user cache directory's deep/."""
    from stackcheck.paths import caches_turned_off, user_cache_dir

    env = os.environ if env is None else env
    if cache_dir == "" or caches_turned_off(env):
        return None
    if cache_dir:
        return os.path.join(cache_dir, "deep")
    return user_cache_dir(env, "deep")


def file_stamp(path: str) -> list[int] | None:
    """[device, inode, size, mtime_ns, ctime_ns] of the file at `path` (links followed, as the readers open it), or
    None: absent, unreadable, not a regular file."""
    import stat

    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def code_stamp(paths: Iterable[str]) -> list[str]:
    """The stamps of the modules (and data files) whose contents make the answers (paths.code_stamp): a changed
    reader is a new key."""
    from stackcheck.paths import code_stamp_text

    return [code_stamp_text(path) for path in paths]


class Kept:
    """The answers one probe keeps, by file: `get(path, stamp)` the answer kept under that stamp (else MISS), `put`
    a new one, `save()` the document once the probe is done (only when something was added or replaced)."""

    def __init__(self, name: str, where: str | None, readers: Iterable[str]) -> None:
        self.name, self.where = name, where
        self.key = "\n".join((str(FORMAT), name, *code_stamp(sorted({*readers, __file__}))))
        self.files: dict[str, list[Any]] = {}
        self.changed = False
        self.hits = self.misses = 0
        if where is not None:
            self.files = self._load(where)

    def _load(self, where: str) -> dict[str, list[Any]]:
        from stackcheck.paths import read_private

        raw = read_private(where, self.name + SUFFIX, MAX_BYTES)
        if raw is None:
            return {}
        body = _unmarked(raw)
        if body is None:
            return {}
        from stackcheck import lean_json

        try:
            doc = lean_json.loads(body)
        except (ValueError, RecursionError):
            return {}
        if type(doc) is not dict or doc.get("format") != FORMAT or doc.get("key") != self.key:
            return {}
        files = doc.get("files")
        if type(files) is not dict:
            return {}
        out: dict[str, list[Any]] = {}
        for path, item in files.items():
            if type(item) is list and len(item) == 2 and _is_stamp(item[0]):
                out[path] = item
        return out

    def get(self, path: str, stamp: list[int] | None) -> Any:
        """The answer kept for the file at `path` when it was kept under `stamp`, else MISS."""
        if stamp is None:
            return MISS
        item = self.files.get(path)
        if item is None or item[0] != stamp:
            self.misses += 1
            return MISS
        self.hits += 1
        return item[1]

    def put(self, path: str, stamp: list[int] | None, value: Any) -> None:
        """Keep `value` (plain JSON data) as the answer of the file at `path` read after its stat gave `stamp`; not
        kept when the file changed less than RACY_NS before that stat, or without a stamp."""
        if stamp is None or self.where is None:
            return
        import time

        if time.time_ns() - max(stamp[3], stamp[4]) < RACY_NS:
            return
        self.files.pop(path, None)  # (re-inserted last: the most recently read are the last dropped)
        self.files[path] = [stamp, value]
        self.changed = True

    def save(self) -> bool:
        """Write the document when an answer was added or replaced; False when nothing was written."""
        if not self.changed or self.where is None:
            return False
        from stackcheck import lean_json

        files = self.files
        if len(files) > MAX_FILES:
            files = dict(list(files.items())[-MAX_FILES:])
        try:
            text = lean_json.dumps({"format": FORMAT, "key": self.key, "files": files}, separators=(",", ":"))
        except (TypeError, ValueError):  # (an answer that is not plain data: nothing is kept)
            return False
        if len(text) > MAX_BYTES:
            return False
        from stackcheck.paths import write_private

        self.changed = False
        return write_private(self.where, self.name + SUFFIX, _marked(text.encode("utf-8", "surrogateescape")))


def _is_stamp(value: Any) -> bool:
    return type(value) is list and len(value) == 5 and all(type(v) is int for v in value)


_MARK_HEAD = b'{"mark":"'
_MARK_LEN = 64
_SALT = b"kept"


def _mark(body: bytes, salt: bytes = _SALT) -> bytes:
    """The integrity mark of a document's body (its JSON text without the mark): BLAKE2b-256 of the salt, a newline and
    the body, in hex (CPython's _blake2, not hashlib: no OpenSSL start-up on a run that only reads kept answers). The
    salt names the kind of document (b"kept" here, b"upstream" for assembly.plan_cache's upstream documents), so that
    one kind's mark is never taken for the other's."""
    try:
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b(salt + b"\n" + body, digest_size=32).hexdigest().encode("ascii")


def _marked(body: bytes, salt: bytes = _SALT) -> bytes:
    """The document as written: `{"mark":"HEX",` and the body after its opening brace."""
    return _MARK_HEAD + _mark(body, salt) + b'",' + body[1:]


def _unmarked(raw: bytes, salt: bytes = _SALT) -> bytes | None:
    """The body of a document whose mark is its own, else None (no mark, another one, a body cut or edited)."""
    head = len(_MARK_HEAD)
    if not raw.startswith(_MARK_HEAD) or raw[head + _MARK_LEN : head + _MARK_LEN + 2] != b'",':
        return None
    body = b"{" + raw[head + _MARK_LEN + 2 :]
    return body if raw[head : head + _MARK_LEN] == _mark(body, salt) else None
