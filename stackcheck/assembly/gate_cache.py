"""The gate's decision kept between runs: a box gated again for the same launch (every restart, every replica)
prints what it printed before without preparing the rules or judging them again, once it has made sure that
nothing the decision read has changed.

An entry is found by a key made before anything is probed: a BLAKE2b (256-bit) hash of the gate's parsed
arguments and its raw command line, every variable of the environment, the working directory, the home
directory, the interpreter's sys.path, the user and group ids, the kernel's uname (the dependency check's
markers read it), what the output depends on (standard output and error: terminals and sizes, encoding: the
plan answers' _output_state), the code stamp (stackcheck's version and source files, Python's version,
packaging's, jsonschema's and rich's files: plan_cache._code_stamp) and the shipped manifests' stamps
(package_data.shipped_files). The entry then holds what the decision read beyond those, and is served only
when all of it is the same now:

- the facts as probed this run (the probes still run on every gate): the digest of the facts (less the per-run
  measurements no rule reads: plan_cache._described), the probe outcomes less their durations, and the host block;
- every read the decision made of this box after the key (`reads`, in order, each as its operation, its
  arguments and a digest of its answer or error): the files the preflight and the `--config` reading open, stat,
  list or resolve (through Recording, a HostView that records), the GPU usage reading (less its duration), the
  /dev/shm and locked-memory readings, the port's bind, and the SGLang model registry the architecture check
  reads (as a whole: its own cache's stamp reads the directory directly, each file's name, size, modification and
  change times and inode, so a module rewritten in place at its size with its mtime put back is read again). Each
  is made again on lookup, and its answer compared. The target environment's paths are read where they are: the
  facts name the home directory "~" (pipeline.scrub_home), paths.unscrub_home maps them back.

A run whose reads cannot be recorded keeps nothing: an argument that is not a plain value or that the
output's masking would change (a token in a path: nothing secret is written; the key and the digests are
hashes), a GPU process of the gate's own pid (the memory check leaves it out), anything written to standard
error while deciding, an internal error or a usage error, and a decision made without facts (no SGLang launch).
Not kept at all: `--watch`, `--image`, `--root`, user manifests (`--manifests`, $STACKCHECK_MANIFESTS), and
`--log`. The result depends on no time: the facts and readings are compared as read; a probe that timed
out is in the outcomes compared (its status), so a run that timed out is another entry.

What is kept is what would be printed (the masked decision, stdout; the warnings of an allowed launch,
stderr), the exit status and whether the command is run. Entries live in the user cache directory
($STACKCHECK_CACHE_DIR, else $XDG_CACHE_HOME/stackcheck, else ~/.cache/stackcheck) under gate/, one per key,
written and read as the plan cache's are (privately, atomically; an entry that does not parse, is too large,
has another shape or names another key is a miss); STACKCHECK_PLAN_CACHE=0 turns it off with the plan cache.
At most MAX_ENTRIES are kept."""

from __future__ import annotations

import os

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.readers.fsview import HostView

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

FORMAT = 1
MAX_ENTRIES = 64
MAX_ENTRY_BYTES = 4 * 1024 * 1024


class Slot:
    """The gate cache's slot of one run: its directory and key, the entry found under the key (or None), and
    what this run's decision read (`reads`), the digest of its facts (`facts`) and whether anything it did
    cannot be recorded (`spoiled`)."""

    __slots__ = ("depth", "directory", "entry", "facts", "key", "reads", "spoiled", "stamp")

    def __init__(self, directory: str, key: str, entry: dict[str, Any] | None, stamp: list[Any] | None = None) -> None:
        self.directory = directory
        self.stamp = stamp  # the code stamp in the key (plan_cache._code_stamp): the plan key's, on a miss
        self.key = key
        self.entry = entry
        self.reads: list[list[Any]] = []
        self.facts: str | None = None
        self.spoiled = False
        self.depth = 0  # > 0 inside a read recorded as a whole (note): the reads it makes are not recorded again

    def add(self, op: str, args: tuple[Any, ...], answer: str) -> None:
        self.reads.append([op, list(args), answer])


#: the slot of the decision being made now (commands.gate sets it; the readers below record into it)
ACTIVE: list[Slot] = []


def _blake2b(data: bytes) -> Any:
    try:  # (as plan_cache: no OpenSSL)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return blake2b(data, digest_size=32)


def _digest_text(text: str) -> str:
    return str(_blake2b(text.encode("utf-8", "surrogatepass")).hexdigest())


def _storable(value: Any) -> bool:
    """An argument kept in an entry: a plain value, and a text that the output's masking leaves as it is."""
    if value is None or isinstance(value, (bool, int)):
        return True
    if isinstance(value, str):
        from stackcheck.redact import redact_text

        return redact_text(value) == value
    return False


def _answer(op: str, value: Any) -> str:
    """The digest of a read's answer, as compared on lookup (the GPU usage less its duration)."""
    if op == "usage":
        value = (repr(getattr(value, "gpus", value)), repr(getattr(value, "error", None)))
    return _digest_text(repr(value))


def _raised(exc: BaseException) -> str:
    return _digest_text(repr(("raised", type(exc).__name__, str(exc))))


def note(op: str, args: tuple[Any, ...], fn: Callable[..., Any]) -> Any:
    """fn(*args), recorded as the read `op` of the running decision (when one records); the reads fn makes
    through a Recording view are not recorded again."""
    slot = ACTIVE[0] if ACTIVE else None
    if slot is None or slot.depth:
        return fn(*args)
    slot.depth += 1
    try:
        value = fn(*args)
    except BaseException as exc:
        slot.add(op, args, _raised(exc))
        raise
    finally:
        slot.depth -= 1
    slot.add(op, args, _answer(op, value))
    return value


class Recording(HostView):
    """This host's file system (root "/"), each read recorded into the running decision's slot."""

    def __init__(self) -> None:
        super().__init__("/")

    def stat(self, path: str, follow_symlinks: bool = True) -> Any:
        return note("view.stat", (path, follow_symlinks), super().stat)

    def listdir(self, path: str) -> list[str]:
        return note("view.listdir", (path,), super().listdir)  # type: ignore[no-any-return]

    def read_bytes(self, path: str, limit: int, offset: int = 0) -> bytes:
        return note("view.read_bytes", (path, limit, offset), super().read_bytes)  # type: ignore[no-any-return]

    def readlink(self, path: str) -> str:
        return note("view.readlink", (path,), super().readlink)  # type: ignore[no-any-return]

    def realpath(self, path: str) -> str:
        return note("view.realpath", (path,), super().realpath)  # type: ignore[no-any-return]


def host_view() -> HostView:
    """The view of this host the decision reads through: a Recording one while a decision records."""
    return Recording() if ACTIVE else HostView()


def usage_reader(usage: Any) -> Callable[[], Any]:
    return lambda: usage.get() if usage is not None else None


def _read(op: str, args: list[Any], live: Mapping[str, Callable[[], Any]]) -> Any:
    """The read `op` made again now (as the decision made it)."""
    if op.startswith("view."):
        return getattr(HostView(), op[5:])(*args)
    if op == "usage":
        return live["usage"]()
    # the host readers' own module, outside the preflight package (a hit imports none of the preflight's modules)
    from stackcheck.launch.host_readers import port_free, read_memlock, read_shm

    if op == "shm":
        return read_shm(*args)
    if op == "memlock":
        return read_memlock()
    if op == "port":
        return port_free(*args)
    if op == "registry":
        from stackcheck.readers.entryclasses import read_registry_cached

        return read_registry_cached(HostView(), args[0], os.environ)
    raise KeyError(op)


def unchanged(reads: list[list[Any]], live: Mapping[str, Callable[[], Any]]) -> bool:
    """Whether every read of an entry gives the same answer now."""
    for op, args, answer in reads:
        try:
            value = _read(op, args, live)
        except KeyError:
            return False
        except Exception as exc:
            if _raised(exc) != answer:
                return False
            continue
        if _answer(op, value) != answer:
            return False
    return True


def facts_digest(gathered: Any) -> str | None:
    """The digest of the facts as probed (facts, probe outcomes, host block): the facts less the per-run
    measurements (plan_cache._described), the outcomes less their durations; None when not plain JSON."""
    from stackcheck import lean_json
    from stackcheck.assembly.plan_cache import _described

    try:
        facts, outcomes, host = gathered
        outcomes = [{k: v for k, v in o.items() if k != "duration_ms"} if isinstance(o, dict) else o for o in outcomes]
        text = lean_json.dumps([FORMAT, _described(facts), outcomes, host], separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return _digest_text(text)


def _output_state() -> list[Any] | None:
    import sys

    from stackcheck.assembly.plan_cache import _output_state as stdout_state

    state = stdout_state()
    if state is None or sys.stderr is None:
        return None
    try:
        tty = bool(sys.stderr.isatty())
        size = list(os.get_terminal_size(sys.stderr.fileno())) if tty else None
    except (AttributeError, OSError, ValueError):
        return None
    return [*state, tty, size, getattr(sys.stderr, "encoding", None), getattr(sys.stderr, "errors", None)]


def _plain_args(args: Any) -> list[Any] | None:
    out = []
    for name, value in sorted(vars(args).items()):
        if not _plain(value):
            return None
        out.append([name, value])
    return out


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    return False


def slot_for(args: Any, env: Mapping[str, str] | None = None) -> Slot | None:
    """The slot of this gate's command line, with the entry kept under its key (or None); None when nothing
    may be kept for it (see the module docstring)."""
    import sys

    env = os.environ if env is None else env
    from stackcheck.assembly.plan_cache import turned_off

    if turned_off(env) or env.get("STACKCHECK_MANIFESTS"):
        return None
    if getattr(args, "watch", False) or getattr(args, "log", None) or getattr(args, "manifests", None):
        return None
    if getattr(args, "image", None) or getattr(args, "root", None):
        return None
    from stackcheck.paths import user_cache_dir

    directory = user_cache_dir(env, "gate")
    if directory is None:
        return None
    from stackcheck.assembly.plan_cache import _code_stamp
    from stackcheck.knowledge.package_data import shipped_files

    shipped = shipped_files()
    stamp = _code_stamp()
    output = _output_state()
    words = _plain_args(args)
    if shipped is None or output is None or words is None:
        return None
    try:
        cwd = os.getcwd()
        # gate --cwd LINK: the directory it resolves to now (the decision reads that one; irev65)
        launch_dir = os.path.realpath(args.cwd) if getattr(args, "cwd", None) else None
        ids = [os.getuid(), os.geteuid(), os.getgid(), os.getegid(), sorted(os.getgroups())]
        # (irunner3) the CPUs, capabilities and RLIMIT_RTPRIO the launch inherits: taskset / chrt / ionice are judged
        # on them (gate.scheduler_problems), so a decision kept under others is not this one's
        from stackcheck.launch.runners import process_limits

        limits = process_limits()
        cpus = limits.get("cpus")
        ids.append([sorted(cpus) if isinstance(cpus, frozenset) else None, limits.get("cap_eff"), limits.get("rtprio")])
        uname = list(os.uname())
    except (OSError, AttributeError):
        return None
    head = [
        FORMAT, stamp, sorted(shipped.items()), words, list(sys.argv), cwd, launch_dir, os.path.expanduser("~"),
        sys.executable, list(sys.path), ids, uname, sorted(env.items()), output,
    ]  # fmt: skip
    key = _digest_text(repr(head))
    return Slot(directory, key, load(directory, key), stamp)


def load(directory: str, key: str) -> dict[str, Any] | None:
    """The entry kept under `key` when it has its shape, else None (none, not ours, corrupt, another key)."""
    from stackcheck.paths import read_private

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
    reads = data.get("reads")
    if not isinstance(data.get("facts"), str) or not isinstance(reads, list):
        return None
    for r in reads:
        if not (isinstance(r, list) and len(r) == 3 and isinstance(r[0], str) and isinstance(r[1], list)):
            return None
        if not isinstance(r[2], str):
            return None
    if not isinstance(data.get("out"), str) or not isinstance(data.get("err"), str):
        return None
    code, run = data.get("code"), data.get("exec")
    if type(code) is not int or code not in (0, 1) or type(run) is not bool or (run and code != 0):
        return None
    return data


def hit(slot: Slot, gathered: Any, live: Mapping[str, Callable[[], Any]]) -> dict[str, Any] | None:
    """The slot's entry when this run's facts are those it was made from and every read it made gives the same
    answer now; else None. (This run's facts digest is kept in the slot either way, for the entry made next.)"""
    slot.facts = facts_digest(gathered)
    entry = slot.entry
    if entry is None or slot.facts is None or slot.facts != entry["facts"]:
        return None
    return entry if unchanged(entry["reads"], live) else None


def keep(slot: Slot, out: str, err: str, code: int, run: bool) -> bool:
    """Keep this run's answer under the slot's key, with its facts and reads; False when nothing was kept."""
    if slot.spoiled or slot.facts is None or code not in (0, 1) or (run and code != 0):
        return False
    if not all(_storable(a) for r in slot.reads for a in r[1]):
        return False  # (an argument that is no plain value, or that holds what the output would mask)
    from stackcheck import lean_json

    entry = {"format": FORMAT, "key": slot.key, "facts": slot.facts, "reads": slot.reads, "out": out, "err": err,
             "code": code, "exec": run}  # fmt: skip
    try:
        text = lean_json.dumps(entry, separators=(",", ":"))
    except (TypeError, ValueError):
        return False
    if len(text) > MAX_ENTRY_BYTES:
        return False
    from stackcheck.assembly.plan_cache import _prune
    from stackcheck.paths import write_private

    if not write_private(slot.directory, slot.key + ".json", text.encode("utf-8", "surrogatepass")):
        return False
    _prune(slot.directory, ".json", MAX_ENTRIES)
    return True
