"""Loading the manifests: the shipped set (package data, through importlib.resources) plus a user's own.

Validation policy, chosen for start-up speed:
- the shipped manifests are validated against their schemas at build and test time (tests/knowledge/test_manifests.py),
  so a normal run only parses them (a few milliseconds) and never imports jsonschema; they are read straight
  from the package directory (importlib.resources, with its zipfile and tempfile imports, only when the
  package is not a directory on disk), and their nesting is checked by the tests, not at every start;
- a user's directory (`--manifests DIR` or STACKCHECK_MANIFESTS) is validated in full every time it is
  loaded, because nothing else has checked it, then merged over the shipped set entry by entry (by id);
- `stackcheck manifests validate [DIR]` validates everything and reports every error with file and path.
"""

from __future__ import annotations

import os
from _thread import allocate_lock
from collections.abc import Iterable, Mapping

from stackcheck import lean_json
from stackcheck.errors import ManifestError
from stackcheck.knowledge.package_data import MANIFEST_FILES, shipped_files, shipped_texts
from stackcheck.lean_typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # pathlib is imported where a user's directory is read: not on every start
    from pathlib import Path
    from typing import Any

    from stackcheck.knowledge.types import (
        Architecture,
        Check,
        Components,
        Feature,
        Launch,
        Meta,
        Package,
        Preflight,
        Recommend,
        Release,
        Signature,
        SourceTable,
        SourceTableRelease,
    )

ENV_VAR = "STACKCHECK_MANIFESTS"
#: the place in Manifests._docs of a document not parsed yet (never returned: Manifests.doc parses it)
_UNPARSED: Any = object()
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
#: the shipped manifests nest 11 levels deep; a user document nested deeper than this is refused before
#: the schema validator and the rule engine (both recursive) ever see it
MAX_MANIFEST_DEPTH = 64


class Manifests:
    """The merged manifest documents, as parsed JSON, and where each came from. (A plain class, not a
    dataclass: the dataclasses module imports inspect, ~8 ms of every start.)

    The shipped documents are parsed when first read (`unparsed`: file name -> (origin, text); `unread`: file
    name -> (origin, path), read then too): an audit whose verdicts and plan come from the plan cache reads
    three of the eleven files, and parsing the others (the features, checks, signatures: ~4 ms) was most of
    its manifest time. `docs` gives them all,
    parsed, in the order they were given; a text that is not JSON raises its ManifestError wherever it
    is first read, and again at every later read. A shipped file's document is read from its twin (knowledge/
    prepared.py: kept parsed by an earlier run, for the same file stamp) where there is one, and its twin is
    written when it is parsed (`stamps`: file name -> the stamp of an unread shipped file)."""

    __slots__ = (
        "_by_public",
        "_by_version",
        "_derived",
        "_docs",
        "_gate_index",
        "_gate_rows",
        "_lock",
        "_newest",
        "_releases",
        "_stamps",
        "_unparsed",
        "origins",
    )

    def __init__(
        self,
        docs: dict[str, Any] | None = None,
        origins: dict[str, list[str]] | None = None,
        unparsed: Mapping[str, tuple[str, str]] | None = None,
        unread: Mapping[str, tuple[str, str]] | None = None,
        stamps: Mapping[str, str] | None = None,
    ) -> None:
        self._docs: dict[str, Any] = docs if docs is not None else {}  # file name -> document
        # file name -> (origin, text, None), or (origin, None, path) of a file not read yet, of a document not
        # parsed yet; its place in _docs holds _UNPARSED
        self._unparsed: dict[str, tuple[str, str | None, str | None]] = {
            **{k: (origin, text, None) for k, (origin, text) in (unparsed or {}).items()},
            **{k: (origin, None, path) for k, (origin, path) in (unread or {}).items()},
        }
        # file name -> the stamp of an unread shipped file (package_data.shipped_files): its twin's key
        self._stamps: dict[str, str] = dict(stamps or {})
        self._lock = allocate_lock()  # the probes' threads read documents too: each is parsed once
        for name in self._unparsed:
            self._docs[name] = _UNPARSED
        self.origins: dict[str, list[str]] = origins if origins is not None else {}  # file -> files merged into it
        # indexes built on first use, after load() has merged everything (the engine and the planner look
        # gates and releases up hundreds of times per run)
        self._gate_index: dict[str, SourceTable] | None = None
        self._releases: dict[str, list[Release]] = {}
        self._newest: dict[str, str | None] = {}
        self._by_version: dict[str, dict[Any, Release]] = {}
        self._by_public: dict[str, dict[Any, Release]] = {}
        self._gate_rows: dict[tuple[str, str], SourceTableRelease | None] = {}
        self._derived: dict[str, dict[Any, Any]] = {}

    @property
    def docs(self) -> dict[str, Any]:
        """file name -> document, every one parsed (those not read yet are parsed now)."""
        for name in list(self._unparsed):
            self.doc(name)
        return self._docs

    def doc(self, name: str) -> Any:
        """One document, parsed on first use; None when there is none of that name."""
        if name in self._unparsed:
            with self._lock:
                pending = self._unparsed.get(name)
                if pending is not None:  # raises ManifestError, and then is parsed again next time
                    origin, text, path = pending
                    twin = self._twin(name, path) if text is None else None
                    if twin is not None and twin[2] is not None:
                        self._docs[name] = twin[2]  # (the document kept parsed: knowledge/prepared.py)
                    else:
                        if text is None:
                            text = _read(origin, str(path))
                            self._unparsed[name] = (origin, text, None)
                        self._docs[name] = _parse(text, origin, check_depth=False)
                        if twin is not None:
                            from stackcheck.knowledge import prepared

                            prepared.keep(twin[0], name, twin[1], self._docs[name])
                    del self._unparsed[name]
        return self._docs.get(name)

    def _twin(self, name: str, path: str | None) -> tuple[str, str, Any] | None:
        """(directory, key, document or None) of the twin of the shipped document `name` at `path` (read before its
        text: knowledge/prepared.py), or None when it has none (the caches turned off, no stamp, no cache directory)."""
        stamp = self._stamps.get(name)
        if stamp is None or path is None:
            return None
        from stackcheck.knowledge import prepared

        where = prepared.directory()
        if where is None:
            return None
        key = prepared.key_of(path, stamp, __file__)
        return where, key, prepared.load(where, name, key)

    def shipped_stamp(self, name: str) -> str | None:
        """The stamp (package_data.shipped_files) of the shipped file the document `name` is, as shipped: None when it
        was not read from the package directory or a user's document was merged into it."""
        if self.origins.get(name) != [f"manifests/{name}"]:
            return None
        return self._stamps.get(name)

    def derived(self, name: str) -> dict[Any, Any]:
        """A memo, under `name`, of what its user works out from these documents (the planner: which components
        each rule reads): kept with them, dropped with the indexes by forget_indexes."""
        return self._derived.setdefault(name, {})

    def forget_indexes(self) -> None:
        """Drop the indexes built on first use: call it after editing `docs` in place."""
        self._gate_index = None
        self._releases = {}
        self._newest = {}
        self._by_version = {}
        self._by_public = {}
        self._gate_rows = {}
        self._derived = {}

    def __deepcopy__(self, memo: dict[int, Any]) -> Manifests:
        # a copy is made to be edited: it starts without the indexes of the original
        from copy import deepcopy

        return Manifests(deepcopy(self.docs, memo), deepcopy(self.origins, memo))

    def __repr__(self) -> str:
        return f"Manifests(docs={sorted(self.docs)!r}, origins={self.origins!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Manifests):
            return NotImplemented
        return (self.docs, self.origins) == (other.docs, other.origins)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq is

    @property
    def meta(self) -> Meta:
        return cast("Meta", self.doc("meta.json") or {})

    @property
    def data_version(self) -> str:
        return str(self.meta.get("data_version", "unknown"))

    @property
    def date(self) -> str:
        return str(self.meta.get("date", "unknown"))

    def list_of(self, file: str, key: str) -> list[dict[str, Any]]:
        doc = self.doc(file)
        if isinstance(doc, dict):
            value = doc.get(key)
            if isinstance(value, list):
                return [x for x in value if isinstance(x, dict)]
        return []

    # the validated documents read as their records (stackcheck.knowledge.types; a cast costs nothing)
    @property
    def features(self) -> list[Feature]:
        return cast("list[Feature]", self.list_of("features.json", "features"))

    @property
    def checks(self) -> list[Check]:
        return cast("list[Check]", self.list_of("checks.json", "checks"))

    @property
    def gates(self) -> list[SourceTable]:
        return cast("list[SourceTable]", self.list_of("gates.json", "gates"))

    @property
    def signatures(self) -> list[Signature]:
        return cast("list[Signature]", self.list_of("signatures.json", "signatures"))

    @property
    def launch(self) -> Launch:
        """launch.json: how `stackcheck gate` reads an SGLang command line (empty when not shipped)."""
        doc = self.doc("launch.json")
        return cast("Launch", doc if isinstance(doc, dict) else {})

    def launch_env(self) -> list[Any]:
        """launch.json's `env` entries (the variables that set a launch fact: verdicts.context.launch_env_fact), the
        one part of it a plan or an audit reads. While the shipped launch.json is not parsed, from a twin of that list
        alone (knowledge/prepared.py, `launch-env`, under launch.json's stamp and this module's: ~7 KB where the
        document's twin is ~0.85 MB, ~16 M instructions of marshal to read on the first run of `plan --want`), kept
        when it is made; else (parsed already, perhaps edited in memory, a user's document merged in, the caches off)
        from the document itself."""
        if "launch.json" in self._unparsed:
            memo = self.derived("launch-env")
            env = memo.get("env")
            if env is None:
                env = memo["env"] = self._kept_launch_env()
            if env is not None:
                return cast("list[Any]", env)
        env = self.launch.get("env")
        return env if isinstance(env, list) else []

    def _kept_launch_env(self) -> list[Any] | None:
        """launch.json's `env` entries from their twin, made and kept from the document where there is none yet;
        None when no twin can be kept (the document not as shipped, the caches off)."""
        from stackcheck.knowledge import prepared

        kept = prepared.kept_for(self, "launch-env", ("launch.json",), __file__)
        if kept is None:
            return None
        where, key, value = kept
        env = value.get("env") if value is not None else None
        if type(env) is list:
            return env
        env = self.launch.get("env")
        env = env if isinstance(env, list) else []
        prepared.keep(where, "launch-env", key, {"env": env})
        return env

    @property
    def recommend(self) -> Recommend:
        """recommend.json: the launch settings `stackcheck recommend` chooses from (empty when not shipped)."""
        doc = self.doc("recommend.json")
        return cast("Recommend", doc if isinstance(doc, dict) else {})

    @property
    def preflight(self) -> Preflight:
        """preflight.json: what the gate checks before exec beyond the feature tables (empty when not shipped)."""
        doc = self.doc("preflight.json")
        return cast("Preflight", doc if isinstance(doc, dict) else {})

    @property
    def architectures(self) -> list[Architecture]:
        return cast("list[Architecture]", self.list_of("architectures.json", "architectures"))

    @property
    def sources(self) -> dict[str, Any]:
        doc = self.doc("sources.json")
        if isinstance(doc, dict) and isinstance(doc.get("sources"), dict):
            return dict(doc["sources"])
        return {}

    @property
    def components(self) -> Components:
        doc = self.doc("components.json")
        return cast("Components", doc) if isinstance(doc, dict) else {}

    def package(self, name: str) -> Package:
        pkg = (self.components.get("packages") or {}).get(name)
        return pkg.copy() if pkg is not None else {}

    def releases(self, name: str) -> list[Release]:
        if name not in self._releases:
            self._releases[name] = list(self.package(name).get("releases") or [])
        return self._releases[name]

    def driver_cuda(self, version: str) -> str | None:
        """The highest CUDA a driver version supports, from components.json's CUDA releases and the minimum
        driver of each (None when the driver is older than every one of them)."""
        from stackcheck.facts.versions import compare_numeric, numeric_tuple

        best: tuple[tuple[int, ...], str] | None = None
        for rel in (self.components.get("cuda") or {}).get("releases") or []:
            need = rel.get("min_driver")
            if isinstance(need, str) and (compare_numeric(version, need) or 0) >= 0:
                t = numeric_tuple(str(rel.get("version")))
                if t is not None and (best is None or t > best[0]):
                    best = (t, str(rel.get("version")))
        return best[1] if best else None

    def newest_release(self, name: str) -> str | None:
        """The newest version of `name` the manifests record (PEP 440 order), once per package: the engine
        asks for every feature on every hypothetical stack the planner judges."""
        if name not in self._newest:
            from stackcheck.facts.versions import parse_version

            known = [v for v in (parse_version(r.get("version", "")) for r in self.releases(name)) if v is not None]
            self._newest[name] = str(max(known)) if known else None
        return self._newest[name]

    def newer_than_every_release(self, name: str, version: Any) -> bool:
        """Whether `version` (a parsed public version) is newer than every release of `name` the manifests record
        whose version is readable (False when none is): `version > parse_version(newest_release(name))`, read
        without parsing every release where one is not older: the releases are walked from the last (the manifests
        list them oldest first, so the first one read mostly decides), stopped at the first that `version` is not
        newer than. The engine asks it of every feature's packages on the box (iperf28: newest_release parsed the
        ~120 releases of four packages on every first run; tests/verdicts/test_newer_than_lean.py holds the two
        readings equal)."""
        from stackcheck.facts.versions import parse_version

        if name in self._newest:  # newest_release asked already: one comparison
            newest = self._newest[name]
            parsed = parse_version(newest) if newest is not None else None
            return parsed is not None and bool(version > parsed)
        seen = False
        for rel in reversed(self.releases(name)):
            v = parse_version(rel.get("version", ""))
            if v is None:
                continue
            if not version > v:
                return False
            seen = True
        return seen

    def release_by_version(self, name: str, version: Any) -> Release | None:
        """The first release of `name` whose version (parsed as written) equals `version` (a packaging
        Version), through an index built once: the engine looks releases up for every hypothetical stack."""
        index = self._by_version.get(name)
        if index is None:
            from stackcheck.facts.versions import parse_version

            index = {}
            for rel in self.releases(name):
                v = parse_version(str(rel.get("version", "")))
                if v is not None:
                    index.setdefault(v, rel)
            self._by_version[name] = index
        return index.get(version)

    def release_by_public(self, name: str, version: Any) -> Release | None:
        """The first release of `name` whose public version (local tag dropped) equals `version`."""
        index = self._by_public.get(name)
        if index is None:
            from stackcheck.facts.versions import public

            index = {}
            for rel in self.releases(name):
                v = public(str(rel.get("version", "")))
                if v is not None:
                    index.setdefault(v, rel)
            self._by_public[name] = index
        return index.get(version)

    def source_table_row(self, gate_id: str, version: str) -> SourceTableRelease | None:
        """The first row of a gate's release table whose `versions` admit `version` (memoised per pair)."""
        key = (gate_id, version)
        if key not in self._gate_rows:
            from stackcheck.facts.versions import version_in

            spec = self.source_table(gate_id) or {}
            self._gate_rows[key] = next(
                (r for r in spec.get("releases") or [] if version_in(version, str(r.get("versions", "")))),
                None,
            )
        return self._gate_rows[key]

    def source_table(self, gate_id: str) -> SourceTable | None:
        if self._gate_index is None:
            self._gate_index = {str(g.get("id")): g for g in self.gates}
        return self._gate_index.get(gate_id)


def pypi_variant(release: Mapping[str, Any] | None) -> str | None:
    """The CUDA variant of a release's untagged (PyPI) wheel, as a components.json release records it:
    `pypi_variant`, else the variant marked `pypi`."""
    if release is None:
        return None
    if isinstance(release.get("pypi_variant"), str):
        return str(release["pypi_variant"])
    for v in release.get("variants") or []:
        if isinstance(v, dict) and v.get("pypi"):
            return str(v.get("variant"))
    return None


def _read(origin: str, path: str) -> str:
    """A shipped file's text, read when its document is first used (load() took its stamp before)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError([f"{origin}: cannot be read: {exc}"]) from None


def _parse(text: str, origin: str, check_depth: bool = True) -> Any:
    try:
        doc = lean_json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise ManifestError([f"{origin}: JSON nested too deeply (more than {MAX_MANIFEST_DEPTH} levels)"]) from None
    except ValueError as exc:
        if lean_json.is_decode_error(exc):  # (json.JSONDecodeError)
            where = f"line {exc.lineno} column {exc.colno}"  # type: ignore[attr-defined]
            raise ManifestError([f"{origin}: {where}: not valid JSON: {exc.msg}"]) from None  # type: ignore[attr-defined]
        raise ManifestError([f"{origin}: not valid JSON: {exc}"]) from None
    path = too_deep(doc, MAX_MANIFEST_DEPTH) if check_depth else None
    if path is not None:
        raise ManifestError([f"{origin}: {path}: nested more than {MAX_MANIFEST_DEPTH} levels deep; refused"])
    return doc


def too_deep(doc: Any, limit: int) -> str | None:
    """The JSON path of the first value nested deeper than `limit`, else None (iterative: no recursion)."""
    stack: list[tuple[Any, int, str]] = [(doc, 1, "$")]
    while stack:
        value, depth, path = stack.pop()
        if depth > limit:
            return path
        if isinstance(value, dict):
            stack.extend((v, depth + 1, f"{path}.{k}") for k, v in value.items() if isinstance(v, dict | list))
        elif isinstance(value, list):
            stack.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(value) if isinstance(v, dict | list))
    return None


def _no_constant(value: str) -> Any:
    raise ValueError(f"non-standard JSON constant {value}")


def user_texts(directory: Path) -> dict[str, tuple[str, str]]:
    """Read a user's manifest directory safely: only *.json files directly inside it, no symlink or
    `..` escapes, bounded size, UTF-8 only. Every problem is collected, then raised together."""
    problems: list[str] = []
    out: dict[str, tuple[str, str]] = {}
    try:
        base = directory.resolve(strict=True)
    except FileNotFoundError:
        raise ManifestError([f"{directory}: manifest directory does not exist"]) from None
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic-link loop (Python < 3.13)
        raise ManifestError([f"{directory}: cannot open: {getattr(exc, 'strerror', None) or 'link loop'}"]) from None
    if not base.is_dir():
        raise ManifestError([f"{directory}: not a directory"])
    try:
        entries = sorted(base.iterdir())
    except OSError as exc:
        raise ManifestError([f"{directory}: cannot list: {exc.strerror or exc}"]) from None
    for entry in entries:
        if entry.suffix != ".json":
            continue
        origin = str(directory / entry.name)
        if entry.name not in MANIFEST_FILES:
            problems.append(f"{origin}: unknown manifest file (expected one of {', '.join(MANIFEST_FILES)})")
            continue
        try:
            real = entry.resolve(strict=True)
        except FileNotFoundError:
            problems.append(f"{origin}: dangling link")
            continue
        except (OSError, RuntimeError):  # RuntimeError: a symbolic-link loop (Python < 3.13)
            problems.append(f"{origin}: a symbolic-link loop or an unreadable link; refused")
            continue
        if real.parent != base:
            problems.append(f"{origin}: resolves outside the manifest directory ({real}); refused")
            continue
        try:
            data = read_regular(real, MAX_MANIFEST_BYTES)
        except NotRegular:
            problems.append(f"{origin}: not a regular file (a FIFO, a device or a directory); refused")
            continue
        except TooLarge:
            problems.append(f"{origin}: larger than {MAX_MANIFEST_BYTES} bytes; refused")
            continue
        except OSError as exc:
            problems.append(f"{origin}: cannot read: {exc.strerror or exc}")
            continue
        try:
            out[entry.name] = (origin, data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            problems.append(f"{origin}: byte {exc.start}: not UTF-8 text")
    if problems:
        raise ManifestError(problems)
    return out


class NotRegular(OSError):
    """A FIFO, a device, a socket or a directory where a regular file was expected (never opened)."""


class TooLarge(OSError):
    """A file larger than the cap for its kind."""


def read_regular(path: Path | str, limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes. Anything else is refused before it is read:
    a FIFO is opened without blocking and checked again on the open descriptor, so it cannot hang us."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegular(f"{path}: not a regular file")
        if st.st_size > limit:
            raise TooLarge(f"{path}: larger than {limit} bytes")
        chunks: list[bytes] = []
        total = 0
        while True:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # grew while being read
                raise TooLarge(f"{path}: larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(fd)


# --- merging -------------------------------------------------------------------------------------

_LIST_KEYS = {
    "features.json": "features",
    "checks.json": "checks",
    "gates.json": "gates",
    "signatures.json": "signatures",
    "architectures.json": "architectures",
}


def _merge_by_id(base: list[Any], extra: list[Any], key: str = "id") -> list[Any]:
    index = {item.get(key): i for i, item in enumerate(base) if isinstance(item, dict)}
    out = list(base)
    for item in extra:
        if isinstance(item, dict) and item.get(key) in index:
            out[index[item[key]]] = item
        else:
            out.append(item)
    return out


def merge_docs(name: str, base: Any, extra: Any) -> Any:
    """Merge a user's document over the shipped one: entries with the same id are replaced."""
    if not isinstance(base, dict) or not isinstance(extra, dict):
        return extra
    merged = dict(base)
    if name in _LIST_KEYS:
        key = _LIST_KEYS[name]
        merged[key] = _merge_by_id(list(base.get(key) or []), list(extra.get(key) or []))
        for k, v in extra.items():
            if k != key:
                merged[k] = v
        return merged
    if name == "recommend.json":  # two lists, each merged by id
        for key in ("decisions", "never"):
            merged[key] = _merge_by_id(list(base.get(key) or []), list(extra.get(key) or []))
        return merged
    if name == "sources.json":
        merged["sources"] = {**(base.get("sources") or {}), **(extra.get("sources") or {})}
        return merged
    if name == "components.json":
        for section, value in extra.items():
            if section == "packages" and isinstance(value, dict):
                pkgs = dict(merged.get("packages") or {})
                for pkg, spec in value.items():
                    old = pkgs.get(pkg)
                    if isinstance(old, dict) and isinstance(spec, dict):
                        new = {**old, **{k: v for k, v in spec.items() if k != "releases"}}
                        new["releases"] = _merge_by_id(
                            list(old.get("releases") or []), list(spec.get("releases") or []), "version"
                        )
                        pkgs[pkg] = new
                    else:
                        pkgs[pkg] = spec
                merged["packages"] = pkgs
            else:
                merged[section] = value
        return merged
    merged.update(extra)
    return merged


def _parse_all(texts: Mapping[str, tuple[str, str]], check_depth: bool = True) -> tuple[dict[str, Any], list[str]]:
    docs: dict[str, Any] = {}
    problems: list[str] = []
    for name, (origin, text) in texts.items():
        try:
            docs[name] = _parse(text, origin, check_depth)
        except ManifestError as exc:
            problems.extend(exc.problems)
    return docs, problems


def user_dirs(explicit: Iterable[str | Path] | None, env: Mapping[str, str] | None = None) -> list[Path]:
    env = os.environ if env is None else env
    named: list[str | Path] = list(explicit or [])
    if not named and env.get(ENV_VAR):
        named = [p for p in env[ENV_VAR].split(os.pathsep) if p]
    if not named:
        return []
    from pathlib import Path  # only a user's directory pays for it

    dirs = [Path(d) for d in named]
    return dirs


def _loaded_texts(texts_out: list[str] | None) -> Manifests:
    """The shipped manifests from their texts (importlib.resources: the package is not a directory)."""
    shipped = shipped_texts()
    if texts_out is not None:
        for origin, text in shipped.values():
            texts_out += (origin, text)
    return Manifests(origins={k: [v[0]] for k, v in shipped.items()}, unparsed=shipped)


def load(
    user: Iterable[str | Path] | None = None, env: Mapping[str, str] | None = None, texts_out: list[str] | None = None
) -> Manifests:
    """The shipped manifests merged with the user's directories (validated in full). `texts_out`, when
    given, receives each file's origin and text in the order they were merged (the plan cache's key); for a
    shipped file in the package directory, its stamp (package_data.shipped_files) in place of its text, which
    is read only when its document is first used."""
    files = shipped_files()
    if files is not None:
        if texts_out is not None:
            for origin, _path, stamp in files.values():
                texts_out += (origin, stamp)
        m = Manifests(
            origins={k: [v[0]] for k, v in files.items()},
            unread={k: (v[0], v[1]) for k, v in files.items()},
            stamps={k: v[2] for k, v in files.items()},
        )
    else:
        m = _loaded_texts(texts_out)
    # the shipped files' nesting is the tests' to check (test_manifests): walking ~550 kB of JSON for it at
    # every start cost more than parsing it. They are parsed when first read (Manifests.doc); one that is
    # not JSON (a broken installation) is still a manifest error, with the file, where it is read.
    for directory in user_dirs(user, env):
        texts = user_texts(directory)
        if texts_out is not None:
            for origin, text in texts.values():
                texts_out += (origin, text)
        udocs, uproblems = _parse_all(texts)
        if uproblems:
            raise ManifestError(uproblems)
        from stackcheck.knowledge.validate import validate_documents

        problems = validate_documents({name: (texts[name][0], doc) for name, doc in udocs.items()}, partial=True)
        if problems:
            raise ManifestError(problems)
        for name, doc in udocs.items():
            m.docs[name] = merge_docs(name, m.docs.get(name), doc)
            m.origins.setdefault(name, []).append(texts[name][0])
    return m
