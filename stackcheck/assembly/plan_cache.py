"""The audit's plan, kept between runs: the same facts and manifests give the same plan, so a box audited
again (the common case: nothing changed since the last audit) reads its plan instead of searching for it.

The key is a BLAKE2b (256-bit) hash of everything the plan is a function of: the facts after the assumptions
(less the measurements of the run itself: _PER_RUN), the launch facts, the text of every manifest read
(shipped and the user's, in order; for a shipped file in the package directory, its stamp in place of its
text: size, modification and change times, inode and device, from a stat taken before it is read, as the
code's own files are below: see knowledge.package_data.shipped_files), stackcheck's version and the stamp of
each of its own source files (paths.code_stamp: a changed stackcheck is a new key even
at the same version, and even where a file was written in place at its size with its mtime put back), Python's
version, and packaging's, jsonschema's and rich's files (_library_stamp: an upgrade is a new key).
`stackcheck audit` and `stackcheck gate` (the plan step that fixes a refused feature) use it. A plan is
stored only when it is plain JSON (what is read back is then equal to what was computed, types included),
so an audit from the cache prints what a fresh one would.
The audit keeps the verdicts of the same stack beside its plan (`verdicts`: the features and checks as the
engine judged them from these facts, before a facts file's implied versions are merged in): they are the
same function of the same inputs, so an audit that finds its entry judges nothing again. An entry without
them (one the gate kept), or whose verdicts are not two lists of objects, gives its plan alone. The facts
are part of the key in their own order (a facts file with the same values in another order is another
key): a verdict that lists what it found in the facts' order is never read back in another order.

Entries live in the user cache directory ($STACKCHECK_CACHE_DIR, else $XDG_CACHE_HOME/stackcheck, else
~/.cache/stackcheck), under plan/, one JSON file per key, mode 0600 in a 0700 directory, written atomically
(a temporary name, then a rename). A directory or entry that is not this user's, or that others may write,
is not read; an entry that does not parse, is too large or names another key is ignored; a cache that
cannot be written is no cache. STACKCHECK_PLAN_CACHE=0 turns it off. At most MAX_ENTRIES are kept."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.paths import code_stamp, private_file, read_private, user_cache_dir, write_private

if TYPE_CHECKING:
    from typing import Any

    #: (features, checks, merged): the box's verdicts a request judged, per way ("all": a JSON plan's, features and
    #: checks; "features": a text plan's, checks empty), and for a facts file what merging its implied versions made
    #: of the report's fields (Entry.merged's shape; None without a facts file). A function of the same key as the
    #: ok-elsewhere answers (iperf38: a later request on the same facts reads them instead of judging every feature
    #: of the box again)
    Box = tuple[list[Any], list[Any], dict[str, Any] | None]

FORMAT = 1
MAX_ENTRY_BYTES = 4 * 1024 * 1024
MAX_ENTRIES = 64


def turned_off(env: Mapping[str, str]) -> bool:
    """Whether STACKCHECK_PLAN_CACHE turns the caches off (the plans, the plan answers and the gate's decisions)."""
    from stackcheck.paths import caches_turned_off

    return caches_turned_off(env)


def cache_dir(env: Mapping[str, str] | None = None) -> str | None:
    """Where plans are kept, or None when there is no cache (turned off, or no home directory)."""
    env = os.environ if env is None else env
    if turned_off(env):
        return None
    return user_cache_dir(env, "plan")


def _code_stamp() -> list[Any]:
    """stackcheck's version and (name, then paths.code_stamp: size, modification and change times, inode, device) of
    each of its source files: any edit is a new key, one written in place at the same size with its mtime put back
    too (the kernel sets ctime on every write; nobody can set it back); and the version of Python, what the plan's
    comparisons run on; and the stamp of packaging (what some of them run on: facts.implied's markers, derive, the
    preflight's dependencies) and of the libraries that shape what is printed without being imported on this path
    (jsonschema: a facts file's and a user manifest's validation errors; rich: declared by the package):
    _library_stamp, so an upgrade of any of them is a new key. packaging is stamped by its files as the other two
    are, not imported for its __version__ (its import was most of what the stamp cost a first plan or a served gate
    beside the stats)."""
    import sys

    import stackcheck

    out: list[Any] = [stackcheck.__version__, list(sys.version_info[:3])]
    out.extend(_library_stamp(name) for name in STAMPED_LIBRARIES)
    root = os.path.dirname(os.path.abspath(stackcheck.__file__))
    skip = len(root) + 1  # every path below is root + "/" + its name relative to root (os.path.relpath's answer)
    dirs = [root]
    while dirs:
        d = dirs.pop()
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            out.append([d, None])
            continue
        for e in entries:
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        dirs.append(e.path)
                    continue
            except OSError:
                out.append([e.path, None])
                continue
            if e.name.endswith(".py"):
                stamp = code_stamp(e.path)
                out.append([e.path[skip:], *stamp] if stamp is not None else [e.path, None])
    return out


#: libraries in the code stamp by their files (never imported for it): _library_stamp
STAMPED_LIBRARIES = ("packaging", "jsonschema", "rich")


def _library_stamp(name: str) -> list[Any]:
    """[name, its package's __init__.py, that file's size, modification and change times and inode, its
    directory's inode]: where the import system would find the regular package
    `name` (its module's own file where it is imported already; else the first sys.path entry that holds
    NAME/__init__.py, "" being the working directory), read with two stats and no import (importing jsonschema
    costs ~100 ms; its import finder ~9 ms). An install or upgrade writes new files (a new inode and change time)
    and a new directory, so a new release is a new stamp (the directory's own times are left out: they change
    when its __pycache__ is first written); [name, None] where it is not found."""
    import sys

    module = sys.modules.get(name)
    found = getattr(module, "__file__", None) if module is not None else None
    candidates = [found] if isinstance(found, str) else []
    candidates += [os.path.join(p or os.curdir, name, "__init__.py") for p in sys.path if isinstance(p, str)]
    for path in candidates:
        try:
            st = os.stat(path)
            dst = os.stat(os.path.dirname(path) or os.curdir)
        except OSError:
            continue
        here = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, dst.st_ino]
        return [name, os.path.abspath(path), *here]
    return [name, None]


#: facts that measure the run rather than describe the box: no rule and no part of the plan reads them (the
#: binary probe's time per package; Context reads a package's sass, ptx, files and truncated), and they differ
#: on every run, so an audit --deep would never find its plan again
_PER_RUN = {"binaries": "duration_ms"}
#: the same for whole sections: facts.kernel_symbols.ms is the symbol probe's time on every live audit; and
#: facts.python.learned, how this run learned the interpreter's answer ("ran" the first time, "cache" after): no
#: rule reads it, and what the answer says (executable, version, prefix, sys_path) is compared as it is. A changed
#: interpreter is a new answer: the python probe's own cache is keyed by its size, mtime, ctime and inode
#: (python_env.cache_key), so a replaced interpreter is run again and its answer compared here.
#: (imend8) system.memory_available_bytes changes on every run; the one rule that reads it (the gate's HiCache host
#: pool, refusals._hicache_available) marks its decision not to be kept (BoxMemory.read_available, commands/gate.py)
_PER_RUN_SECTION = {"kernel_symbols": "ms", "python": "learned", "system": "memory_available_bytes"}


def _described(facts: Any) -> Any:
    """`facts` less the per-run measurements (_PER_RUN), copied only where one is dropped."""
    if not isinstance(facts, dict):
        return facts
    out = facts
    for section, measure in _PER_RUN.items():
        packages = facts.get(section)
        if isinstance(packages, dict) and any(isinstance(v, dict) and measure in v for v in packages.values()):
            if out is facts:
                out = dict(facts)
            out[section] = {
                k: {f: x for f, x in v.items() if f != measure} if isinstance(v, dict) else v
                for k, v in packages.items()
            }
    for section, measure in _PER_RUN_SECTION.items():
        value = facts.get(section)
        if isinstance(value, dict) and measure in value:
            if out is facts:
                out = dict(facts)
            out[section] = {f: x for f, x in value.items() if f != measure}
    return out


def key_of(facts: Any, launch: Any, manifest_texts: Iterable[str]) -> str | None:
    """The key of a plan, or None when the facts are not plain JSON (then there is no cache). The hash reads the
    number of manifest texts, each text's length and bytes, [FORMAT, the code stamp] as JSON, then [the facts, the
    launch facts] as JSON (two JSON texts, each complete: one reading of the bytes): the part before the facts is the
    same for every audit of the same manifests and code, and `prepare` hashes it (and takes the code stamp) ahead, in
    a thread that waits on nothing else, where the facts' arrival found ~0.2 ms of writing the stamp's JSON (2-core
    box)."""
    prepared = None
    if isinstance(manifest_texts, list) and _PREPARED and _PREPARED[0] is manifest_texts:
        prepared = _PREPARED[2] if _PREPARED[1] == len(manifest_texts) else None
        _PREPARED.clear()  # (used once: the list it holds is not kept alive after)
    if prepared is None:  # (the code stamp of a plan whose answer is being made: taken for its key just before)
        prepared = _head_hash(PENDING[0].stamp if PENDING else _code_stamp(), manifest_texts)
    from stackcheck import lean_json

    try:
        tail = lean_json.dumps([_described(facts), launch], separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    h = prepared.copy()
    h.update(tail.encode("utf-8", "surrogatepass"))
    return str(h.hexdigest())


def _head_hash(stamp: list[Any], manifest_texts: Iterable[str]) -> Any:
    """key_of's hash fed everything but the facts: the manifests' texts (_texts_hash), then [FORMAT, stamp] as JSON."""
    from stackcheck import lean_json

    h = _texts_hash(manifest_texts)
    h.update(lean_json.dumps([FORMAT, stamp], separators=(",", ":")).encode("utf-8", "surrogatepass"))
    return h


def _texts_hash(manifest_texts: Iterable[str]) -> Any:
    """A BLAKE2b (256-bit) hash fed the number of texts, then each text's length (8 bytes) and UTF-8 bytes."""
    try:  # BLAKE2 is built in: hashlib would load OpenSSL (~3 ms) into every audit from saved facts
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b

    texts = [text.encode("utf-8", "surrogatepass") for text in manifest_texts]
    h = blake2b(len(texts).to_bytes(8, "big"), digest_size=32)
    for b in texts:
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)  # (a long buffer is hashed without the interpreter lock)
    return h


#: prepare()'s work for one list of manifest texts: [that list, its length, key_of's hash of all but the facts]
_PREPARED: list[Any] = []


def prepare(manifest_texts: list[str], stamp: list[Any] | None = None) -> None:
    """What key_of needs of the manifests and of stackcheck's files, done now for `manifest_texts` (the list the
    loader filled): called where the manifests are read in a thread beside the probes (a live audit, a live
    gate), so that the key costs only the facts' part once the facts arrive. key_of uses it when it is given
    this same list object, as long as it is as long as it was (and once). `stamp`: the code stamp this run took
    already (the gate's, for its own cache's key: gate_cache.Slot.stamp), else it is taken now."""
    stamp = _code_stamp() if stamp is None else stamp
    _PREPARED[:] = [manifest_texts, len(manifest_texts), _head_hash(stamp, manifest_texts)]


def lookup(
    facts: Any, launch: Any, manifest_texts: Iterable[str]
) -> tuple[str | None, str | None, dict[str, Any] | None]:
    """(directory, key, the stored plan or None): what a caller needs to read a plan and, on a miss, keep
    the one it computes (`store(directory, key, plan)` when both are set)."""
    directory, key, entry = lookup_entry(facts, launch, manifest_texts)
    return directory, key, entry.plan if entry is not None else None


class Entry:
    """A stored entry: its plan, the verdicts kept with it ((features, checks), or None), and `merged`: for a
    facts file, what merging its implied versions into those verdicts made of the report (facts.implied.apply),
    per way of merging ("all": features and checks; "features": the features alone), as the report's fields
    that the merge set (none when nothing is implied); and `upstream`: for features blocked on the box or after
    its plan, the stack of the manifests that makes each ok (described), or None (plan.planner.plan_and_facts'
    `upstream_kept`: a function of the facts and the manifests, as the verdicts are), read by a later `plan
    --want/--hold/--to` of the same facts."""

    __slots__ = ("merged", "plan", "upstream", "verdicts")

    def __init__(
        self,
        plan: dict[str, Any],
        verdicts: tuple[list[Any], list[Any]] | None,
        merged: dict[str, dict[str, Any]] | None = None,
        upstream: dict[str, str | None] | None = None,
    ) -> None:
        self.plan = plan
        self.verdicts = verdicts
        self.merged: dict[str, dict[str, Any]] = merged if merged is not None else {}
        self.upstream: dict[str, str | None] = upstream if upstream is not None else {}


def lookup_entry(facts: Any, launch: Any, manifest_texts: Iterable[str]) -> tuple[str | None, str | None, Entry | None]:
    """lookup(), with the verdicts kept beside the plan: (directory, key, the entry or None)."""
    directory = cache_dir()
    key = key_of(facts, launch, manifest_texts) if directory else None
    return directory, key, load_entry(directory, key) if directory and key else None


def _plain(value: Any) -> bool:
    """Whether `value` survives a JSON round trip unchanged, types included (no tuples, no odd keys)."""
    if value is None or isinstance(value, (str, bool, int)):
        return True
    if isinstance(value, float):
        import math

        return math.isfinite(value)
    if type(value) is list:
        return all(_plain(v) for v in value)
    if type(value) is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


def load(directory: str, key: str) -> dict[str, Any] | None:
    """The plan stored under `key`, or None (none, unreadable, not ours, corrupt)."""
    entry = load_entry(directory, key)
    return entry.plan if entry is not None else None


def _verdicts(value: Any) -> tuple[list[Any], list[Any]] | None:
    """The stored verdicts when they have their shape ({"features": [{...}], "checks": [{...}]}), else None."""
    if not isinstance(value, dict):
        return None
    features, checks = value.get("features"), value.get("checks")
    if not isinstance(features, list) or not isinstance(checks, list):
        return None
    if not all(isinstance(v, dict) for v in features) or not all(isinstance(v, dict) for v in checks):
        return None
    return features, checks


#: the report fields facts.implied.apply sets, and the shape each has
_MERGED_FIELDS = ("features", "checks", "implied")


def _merged(value: Any, verdicts: tuple[list[Any], list[Any]]) -> dict[str, dict[str, Any]]:
    """The stored merges that have their shape ({way: {field: [{...} or null, ...]}}, fields of _MERGED_FIELDS; a
    null in `features` or `checks` stands for a copy of the kept verdict at its place: _thin), each made whole;
    the others are left out (and merged again by the caller)."""
    out: dict[str, dict[str, Any]] = {}
    if not isinstance(value, dict):
        return out
    kept = dict(zip(("features", "checks"), verdicts, strict=True))
    for way, fields in value.items():
        if not isinstance(fields, dict):
            continue
        whole: dict[str, Any] = {}
        for k, stored in fields.items():
            if k not in _MERGED_FIELDS or not isinstance(stored, list):
                break
            same = kept.get(k)
            items = stored
            if same is not None and len(stored) == len(same):
                items = [dict(same[i]) if x is None else x for i, x in enumerate(stored)]
            if not all(isinstance(x, dict) for x in items):
                break
            whole[k] = items
        else:
            out[way] = whole
    return out


def _upstream(value: Any) -> dict[str, str | None]:
    """The stored upstream answers when they have their shape ({feature: text or null}), else none."""
    if not isinstance(value, dict) or not all(isinstance(v, str | None) for v in value.values()):
        return {}
    return value


def _thin(fields: Mapping[str, Any], verdicts: tuple[list[Any], list[Any]]) -> dict[str, Any]:
    """A merge as it is stored: in `features` and `checks`, a verdict equal to the kept one at its place is a null
    (the merge changes few verdicts: the entry is read on every hit, and its size is its parse time)."""
    kept = dict(zip(("features", "checks"), verdicts, strict=True))
    out: dict[str, Any] = {}
    for k, value in fields.items():
        same = kept.get(k)
        if same is not None and isinstance(value, list) and len(value) == len(same):
            out[k] = [None if x == same[i] else x for i, x in enumerate(value)]
        else:
            out[k] = value
    return out


def load_entry(directory: str, key: str) -> Entry | None:
    """The entry stored under `key`, or None (none, unreadable, not ours, corrupt; its verdicts None when
    absent or not of their shape)."""
    raw = read_private(directory, key + ".json", MAX_ENTRY_BYTES)
    if raw is None:
        return None
    from stackcheck import lean_json

    try:
        data = lean_json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
        return None
    plan = data.get("plan")
    if not isinstance(plan, dict):
        return None
    verdicts = _verdicts(data.get("verdicts"))
    merged = _merged(data.get("merged"), verdicts) if verdicts is not None else None
    return Entry(plan, verdicts, merged, _upstream(data.get("upstream")))


def store(
    directory: str,
    key: str,
    plan: Mapping[str, Any],
    verdicts: tuple[list[Any], list[Any]] | None = None,
    merged: Mapping[str, Mapping[str, Any]] | None = None,
    upstream: Mapping[str, str | None] | None = None,
) -> bool:
    """Keep `plan` under `key` (atomically, privately), with `verdicts` (features, checks) when given and
    plain JSON, and with them the `merged` reports (Entry.merged) that are plain JSON and the `upstream` answers
    (Entry.upstream); False when the plan is not plain JSON or not written."""
    if not _plain(plan):
        return False
    entry: dict[str, Any] = {"format": FORMAT, "key": key, "plan": plan}
    if upstream and _plain(dict(upstream)):
        entry["upstream"] = dict(upstream)
    if verdicts is not None and _plain(list(verdicts)):
        entry["verdicts"] = {"features": verdicts[0], "checks": verdicts[1]}
        kept = {way: _thin(fields, verdicts) for way, fields in (merged or {}).items() if _plain(dict(fields))}
        if kept:
            entry["merged"] = kept
    from stackcheck import lean_json

    # the plan's own key order is kept: the renderers print it as it comes
    text = lean_json.dumps(entry, separators=(",", ":"))
    if len(text) > MAX_ENTRY_BYTES:
        return False
    if not write_private(directory, key + ".json", text.encode("utf-8")):
        return False
    _prune(directory)
    return True


def _prune(directory: str, suffix: str = ".json", keep: int = MAX_ENTRIES) -> None:
    """Keep the `keep` newest entries (a box's facts change rarely; old keys are never read again). The directory is
    opened once, not through a link, and pruned only when it is this user's and no one else may write it
    (paths.private_file on the open directory); entries are listed and removed relative to that open directory, so
    a directory swapped for a link to another one (its parent writable by others) loses nothing."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(directory, flags)
    except OSError:
        return
    try:
        if not private_file(os.fstat(fd)) or os.scandir not in os.supports_fd or os.unlink not in os.supports_dir_fd:
            return
        with os.scandir(fd) as listing:
            entries = [e for e in listing if e.name.endswith(suffix) and not e.name.startswith(".")]
        if len(entries) <= keep:
            return
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns, reverse=True)
        for e in entries[keep:]:
            os.unlink(e.name, dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- the ok-elsewhere answers of a plan with a request, kept under the plan's key ------------------------------
#
# A plan names, for each feature it leaves blocked, a stack of the manifests where it is ok, or none
# (plan.planner._upstream_ok: the search over the best stack of each SGLang release; issue 21, iperf36: 38.9M of a
# first `plan --want torch-symm-mem`'s 315M instructions). Those answers are a function of the facts, the launch
# facts, the manifests and the code, as the plan's verdicts are: the audit's entry keeps them (Entry.upstream), but
# a plan with a request (--want, --hold, --to) keeps no entry, so each request searched again. They are kept here,
# one file per key_of key (the plan entry's own key: everything the answers are a function of, manifests and code
# included, so a manifest changed or stackcheck upgraded is another key and nothing stale is read), under
# upstream/, written and read as the plans are (privately, atomically; a file that does not parse, names another
# key, is too large or has another shape is no answer: the search runs, as without a cache; a directory that
# cannot be written is no cache). (iperf37: a key of the hardware facts alone, shared by boxes never seen, was not
# built: the candidate stacks are those of the box's own software, and a stack's facts keep the box's where it
# replaces nothing; see the iperf37 report.)

UPSTREAM_FORMAT = 2
MAX_UPSTREAM_BYTES = 4 * 1024 * 1024


def upstream_dir(env: Mapping[str, str] | None = None) -> str | None:
    """Where the ok-elsewhere answers are kept, or None (caches turned off, no home directory)."""
    env = os.environ if env is None else env
    if turned_off(env):
        return None
    return user_cache_dir(env, "upstream")


def load_upstream(directory: str, key: str) -> dict[str, str | None]:
    """The answers kept under `key` ({feature: the stack described, or None}), or none (absent, unreadable, not
    ours, corrupt, another key, another shape)."""
    return load_upstream_doc(directory, key)[0]


def load_upstream_doc(directory: str, key: str) -> tuple[dict[str, str | None], dict[str, Box]]:
    """The answers kept under `key`, and the box's verdicts kept with them ({way: Box}; a way whose item does not
    have its shape is left out: judged again)."""
    answers, box, _failing = load_upstream_parts(directory, key)
    return answers, box


def load_upstream_parts(directory: str, key: str) -> tuple[dict[str, str | None], dict[str, Box], dict[str, list[Any]]]:
    """load_upstream_doc's answers and box, and the stack checks failing on the box as it is that a request kept with
    them ({way: [check verdict, ...]}, plan.hypothetical.Engine.checks_failing_on on the stated facts with nothing
    replaced, in the manifests' order; a way whose list does not have that shape, or not its integrity mark
    (_failing_mark), is left out: judged again)."""
    raw = read_private(directory, key + ".json", MAX_UPSTREAM_BYTES)
    if raw is None:
        return {}, {}, {}
    from stackcheck import lean_json

    body = _unmarked_doc(raw)
    try:
        data = lean_json.loads(raw if body is None else body)
    except (ValueError, RecursionError):
        return {}, {}, {}
    if not isinstance(data, dict) or data.get("format") != UPSTREAM_FORMAT or data.get("key") != key:
        return {}, {}, {}
    answers = data.get("upstream")
    if not isinstance(answers, dict) or not all(type(k) is str for k in answers):
        return {}, {}, {}
    # (the box's verdicts only from a document whose mark is its own: _marked_doc, iperf42)
    box = {} if body is None else _box(data.get("box"))
    return _upstream(answers), box, _failing(data.get("failing"), data.get("failing_marks"), key)


_DOC_SALT = b"upstream"


def _marked_doc(text: str) -> bytes:
    """An upstream document as written (iperf42): `{"mark":"HEX",` then the JSON text after its opening brace, HEX a
    BLAKE2b of that text (readers.kept's mark, salted b"upstream"). The box's kept verdicts (keep_upstream's `box`)
    carried no signature: a verdict edited there (a blocked feature made ok, a failing check's list emptied) was taken
    as the box's own by every later request on the key (a false pass); they are read only from a document whose mark
    is its own (load_upstream_parts), else judged again. One hash of the raw bytes as read (~0.2 ms for the write-up
    box's 200 KB), not of the verdicts written out again (~1.8 ms: the 30 ms `plan --want` goal). It guards against an
    edit that does not also make the mark again, as _failing_mark does."""
    from stackcheck.readers.kept import _marked

    return _marked(text.encode("utf-8", "surrogateescape"), _DOC_SALT)


def _unmarked_doc(raw: bytes) -> bytes | None:
    """The document's JSON text without its mark where the mark is its own, else None (none, another, cut, edited)."""
    from stackcheck.readers.kept import _unmarked

    return _unmarked(raw, _DOC_SALT)


def _failing(value: Any, marks: Any = None, key: str = "") -> dict[str, list[Any]]:
    """The kept failing checks per way, each a list of failed check verdicts (dicts with a string id and the status
    `failed`) whose integrity mark (`marks`, per way: _failing_mark) is the list's own under `key`; a way of another
    shape, or with no mark or another one, is left out (judged again)."""
    out: dict[str, list[Any]] = {}
    if not isinstance(value, dict) or not isinstance(marks, dict):
        return out
    for way in ("all", "features"):
        item = value.get(way)
        if type(item) is list and all(_failed_verdict(v) for v in item):
            mark = marks.get(way)
            if type(mark) is str and mark == _failing_mark(key, way, item):
                out[way] = item
    return out


def _failing_mark(key: str, way: str, items: list[Any]) -> str | None:
    """The integrity mark of a kept failing-checks list (imend16): a hash of the plan cache's key, the way and the
    list's JSON text. An entry carries no other signature, and an empty list is a valid shape, so a list edited,
    emptied or cut (an entry dropped) would hide failing checks from every later request on the key; with the mark
    it is judged again instead. It guards against an edit that does not also recompute the mark (a cache file is
    private to its user: whoever can rewrite the mark can rewrite stackcheck too). None where the list is not JSON."""
    from stackcheck import lean_json

    try:
        text = lean_json.dumps(items, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return str(_blake2b(f"failing\n{key}\n{way}\n{text}".encode()).hexdigest())


def _failed_verdict(v: Any) -> bool:
    """Whether `v` has the shape of a failed check verdict as the engine gives it, in the parts the planner and the
    plan's renderers read (irobust12: an entry edited otherwise, reasons that are not a list of objects, a fix that
    is not an object of strings, crashed `plan --want` with an internal error): a string id and title, the status
    `failed`, reasons a list of objects with a string rule (and string result, effect, message where present),
    fix absent, null or an object of strings (its commands a list of strings, its source a list of objects)."""
    if type(v) is not dict or type(v.get("id")) is not str or v.get("status") != "failed":
        return False
    if type(v.get("title", "")) is not str:
        return False
    reasons = v.get("reasons", [])
    if type(reasons) is not list:
        return False
    for r in reasons:
        if type(r) is not dict or type(r.get("rule")) is not str:
            return False
        if any(k in r and type(r[k]) is not str for k in ("result", "effect", "message", "requirement")):
            return False
        if "source" in r and type(r["source"]) is not list:
            return False
    fix = v.get("fix")
    if fix is None:
        return True
    if type(fix) is not dict:
        return False
    for key, item in fix.items():
        if key in ("commands", "source"):
            if type(item) is not list or not all(type(x) is (dict if key == "source" else str) for x in item):
                return False
        elif type(item) is not str:
            return False
    return True


def _box(value: Any) -> dict[str, Box]:
    out: dict[str, Box] = {}
    if not isinstance(value, dict):
        return out
    for way in ("all", "features"):
        item = value.get(way)
        verdicts = _verdicts(item)
        if verdicts is None or not isinstance(item, dict):
            continue
        merged: dict[str, Any] | None = None
        if "merged" in item:
            whole = _merged({way: item["merged"]}, verdicts)
            if way not in whole:
                continue
            merged = whole[way]
        out[way] = (verdicts[0], verdicts[1], merged)
    return out


def keep_upstream(
    directory: str,
    key: str,
    answers: Mapping[str, str | None],
    box: Mapping[str, Box] | None = None,
    failing: Mapping[str, list[Any]] | None = None,
) -> bool:
    """Keep `answers` under `key` (atomically, privately), with the box's verdicts (`box`: plain JSON, as
    load_upstream_doc and pipeline's copy of the verdicts judged give them) and the checks failing on the box as it
    is (`failing`, per way: load_upstream_parts; a way whose list is not plain JSON is not kept); False when there is
    nothing plain to keep, it is too large or not written."""
    value = dict(answers)
    if not _plain(value) or not all(isinstance(v, str | None) for v in value.values()):
        return False
    doc: dict[str, Any] = {"format": UPSTREAM_FORMAT, "key": key, "upstream": value}
    stored: dict[str, Any] = {}
    for way, (features, checks, merged) in (box or {}).items():
        item: dict[str, Any] = {"features": features, "checks": checks}
        if merged is not None:
            item["merged"] = _thin(merged, (features, checks))
        if way in ("all", "features"):
            stored[way] = item
    kept_failing = {w: list(v) for w, v in (failing or {}).items() if w in ("all", "features") and _plain(list(v))}
    marks = {w: _failing_mark(key, w, v) for w, v in kept_failing.items()}
    kept_failing = {w: v for w, v in kept_failing.items() if marks[w] is not None}
    if kept_failing:
        doc["failing"] = kept_failing
        doc["failing_marks"] = {w: marks[w] for w in kept_failing}
    if stored:
        doc["box"] = stored
    elif not value and not kept_failing:
        return False
    from stackcheck import lean_json

    text = lean_json.dumps(doc, separators=(",", ":"))
    if len(text) > MAX_UPSTREAM_BYTES or not write_private(directory, key + ".json", _marked_doc(text)):
        return False
    _prune(directory)
    return True


# ---- the answer of `stackcheck plan --facts FILE ...`, kept whole ------------------------------------------------
#
# A plan of saved facts prints the same text for the same inputs, and a box is planned again and again (the plan,
# then each --want of it). Its answer (what it printed, and its exit status) is kept under a key of everything
# the printed text is a function of, so that the command line serves it before it builds a parser or reads a
# manifest (stackcheck.cli): the command line's words after `plan`, the facts file's bytes, the current
# directory (a relative path in the words), every variable of the environment (NO_COLOR, COLUMNS, the locale,
# STACKCHECK_*, HOME...: all of them, so that none is forgotten), whether standard output is a terminal and its
# size there, its encoding, the code stamp (stackcheck's version and source files, Python's version, packaging's
# files) and the shipped manifests' stamps (package_data.shipped_files). Only command lines whose options
# read no file but the facts file and write nothing but standard output have an answer (_ANSWER_OPTIONS): no
# --output, --manifests (nor $STACKCHECK_MANIFESTS), target options or --help. An answer is kept only when
# the command exited 0 or 1, wrote nothing to standard error (a warning, a note), read the facts file as it was
# when the key was made, and printed nothing that depends on the moment: a facts document with an empty
# `host` block is shown with the host's name and the time of the run (documents.report.host_block). Answers
# live beside the plans, under answer/, written and read as the plans are (privately, atomically); the
# MAX_ANSWERS newest are kept.

ANSWER_FORMAT = 1
MAX_ANSWERS = 64
#: the facts file read for a key: larger ones (a real report is tens of kilobytes) take the ordinary path
MAX_ANSWER_FACTS = 4 * 1024 * 1024
#: the options of `stackcheck plan` whose command lines have an answer, spelled in full
_ANSWER_OPTIONS = frozenset({"--facts", "--want", "--hold", "--to", "--format", "--sources"})
_ANSWER_MAGIC = b"stackcheck-answer"


class Answer:
    """The answer slot of one `stackcheck plan` command line: its directory and key, the facts file and the
    digest of the bytes the key was made from, the code stamp in the key (key_of takes it while the slot's command
    runs: one scan of stackcheck's files per command), and (set by `printed`) the text the command printed."""

    __slots__ = ("digest", "directory", "facts", "key", "stamp", "text")

    def __init__(self, directory: str, key: str, facts: str, digest: bytes, stamp: list[Any]) -> None:
        self.directory = directory
        self.key = key
        self.facts = facts
        self.digest = digest
        self.stamp = stamp
        self.text: str | None = None


#: the slot of the command running now, while the ordinary path computes its answer (stackcheck.cli sets it)
PENDING: list[Answer] = []


def _facts_bytes(path: str) -> bytes | None:
    """The bytes of a regular facts file of at most MAX_ANSWER_FACTS, else None (a pipe is never read here: the
    ordinary path must still find what it holds)."""
    import stat as stat_module

    try:
        if not stat_module.S_ISREG(os.stat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except (OSError, ValueError):
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(MAX_ANSWER_FACTS + 1)
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data if len(data) <= MAX_ANSWER_FACTS else None


def _blake2b(data: bytes) -> Any:
    try:  # (see _texts_hash: no OpenSSL)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=32)


def _output_state() -> list[Any] | None:
    """What the text depends on of standard output: for sys.stdout and sys.__stdout__, whether each is a
    terminal and its size there; sys.stdout's encoding and errors; UTF-8 mode. None without a standard output."""
    import sys

    state: list[Any] = [sys.flags.utf8_mode]
    for stream in (sys.stdout, sys.__stdout__):
        if stream is None:
            return None
        try:
            tty = bool(stream.isatty())
            size = list(os.get_terminal_size(stream.fileno())) if tty else None
        except (AttributeError, OSError, ValueError):
            return None
        state += [tty, size]
    state += [getattr(sys.stdout, "encoding", None), getattr(sys.stdout, "errors", None)]
    return state


def answer_for(argv: list[str], env: Mapping[str, str] | None = None) -> Answer | None:
    """The answer slot of the command line `argv` (`plan` and its words), or None when it has none: not a plan
    of a facts file, an option outside _ANSWER_OPTIONS, user manifests, no cache, a facts file that is not a
    regular file, no standard output or standard error."""
    import sys

    if not argv or argv[0] != "plan" or sys.stderr is None:
        return None
    words = argv[1:]
    facts: str | None = None
    i = 0
    while i < len(words):
        name, eq, value = words[i].partition("=")
        if name.startswith("-"):
            if name not in _ANSWER_OPTIONS:
                return None
            if name == "--facts":
                if facts is not None:
                    return None
                if not eq:
                    if i + 1 >= len(words) or words[i + 1].startswith("-"):
                        return None
                    i += 1
                    value = words[i]
                facts = value
        i += 1
    env = os.environ if env is None else env
    if not facts or env.get("STACKCHECK_MANIFESTS"):
        return None
    if turned_off(env):
        return None
    directory = user_cache_dir(env, "answer")
    if directory is None:
        return None
    from stackcheck.knowledge.package_data import shipped_files

    shipped = shipped_files()
    output = _output_state()
    data = _facts_bytes(facts)
    if shipped is None or output is None or data is None:
        return None
    try:
        cwd = os.getcwd()
    except OSError:
        return None
    digest = _blake2b(data).digest()
    stamp = _code_stamp()
    head = [ANSWER_FORMAT, stamp, sorted(shipped.items()), words, cwd, sorted(env.items()), output]
    h = _blake2b(repr(head).encode("utf-8", "surrogatepass"))
    h.update(digest)
    return Answer(directory, str(h.hexdigest()), facts, digest, stamp)


def read_answer(answer: Answer) -> tuple[str, int] | None:
    """(the text, the exit status) kept under the slot's key, or None (none, not ours, corrupt, another key)."""
    raw = read_private(answer.directory, answer.key, MAX_ENTRY_BYTES)
    if raw is None:
        return None
    head, newline, body = raw.partition(b"\n")
    parts = head.split(b" ")
    if not newline or len(parts) != 5 or parts[0] != _ANSWER_MAGIC or parts[1] != str(ANSWER_FORMAT).encode():
        return None
    if parts[2] != answer.key.encode() or parts[3] not in (b"0", b"1") or parts[4] != str(len(body)).encode():
        return None
    try:
        return body.decode("utf-8", "surrogatepass"), int(parts[3])
    except UnicodeDecodeError:
        return None


def printed(text: str) -> None:
    """The text a plan printed, for the slot of the running command (stackcheck.commands.plan calls it)."""
    if PENDING:
        PENDING[0].text = text


def _timeless(data: bytes) -> bool:
    """Whether a facts document's report shows nothing of the moment: a `host` block that is absent (shown as
    the facts file) or that says when it was collected; an empty one is shown as this host now."""
    from stackcheck import lean_json

    try:
        doc = lean_json.loads(data)
    except (ValueError, RecursionError):
        return False  # (a document with comments, say: the ordinary path reads it, and nothing is kept)
    host = doc.get("host") if isinstance(doc, dict) else None
    return not isinstance(host, dict) or bool(host.get("collected_at"))


def keep_answer(answer: Answer, code: int) -> bool:
    """Keep the slot's printed text with the exit status `code` (0 or 1), when the facts file still holds the
    bytes its key was made from and the text is timeless; False when nothing was kept."""
    if answer.text is None or code not in (0, 1):
        return False
    data = _facts_bytes(answer.facts)
    if data is None or _blake2b(data).digest() != answer.digest or not _timeless(data):
        return False
    body = answer.text.encode("utf-8", "surrogatepass")
    head = b" ".join([_ANSWER_MAGIC, str(ANSWER_FORMAT).encode(), answer.key.encode(), str(code).encode()])
    if not write_private(answer.directory, answer.key, head + b" " + str(len(body)).encode() + b"\n" + body):
        return False
    _prune(answer.directory, "", MAX_ANSWERS)
    return True


class Watched:
    """Standard error, noting whether anything may have been written to it (a write, or any other use than
    asking what it is): an answer (a plan's, the gate's decision) that wrote a warning or a note is not kept."""

    _ASKED = frozenset({"encoding", "errors", "isatty", "closed", "flush"})

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.used = False

    def write(self, text: str) -> int:
        self.used = True
        return int(self.stream.write(text))

    def __getattr__(self, name: str) -> Any:
        if name not in self._ASKED:
            self.used = True
        return getattr(self.stream, name)
