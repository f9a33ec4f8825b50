"""The shipped manifests kept pre-parsed between runs, and the rule work that depends on them alone.

A run that reads a shipped manifest parses its JSON (the eleven files are ~2 MB: ~6 ms of CPU on the 2-core box
when all are read, as the gate does). Each shipped document is kept, once parsed, as `marshal` data of the same
JSON values (~2x faster to load), and the gate's rule work that reads the manifests alone (every rule's shape,
verdicts.engine.prepare; the index of the rules by launch fact, assembly.pipeline._launch_readers) is kept beside
them (assembly.kept_rules makes and restores it), so that a later run restores it instead of working it out.

Entries live in the user cache directory ($STACKCHECK_CACHE_DIR, else $XDG_CACHE_HOME/stackcheck, else
~/.cache/stackcheck), under manifests/, one file per shipped document (`NAME.kept`) and one for the rule work
(`rules.kept`), read and written with the project's private readers (stackcheck.paths: this user's 0700
directory, a 0600 file, no links followed, written atomically, size-limited). An entry is
`MAGIC KEY CRC LENGTH\\n` then its marshal payload:
- KEY is a BLAKE2b hash of what the payload is a function of: for a document, its file name, path and stamp
  (package_data.shipped_files: size, modification and change times, inode and device, from a stat taken before
  the text is read: the plan cache's key trusts the same stamp); for the rule work, every shipped document's name,
  path and stamp, in order; and for both, Python's version, marshal's format, stackcheck's version, and the size
  and mtime of the modules whose code makes what is kept (_MAKERS: the parse, the rule shapes, the index; a
  changed one is a new key even at the same version).
- CRC is the payload's CRC-32 and LENGTH its length: a truncated or damaged entry is no entry.
An entry whose key differs (another manifest, another stackcheck), whose check fails, that does not load, or
whose value has the wrong shape is no entry: the document is parsed from its JSON, as without a cache, and the
entry written again. A user's manifests (--manifests DIR, $STACKCHECK_MANIFESTS) are never kept: they are
validated and merged at every run, over the shipped documents (kept or parsed, the same values), and the rule
work of merged manifests is never kept or restored. STACKCHECK_MANIFEST_CACHE=0 turns the cache off."""

from __future__ import annotations

import os
import sys

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.paths import read_private, user_cache_dir, write_private

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

MAGIC = b"stackcheck-kept-manifest-1"
#: the largest entry read (the shipped documents' marshal data is ~0.4 MB at most; a user may not make them bigger)
MAX_ENTRY_BYTES = 32 * 1024 * 1024
RULES = "rules.kept"


def cache_dir(env: Mapping[str, str] | None = None) -> str | None:
    """Where kept manifests live, or None (turned off, or no home directory)."""
    env = os.environ if env is None else env
    if env.get("STACKCHECK_MANIFEST_CACHE", "").strip().lower() in ("0", "no", "off", "false"):
        return None
    return user_cache_dir(env, "manifests")


def _hash(parts: list[Any]) -> str:
    """A BLAKE2b (256-bit) hex digest of `parts` as repr text (strings, numbers and lists of them only)."""
    try:  # BLAKE2 is built in: hashlib would load OpenSSL into every run
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return str(blake2b(repr(parts).encode("utf-8", "surrogatepass"), digest_size=32).hexdigest())


#: the modules whose code makes what is kept: the parse (loader), the rule shapes (verdicts.engine), the index of
#: the rules by launch fact (assembly.pipeline) and this one; their size and mtime are part of every key
_MAKERS = ("knowledge/loader.py", "knowledge/kept.py", "verdicts/engine.py", "assembly/pipeline.py")


_RUNTIME: list[Any] = []


def _runtime() -> list[Any]:
    """stackcheck's version, Python's and marshal's, and (size, mtime) of each module whose code makes an entry
    (taken once a run)."""
    if _RUNTIME:
        return _RUNTIME[0]  # type: ignore[no-any-return]
    import marshal

    import stackcheck

    out: list[Any] = [stackcheck.__version__, sys.implementation.name, list(sys.version_info), marshal.version]
    root = os.path.dirname(os.path.abspath(stackcheck.__file__))
    for name in _MAKERS:
        try:
            st = os.stat(os.path.join(root, name))
            out.append([name, st.st_size, st.st_mtime_ns])
        except OSError:
            out.append([name, None])
    _RUNTIME[:] = [out]
    return out


def doc_key(name: str, path: str, stamp: str) -> str:
    """The key of one shipped document's entry."""
    return _hash(["doc", name, path, stamp, _runtime()])


def _pack(key: str, value: Any) -> bytes | None:
    import marshal
    import zlib

    try:
        payload = marshal.dumps(value)
    except ValueError:  # (not marshal data: never the case for parsed JSON)
        return None
    return b"%s %s %08x %d\n" % (MAGIC, key.encode("ascii"), zlib.crc32(payload), len(payload)) + payload


def _unpack(data: bytes | None, key: str) -> Any:
    """The value of an entry whose header names `key` and whose payload checks out, else None."""
    if data is None:
        return None
    import marshal
    import zlib

    end = data.find(b"\n", 0, 200)
    if end < 0:
        return None
    head = data[:end].split(b" ")
    if len(head) != 4 or head[0] != MAGIC or head[1] != key.encode("ascii"):
        return None
    payload = memoryview(data)[end + 1 :]
    try:
        if int(head[3]) != len(payload) or int(head[2], 16) != zlib.crc32(payload):
            return None
        # (S302: the entry is this user's own, in a directory no one else may write, checked by its CRC and key)
        return marshal.loads(payload)  # noqa: S302
    except Exception:  # damaged: no entry
        return None


def load_doc(name: str, path: str, stamp: str) -> Any:
    """The kept document `name` (a shipped file at `path` whose stamp is `stamp`), or None: no entry, or not this
    file's. A shipped manifest is a JSON object, so anything else read back is no entry."""
    directory = cache_dir()
    if directory is None:
        return None
    value = _unpack(read_private(directory, name + ".kept", MAX_ENTRY_BYTES), doc_key(name, path, stamp))
    return value if isinstance(value, dict) else None


def store_doc(name: str, path: str, stamp: str, doc: Any) -> bool:
    """Keep a shipped document just parsed from its text (only a JSON object is kept), when the file's stamp is still
    `stamp` (taken before the text was read): a file changed meanwhile may have given a text of another stamp."""
    from stackcheck.knowledge.package_data import file_stamp

    directory = cache_dir()
    if directory is None or not isinstance(doc, dict):
        return False
    try:
        if file_stamp(os.stat(path)) != stamp:
            return False
    except OSError:
        return False
    data = _pack(doc_key(name, path, stamp), doc)
    return data is not None and write_private(directory, name + ".kept", data)


def rules_key(stamps: list[str]) -> str:
    """The key of the rule work of the shipped manifests whose stamps (name, path, stamp, in order) are `stamps`."""
    return _hash(["rules", stamps, _runtime()])


def load_rules(key: str) -> Any:
    directory = cache_dir()
    if directory is None:
        return None
    return _unpack(read_private(directory, RULES, MAX_ENTRY_BYTES), key)


def store_rules(key: str, value: Any) -> bool:
    directory = cache_dir()
    if directory is None:
        return False
    data = _pack(key, value)
    return data is not None and write_private(directory, RULES, data)
