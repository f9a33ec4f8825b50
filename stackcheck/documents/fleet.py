"""Streaming aggregation of many saved reports (`stackcheck fleet`).

Memory: reports are never kept. Each document is parsed, reduced to one small record
(hostname, collected_at, source, gpu key, stack key, statuses key, plan key) and dropped. The keys are
tuples of strings, interned so that every host with the same stack (or statuses, or plan) shares one
tuple; what grows with the input is one record per distinct host (needed to keep the newest report of a
host that reported twice), one line per bad input and one per dropped duplicate: all three are part of the
summary that is printed. Counters are computed from the host records at the end.

Speed: parsing is the cost (json.loads, ~100 µs for a 35 kB report), so large inputs are parsed by a pool
of worker processes (`--jobs`), fed in bounded batches (at most 2 batches per worker in flight, so the
walk of a directory is never materialised) and merged in input order, so the result is deterministic.

Bad inputs never stop the run: an unreadable or truncated file, a foreign document, a report with a newer
schema_version, binary garbage, an empty file, each is listed with its reason and the rest is counted.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from stackcheck.documents.report import CHECK_STATUSES, FEATURE_STATUSES, parse_timestamp
from stackcheck.facts.model import KERNEL_PACKAGES, DuplicateKey, unique_keys

if TYPE_CHECKING:
    from stackcheck.documents.types import (
        FleetDrift,
        FleetDuplicate,
        FleetGpuModel,
        FleetInput,
        FleetStack,
        FleetStackRow,
        FleetSummary,
        FleetWave,
        StackField,
    )

SCHEMA_VERSION = 1  # the report schema_version this stackcheck reads
#: the version of the `stackcheck fleet --format json` document (schemas/fleet.schema.json); 2: the file a host's
#: report came from is `input` (it was `source`, which every other document uses for [{id, title, url}])
FLEET_SCHEMA_VERSION = 2
MAX_DOCUMENT_BYTES = 16 * 2**20  # a report is tens of kB; a larger document is not one
JSONL_CHUNK_BYTES = 4 * 2**20  # a JSON Lines file is parsed in ranges of about this size
BATCH_DOCS = 64  # documents (files) per batch sent to a worker
STACK_FIELDS: tuple[StackField, ...] = ("driver", "torch", "kernels", "flashinfer", "sglang")  # a stack's keys

# A record, as produced by `reduce_report`:
# (hostname, ts, ts_text, gpu_key, stack_key, status_key, plan_key)
#   gpu_key    = (model, compute_capability, gpu_count)
#   stack_key  = (driver, torch, kernels, flashinfer, sglang): strings or None (absent / unknown)
#   status_key = (((feature, status, effect), ...), ((check, status), ...), consistent)
#   plan_key   = ((component, from, to), ...) or None when the report carries no plan
Record = tuple[str, float, str | None, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], tuple[Any, ...] | None]


class NotAReport(ValueError):
    """A document that is valid JSON but not a report stackcheck can read; the message says why."""


def _s(value: Any) -> str | None:
    """A scalar as a string, anything else (dicts, lists, null) as None."""
    if value is None or isinstance(value, dict | list):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _pkg_version(pkgs: dict[str, Any], name: str) -> str | None:
    p = pkgs.get(name)
    if isinstance(p, dict) and p.get("installed") and p.get("version") is not None:
        return _s(p.get("version"))
    return None


def reduce_report(doc: Any) -> Record:
    """The small record fleet keeps of one report; NotAReport when the document cannot be used."""
    if not isinstance(doc, dict):
        raise NotAReport(f"not a stackcheck report: a JSON {type(doc).__name__}, not an object")
    if "schema_version" not in doc:
        raise NotAReport("not a stackcheck report: no schema_version")
    version = doc["schema_version"]
    if isinstance(version, bool) or not isinstance(version, int):
        raise NotAReport(f"not a stackcheck report: schema_version {str(version)[:40]!r} is not an integer")
    if version > SCHEMA_VERSION:
        raise NotAReport(
            f"report schema_version {version} is newer than this stackcheck reads ({SCHEMA_VERSION}):"
            " upgrade stackcheck"
        )
    if version < 1:
        raise NotAReport(f"not a stackcheck report: schema_version {version}")
    facts = doc.get("facts")
    if not isinstance(facts, dict):
        raise NotAReport("not a stackcheck report: no facts object")
    host = doc.get("host")
    hostname = host.get("hostname") if isinstance(host, dict) else None
    if not isinstance(hostname, str) or not hostname:
        raise NotAReport("no host.hostname: cannot tell which box this report describes")
    ts_text = host.get("collected_at") if isinstance(host, dict) else None
    ts_text = ts_text if isinstance(ts_text, str) else None

    gpus = facts.get("gpus")
    if isinstance(gpus, list):
        names: dict[str, None] = {}
        ccs: dict[str, None] = {}
        for g in gpus:
            if isinstance(g, dict):
                names[_s(g.get("name")) or "unknown GPU"] = None
                ccs[_s(g.get("compute_capability")) or "?"] = None
        model = " + ".join(names) if names else "no GPU"
        gpu_key: tuple[Any, ...] = (model, "+".join(ccs) if ccs else None, len(gpus))
    else:
        gpu_key = ("GPUs unknown", None, None)

    driver = facts.get("driver")
    pkgs = facts.get("packages")
    pkgs = pkgs if isinstance(pkgs, dict) else {}
    kernels = [f"{name} {v}" for name in KERNEL_PACKAGES if (v := _pkg_version(pkgs, name)) is not None]
    stack_key = (
        _s(driver.get("version")) if isinstance(driver, dict) else None,
        _pkg_version(pkgs, "torch"),
        ", ".join(kernels) or None,
        _pkg_version(pkgs, "flashinfer-python"),
        _pkg_version(pkgs, "sglang"),
    )

    # hot loop (100,000 reports): plain strings, the normal case, skip the _s() call
    feats = []
    for f in doc.get("features") or ():
        if isinstance(f, dict):
            fid, st, eff = f.get("id"), f.get("status"), f.get("effect")
            feats.append(
                (
                    fid if type(fid) is str and fid else _s(fid) or "?",
                    st if type(st) is str and st else _s(st) or "?",
                    eff if type(eff) is str or eff is None else _s(eff),
                )
            )
    checks = []
    for c in doc.get("checks") or ():
        if isinstance(c, dict):
            cid, st = c.get("id"), c.get("status")
            checks.append(
                (cid if type(cid) is str and cid else _s(cid) or "?", st if type(st) is str and st else _s(st) or "?")
            )
    summary = doc.get("summary")
    consistent = summary.get("consistent") if isinstance(summary, dict) else None
    status_key = (tuple(feats), tuple(checks), consistent if isinstance(consistent, bool) else None)

    plan = doc.get("plan")
    plan_key: tuple[Any, ...] | None = None
    if isinstance(plan, dict) and isinstance(plan.get("steps"), list):
        plan_key = tuple(
            (_s(s.get("component")) or "?", _s(s.get("from")), _s(s.get("to")) or "?")
            for s in plan["steps"]
            if isinstance(s, dict)
        )
    return (hostname, parse_timestamp(ts_text), ts_text, gpu_key, stack_key, status_key, plan_key)


def parse_document(data: bytes) -> Record:
    """Bytes of one document to its record; NotAReport (a ValueError) with the reason otherwise."""
    if not data.strip():
        raise NotAReport("empty")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise NotAReport(f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB: not a report")
    try:
        doc = json.loads(data, object_pairs_hook=unique_keys)
    except DuplicateKey as exc:
        raise NotAReport(f"duplicate key {exc.args[0][:80]!r} in one object: JSON would keep only the last") from None
    except json.JSONDecodeError as exc:
        raise NotAReport(f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except UnicodeDecodeError:
        raise NotAReport("not text: binary data or an unknown encoding") from None
    except ValueError as exc:
        raise NotAReport(f"not valid JSON: {exc}") from None
    except RecursionError:
        raise NotAReport("not a report: JSON nested too deeply") from None
    try:
        return reduce_report(doc)
    except NotAReport:
        raise
    except (TypeError, AttributeError, KeyError, ValueError, RecursionError) as exc:  # hostile shapes
        raise NotAReport(f"malformed report: {type(exc).__name__}: {str(exc)[:200]}") from None


# --- work units and the worker -----------------------------------------------------------------------
# A unit is ("doc", path) | ("jsonl", path, start, end) | ("lines", label, first_line, [bytes, ...]).
# A worker returns, per unit, (items, line_count); an item is ("ok", source, record) or ("bad", source, reason),
# where source is (path, line): line is relative to the unit's range for "jsonl" (fixed up by the merger).

Unit = tuple[Any, ...]
Item = tuple[str, tuple[str, int | None], Any]


def _read_limited(fh: BinaryIO) -> bytes | None:
    data = fh.read(MAX_DOCUMENT_BYTES + 1)
    return None if len(data) > MAX_DOCUMENT_BYTES else data


def _one(source: tuple[str, int | None], data: bytes) -> Item:
    try:
        return ("ok", source, parse_document(data))
    except NotAReport as exc:
        return ("bad", source, str(exc))


def _lines_items(lines: Iterable[tuple[int, bytes | None]], path: str) -> list[Item]:
    out: list[Item] = []
    for n, line in lines:
        if line is None:
            out.append(("bad", (path, n), f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB: not a report"))
            continue
        if not line.strip():
            continue  # blank lines in JSON Lines are allowed and not documents
        out.append(_one((path, n), line))
    return out


def _iter_range_lines(fh: BinaryIO, start: int, end: int) -> Iterator[tuple[int, bytes | None]]:
    """Lines that start in [start, end) (start is at a line start); an over-long line is yielded as None."""
    fh.seek(start)
    if end - start <= 2 * JSONL_CHUNK_BYTES:
        # the usual range: one read and a split is several times cheaper than readline on long lines
        lines = fh.read(end - start).split(b"\n")  # "\n" only, as readline splits
        if lines and not lines[-1]:
            lines.pop()
        for n, line in enumerate(lines, 1):
            yield n, line if len(line) <= MAX_DOCUMENT_BYTES else None
        return
    pos = start
    n = 0
    while pos < end:
        line = fh.readline(MAX_DOCUMENT_BYTES + 1)
        if not line:
            return
        n += 1
        pos += len(line)
        if len(line) > MAX_DOCUMENT_BYTES and not line.endswith(b"\n"):
            while True:  # skip the rest of the over-long line
                rest = fh.readline(2**20)
                pos += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield n, None
            continue
        yield n, line


class _NotRegular(OSError):
    pass


def _open_regular(path: str) -> BinaryIO:
    """A regular file opened for reading; anything else (a FIFO, a device, a socket) is refused before a
    read can block on it (opened without blocking, checked on the open descriptor)."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotRegular("not a regular file (a FIFO, a device or a socket): skipped")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def run_unit(unit: Unit) -> tuple[list[Item], int]:
    kind = unit[0]
    if kind == "doc":
        path = unit[1]
        try:
            with _open_regular(path) as fh:
                data = _read_limited(fh)
        except _NotRegular as exc:
            return [("bad", (path, None), str(exc))], 0
        except OSError as exc:
            return [("bad", (path, None), f"cannot read: {exc.strerror or exc}")], 0
        if data is None:
            return [("bad", (path, None), f"larger than {MAX_DOCUMENT_BYTES // 2**20} MiB: not a report")], 0
        return [_one((path, None), data)], 0
    if kind == "jsonl":
        _, path, start, end = unit
        try:
            with _open_regular(path) as fh:
                lines = list(_iter_range_lines(fh, start, end))
        except OSError as exc:
            return [("bad", (path, None), f"cannot read: {exc.strerror or exc}")], 0
        return _lines_items(lines, path), len(lines)
    _, label, first, raw = unit
    return _lines_items(((first + i, line) for i, line in enumerate(raw)), label), len(raw)


# Keys are interned in the worker too: a record travels as small ids, and a key's tuple travels once per
# worker and run (pickling the full statuses tuple of every report was a third of the cost).
_KEYS: dict[Any, int] = {}
_RUN: list[str] = [""]

BatchResult = tuple[int, list[tuple[int, Any]], list[tuple[list[Item], int]]]


def run_batch(batch: list[Unit], run: str = "") -> BatchResult:
    if _RUN[0] != run:
        _KEYS.clear()
        _RUN[0] = run
    new: list[tuple[int, Any]] = []

    def key_id(key: Any) -> int:
        i = _KEYS.get(key)
        if i is None:
            i = _KEYS[key] = len(_KEYS)
            new.append((i, key))
        return i

    results = []
    for unit in batch:
        items, nlines = run_unit(unit)
        out: list[Item] = []
        for kind, src, payload in items:
            if kind == "ok":
                host, ts, ts_text, gpu, stack, status, plan = payload
                out.append((kind, src, (host, ts, ts_text, key_id(gpu), key_id(stack), key_id(status), key_id(plan))))
            else:
                out.append((kind, src, payload))
        results.append((out, nlines))
    return os.getpid(), new, results


# --- inputs ------------------------------------------------------------------------------------------


def _skip_line(fh: BinaryIO) -> None:
    """Move past the end of the current line in bounded reads: a 1 GB line is never held in memory."""
    while True:
        part = fh.readline(2**20)
        if not part or part.endswith(b"\n"):
            return


def _jsonl_ranges(path: str) -> Iterator[Unit]:
    """A JSON Lines file as byte ranges of about JSONL_CHUNK_BYTES, each starting at a line start."""
    try:
        with _open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            start = 0
            while start < size:
                fh.seek(min(start + JSONL_CHUNK_BYTES, size))
                if fh.tell() < size:
                    _skip_line(fh)
                end = min(fh.tell(), size)
                yield ("jsonl", path, start, end)
                start = end
    except _NotRegular as exc:
        yield ("bad-input", path, str(exc))
    except OSError as exc:
        yield ("bad-input", path, f"cannot read: {exc.strerror or exc}")


def _stream_units(path: str) -> Iterator[Unit]:
    """A path named on the command line that is a pipe or a device (`<(zcat reports.jsonl.gz)`): read as
    JSON Lines, like standard input, with the same per-document cap."""
    import stat

    try:
        with open(path, "rb") as fh:
            if stat.S_ISCHR(os.fstat(fh.fileno()).st_mode):
                # a device (/dev/zero, /dev/urandom) never ends: a stream of reports is a pipe or a socket
                yield ("bad-input", path, "a character device, not a file or a pipe of reports")
                return
            yield from _stdin_units(fh, path)
    except OSError as exc:
        yield ("bad-input", path, f"cannot read: {exc.strerror or exc}")


def _stdin_units(stream: BinaryIO, label: str = "<stdin>") -> Iterator[Unit]:
    batch: list[bytes | None] = []
    first = 1
    n = 0
    while True:
        line = stream.readline(MAX_DOCUMENT_BYTES + 1)
        if not line:
            break
        n += 1
        if len(line) > MAX_DOCUMENT_BYTES and not line.endswith(b"\n"):
            while True:
                rest = stream.readline(2**20)
                if not rest or rest.endswith(b"\n"):
                    break
            batch.append(None)  # reported as a bad line
        else:
            batch.append(line)
        if len(batch) >= BATCH_DOCS:
            yield ("lines", label, first, batch)
            first = n + 1
            batch = []
    if batch:
        yield ("lines", label, first, batch)


def iter_units(paths: Iterable[str], stdin: BinaryIO | None = None) -> Iterator[Unit]:
    """Work units for the given paths, lazily: directories are walked (sorted) for *.json and *.jsonl."""
    for p in paths:
        if p == "-":
            if stdin is None and sys.stdin is None:
                yield ("bad-input", "<stdin>", "standard input is closed")
                continue
            stream = stdin if stdin is not None else sys.stdin.buffer
            yield from _stdin_units(stream)
        elif os.path.isdir(p):
            for root, dirs, files in os.walk(p, onerror=None):
                dirs.sort()
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if not name.endswith((".json", ".jsonl")):
                        continue
                    why = _not_a_file(full)
                    if why is not None:  # a FIFO in a reports directory is skipped, never opened
                        yield ("bad-input", full, why)
                    elif name.endswith(".jsonl"):
                        yield from _jsonl_ranges(full)
                    else:
                        yield ("doc", full)
        elif _not_a_file(p) == _NOT_REGULAR:
            yield from _stream_units(p)  # named on purpose: a pipe (`<(...)`) is read as a stream
        elif p.endswith(".jsonl"):
            yield from _jsonl_ranges(p)
        elif os.path.exists(p):
            yield ("doc", p)
        else:
            yield ("bad-input", p, _missing_why(p))


def _missing_why(path: str) -> str:
    """Why `path`, which os.path.exists denies, cannot be read: the system's word (a link loop, a file where a
    directory is named, a dangling link), 'no such file or directory' by default (irobust5: a link loop was called
    missing)."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.strerror:
            return str(exc.strerror).lower()
    return "no such file or directory"


_NOT_REGULAR = "not a regular file (a FIFO, a device or a socket): skipped"


def _not_a_file(path: str) -> str | None:
    """Why a path found in a directory is not read (None: a regular file, read as a report)."""
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "dangling link: skipped"
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    return None if stat.S_ISREG(st.st_mode) else _NOT_REGULAR


def _batches(units: Iterator[Unit]) -> Iterator[list[Unit]]:
    batch: list[Unit] = []
    for u in units:
        if u[0] in ("jsonl", "lines"):  # already a few MB of documents each
            if batch:
                yield batch
                batch = []
            yield [u]
            continue
        batch.append(u)
        if len(batch) >= BATCH_DOCS:
            yield batch
            batch = []
    if batch:
        yield batch


def _available_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# --- aggregation -------------------------------------------------------------------------------------


def source_text(source: tuple[str, int | None]) -> str:
    path, line = source
    return path if line is None else f"{path}:{line}"


@dataclass
class Fleet:
    """The running summary: one record per host, bad inputs, dropped duplicates."""

    hosts: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    bad: list[tuple[str, str]] = field(default_factory=list)
    dropped: list[tuple[str, str, str | None]] = field(default_factory=list)  # (hostname, source, collected_at)
    documents: int = 0
    _intern: dict[Any, Any] = field(default_factory=dict)
    _remote: dict[tuple[int, int], Any] = field(default_factory=dict)  # (worker pid, key id) -> key

    def _i(self, key: Any) -> Any:
        return self._intern.setdefault(key, key)

    def add_item(self, item: Item, line_offset: int = 0, worker: int = 0) -> None:
        kind, (path, line), payload = item
        if line is not None and line_offset:
            line += line_offset
        self.documents += 1
        src = source_text((path, line))
        if kind == "bad":
            self.bad.append((src, str(payload)))
            return
        hostname, ts, ts_text, gpu_id, stack_id, status_id, plan_id = payload
        r = self._remote
        rec = (ts, ts_text, src, r[worker, gpu_id], r[worker, stack_id], r[worker, status_id], r[worker, plan_id])
        old = self.hosts.get(hostname)
        if old is None:
            self.hosts[hostname] = rec
        elif ts >= old[0]:  # the newer wins; on a tie the later input wins
            self.dropped.append((hostname, old[2], old[1]))
            self.hosts[hostname] = rec
        else:
            self.dropped.append((hostname, src, ts_text))

    def add_results(self, batch: BatchResult, units: list[Unit], offsets: dict[str, int]) -> None:
        worker, new_keys, results = batch
        for i, key in new_keys:
            self._remote[worker, i] = self._i(key)
        for (items, nlines), unit in zip(results, units, strict=True):
            if unit[0] == "jsonl":
                path = unit[1]
                base = offsets.get(path, 0) if unit[2] else 0
                for it in items:
                    self.add_item(it, base, worker)
                offsets[path] = base + nlines
            else:
                for it in items:
                    self.add_item(it, 0, worker)

    def summary(self) -> FleetSummary:
        return summarise(self)


@dataclass(frozen=True)
class FleetReport:
    """What `stackcheck fleet` shows: the summary (the JSON document, schemas/fleet.schema.json) and the
    fleet it summarises (the CSV format has one row per host)."""

    fleet: Fleet
    summary: FleetSummary


def read_fleet(paths: Iterable[str], jobs: int = 0, stdin: BinaryIO | None = None) -> Fleet:
    """Read every report under `paths` into a Fleet. jobs: worker processes (0: one per available CPU)."""
    fleet = Fleet()
    offsets: dict[str, int] = {}
    run = os.urandom(8).hex()
    units = (u for u in iter_units(paths, stdin) if not _bad_input(u, fleet))
    batches = _batches(units)
    n_jobs = jobs if jobs > 0 else min(_available_cpus(), 8)
    first = next(batches, None)
    if first is None:
        return fleet
    second = next(batches, None)
    if n_jobs <= 1 or second is None:
        for b in (first, second) if second is not None else (first,):
            fleet.add_results(run_batch(b, run), b, offsets)
        for b in batches:
            fleet.add_results(run_batch(b, run), b, offsets)
        return fleet

    import multiprocessing

    pool = multiprocessing.get_context().Pool(n_jobs)
    try:
        pending: deque[tuple[list[Unit], Any]] = deque()
        for b in _chain((first, second), batches):
            pending.append((b, pool.apply_async(run_batch, (b, run))))
            while len(pending) >= 2 * n_jobs:
                done_units, res = pending.popleft()
                fleet.add_results(res.get(), done_units, offsets)
        while pending:
            done_units, res = pending.popleft()
            fleet.add_results(res.get(), done_units, offsets)
        pool.close()
    finally:
        pool.terminate()
        pool.join()
    return fleet


def _chain(head: tuple[list[Unit], list[Unit]], rest: Iterator[list[Unit]]) -> Iterator[list[Unit]]:
    yield from head
    yield from rest


def _bad_input(unit: Unit, fleet: Fleet) -> bool:
    if unit[0] == "bad-input":
        fleet.documents += 1
        fleet.bad.append((unit[1], unit[2]))
        return True
    return False


# --- the summary document ----------------------------------------------------------------------------


def _stack_dict(stack: tuple[Any, ...]) -> FleetStack:
    # the record's stack_key: one str-or-None per STACK_FIELDS (reduce_report)
    return cast("FleetStack", dict(zip(STACK_FIELDS, stack, strict=True)))


def _sort_key(t: Any) -> str:
    return json.dumps(t, default=str)


def _newness(stack: Any) -> tuple[Any, ...]:
    """A sort key that puts newer stacks last: SGLang, torch, FlashInfer, kernels, then the driver."""
    from stackcheck.facts.versions import numeric_tuple, public

    def v(text: Any) -> tuple[int, Any]:
        parsed = public(str(text)) if text else None
        return (1, parsed) if parsed is not None else (0, None)

    if not isinstance(stack, tuple) or len(stack) < 5:
        return ()
    driver, torch, kernels, flashinfer, sglang = stack[:5]
    kernel_version = str(kernels).split(" ")[-1] if kernels else None
    return (v(sglang), v(torch), v(flashinfer), v(kernel_version), numeric_tuple(str(driver)) or ())


def summarise(fleet: Fleet) -> FleetSummary:
    """The fleet summary as a JSON-compatible dict; every renderer works from it."""
    hosts = fleet.hosts
    model_hosts: Counter[tuple[Any, Any]] = Counter()
    model_gpus: Counter[tuple[Any, Any]] = Counter()
    stack_hosts: Counter[tuple[tuple[Any, Any], Any]] = Counter()
    status_hosts: Counter[Any] = Counter()
    plan_hosts: dict[Any, list[str]] = {}
    for name, (_, _, _, gpu_key, stack_key, status_key, plan_key) in hosts.items():
        m = (gpu_key[0], gpu_key[1])
        model_hosts[m] += 1
        model_gpus[m] += gpu_key[2] or 0
        stack_hosts[(m, stack_key)] += 1
        status_hosts[status_key] += 1
        if plan_key:
            plan_hosts.setdefault(plan_key, []).append(name)

    # the most common stack per GPU model: most hosts; on a tie, the newer stack (the one the others should
    # move to), then the stack text, so that a host already upgraded is not reported as the drift
    common: dict[tuple[Any, Any], Any] = {}
    by_text = sorted(stack_hosts.items(), key=lambda kv: _sort_key(kv[0][1]))
    by_newness = sorted(by_text, key=lambda kv: _newness(kv[0][1]), reverse=True)
    for (m, stack), _n in sorted(by_newness, key=lambda kv: -kv[1]):
        common.setdefault(m, stack)
    drift_hosts: dict[tuple[Any, Any], list[str]] = {}
    for name, rec in hosts.items():
        m = (rec[3][0], rec[3][1])
        if rec[4] != common[m]:
            drift_hosts.setdefault((m, rec[4]), []).append(name)

    feature_counts: dict[str, Counter[str]] = {}
    feature_effects: dict[str, Counter[str]] = {}
    check_counts: dict[str, Counter[str]] = {}
    consistent: Counter[str] = Counter()
    for (feats, checks, cons), n in status_hosts.items():
        for fid, status, effect in feats:
            feature_counts.setdefault(fid, Counter())[status] += n
            if status == "blocked" and effect:
                feature_effects.setdefault(fid, Counter())[effect] += n
        for cid, status in checks:
            check_counts.setdefault(cid, Counter())[status] += n
        consistent["unknown" if cons is None else str(cons).lower()] += n

    models: list[FleetGpuModel] = [
        {"model": m[0], "compute_capability": m[1], "hosts": n, "gpus": model_gpus[m]}
        for m, n in sorted(model_hosts.items(), key=lambda kv: (-kv[1], _sort_key(kv[0])))
    ]
    stacks: list[FleetStackRow] = []
    for (m, stack), n in sorted(
        stack_hosts.items(), key=lambda kv: (-model_hosts[kv[0][0]], _sort_key(kv[0][0]), -kv[1], _sort_key(kv[0][1]))
    ):
        entry: FleetStackRow = {
            "model": m[0],
            "compute_capability": m[1],
            **_stack_dict(stack),
            "hosts": n,
            "common": common[m] == stack,
        }
        stacks.append(entry)
    drift: list[FleetDrift] = []
    for (m, stack), names in sorted(drift_hosts.items(), key=lambda kv: (_sort_key(kv[0][0]), -len(kv[1]))):
        drift.append(
            {
                "model": m[0],
                "compute_capability": m[1],
                "stack": _stack_dict(stack),
                "common_stack": _stack_dict(common[m]),
                "differs_in": [f for f, a, b in zip(STACK_FIELDS, stack, common[m], strict=True) if a != b],
                "count": len(names),
                "hosts": sorted(names),
            }
        )
    waves: list[FleetWave] = []
    for i, (plan_key, names) in enumerate(
        sorted(plan_hosts.items(), key=lambda kv: (-len(kv[1]), _sort_key(kv[0]))), start=1
    ):
        waves.append(
            {
                "wave": i,
                "steps": [{"component": c, "from": f, "to": t} for c, f, t in plan_key],
                "count": len(names),
                "hosts": sorted(names),
            }
        )
    dropped_by_host: dict[str, list[FleetInput]] = {}
    for name, src, ts_text in fleet.dropped:
        dropped_by_host.setdefault(name, []).append({"input": src, "collected_at": ts_text})
    duplicates: list[FleetDuplicate] = [
        {
            "hostname": name,
            "kept": {"input": hosts[name][2], "collected_at": hosts[name][1]},
            "dropped": dropped,
        }
        for name, dropped in sorted(dropped_by_host.items())
    ]
    from stackcheck import __version__

    return {
        "schema_version": FLEET_SCHEMA_VERSION,
        "fleet_schema_version": FLEET_SCHEMA_VERSION,  # the old name of schema_version, kept for readers of 1
        "tool": {"name": "stackcheck", "version": __version__},
        "inputs": {
            "documents": fleet.documents,
            "reports": fleet.documents - len(fleet.bad),
            "hosts": len(hosts),
            "duplicates_dropped": len(fleet.dropped),
            "bad": len(fleet.bad),
        },
        "gpu_models": models,
        "stacks": stacks,
        "features": [
            {
                "feature": fid,
                "hosts": dict(sorted(c.items(), key=lambda kv: _status_rank(kv[0], FEATURE_STATUSES))),
                "blocked_effects": dict(sorted(feature_effects.get(fid, Counter()).items())),
            }
            for fid, c in sorted(feature_counts.items(), key=lambda kv: (-kv[1].get("blocked", 0), kv[0]))
        ],
        "checks": [
            {"check": cid, "hosts": dict(sorted(c.items(), key=lambda kv: _status_rank(kv[0], CHECK_STATUSES)))}
            for cid, c in sorted(check_counts.items(), key=lambda kv: (-kv[1].get("failed", 0), kv[0]))
        ],
        "consistent": dict(sorted(consistent.items())),
        "drift": drift,
        "waves": waves,
        "duplicates": duplicates,
        "bad": [{"input": s, "reason": r} for s, r in fleet.bad],
    }


def _status_rank(status: str, order: tuple[str, ...]) -> tuple[int, str]:
    return (order.index(status) if status in order else len(order), status)


def host_rows(fleet: Fleet, summary: FleetSummary) -> Iterator[dict[str, Any]]:
    """One row per input document (counted, duplicate-dropped or bad), for the CSV format."""
    wave_of: dict[str, int] = {}
    for w in summary["waves"]:
        for h in w["hosts"]:
            wave_of[h] = w["wave"]
    drifted: set[str] = set()
    for d in summary["drift"]:
        drifted.update(d["hosts"])
    for name in sorted(fleet.hosts):
        _ts, ts_text, src, gpu_key, stack_key, status_key, _ = fleet.hosts[name]
        feats, checks, cons = status_key
        yield {
            "status": "counted",
            "input": src,
            "hostname": name,
            "collected_at": ts_text,
            "gpu_model": gpu_key[0],
            "compute_capability": gpu_key[1],
            "gpus": gpu_key[2],
            **_stack_dict(stack_key),
            "consistent": "" if cons is None else str(cons).lower(),
            "blocked": " ".join(f for f, s, _ in feats if s == "blocked"),
            "failed_checks": " ".join(c for c, s in checks if s == "failed"),
            "drift": "yes" if name in drifted else "no",
            "wave": wave_of.get(name, ""),
            "reason": "",
        }
    for name, src, ts_text in fleet.dropped:
        yield {
            "status": "duplicate-dropped",
            "input": src,
            "hostname": name,
            "collected_at": ts_text,
            "reason": f"an older report of {name}: kept {fleet.hosts[name][2]}",
        }
    for src, reason in fleet.bad:
        yield {"status": "bad", "input": src, "reason": reason}


CSV_COLUMNS = [
    "status",
    "input",
    "hostname",
    "collected_at",
    "gpu_model",
    "compute_capability",
    "gpus",
    *STACK_FIELDS,
    "consistent",
    "blocked",
    "failed_checks",
    "drift",
    "wave",
    "reason",
]
