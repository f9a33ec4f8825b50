"""Sources in one shape: every `source` a stackcheck document carries (outside `facts`) is a list of
`{"id", "title", "url"}`, whatever the manifest wrote (an id of sources.json, an inline `{title, url}`, a
repository file `{repo, path, ref}`, or a list of those).

The id is what the text formats print (`sglang-0.5.9:all_reduce_utils.py`, `sglang#24548`, `BW-COMPAT`);
`--sources` and the JSON carry the title and the address. An id of sources.json is kept as it is; an inline
source gets an id derived from its title or address, the same every time, so one document cited from
several rules reads the same everywhere:

- a file of a released wheel (`sglang 0.5.9 wheel, sglang/srt/.../all_reduce_utils.py`) ->
  `sglang-0.5.9:all_reduce_utils.py`
- a GitHub issue or pull request -> `sglang#24548`; a file at a ref -> `flashinfer:comm.py@v0.6.17`
- anything else -> the first words of its title (`nccl-documentation-troubleshooting`).

Pure: no I/O. The catalogue (Manifests.sources) is passed in where ids are to be resolved."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:  # a source reference's shape, for the type checker (a plain dict at run time)
    from typing import Any, TypedDict

    class SourceRef(TypedDict):
        id: str
        title: str
        url: str | None


#: keys whose value is a manifest source, in every document stackcheck writes (outside `facts`)
SOURCE_KEYS = ("source", "evidence")
#: subtrees that are not manifest knowledge: the box's own facts ("source": "nvml") and probe outcomes
SKIP_KEYS = frozenset({"facts", "probes"})

#: the patterns an inline source's id is derived by; each is read by string methods below (`_wheels_range`,
#: `_wheel`, `_github_thread`, `_github_file`, `_slug`, `_is_commit`), held equal to its pattern in tests: compiling
#: them cost a first run about 0.5 ms
WHEEL = (
    r"^(?P<pkg>[A-Za-z][\w.-]*) (?:wheels? )?(?P<ver>\d[\w.+]*(?:(?: \.\.\. |-)\d[\w.+]*)?)"
    r"(?: wheels?)?(?: from PyPI)?[,:]? (?P<path>[\w./-]+\.\w+)"
)
WHEELS_RANGE = r"^(?P<pkg>[A-Za-z][\w.-]*) wheels (?P<ver>\d[\w.]*-\d[\w.]*)(?: from PyPI)?, (?P<path>[\w./-]+\.\w+)"
GITHUB_THREAD = r"^https?://github\.com/[^/]+/(?P<repo>[^/]+)/(?:issues|pull)/(?P<n>\d+)"
GITHUB_FILE = r"^https?://github\.com/[^/]+/(?P<repo>[^/]+)/blob/(?P<ref>[^/]+)/(?P<path>.+)$"
SLUG = r"[^a-z0-9.]+"
COMMIT = r"[0-9a-f]{12,40}"

#: the same patterns compiled on first use: derived_id reads by them once they are compiled (a probed audit compiles
#: them in its loading thread: commands/audit.py) or once _STRING_READS ids were read by string methods in this
#: process (a reading costs ~0.05M instructions more than a match, a compiled pattern ~1M: an audit derives some 200
#: ids, a plan 1-11)
_WHEELS_RANGE = lazy(WHEELS_RANGE)
_WHEEL = lazy(WHEEL)
_GITHUB_THREAD = lazy(GITHUB_THREAD)
_GITHUB_FILE = lazy(GITHUB_FILE)
_SLUG = lazy(SLUG)
_STRING_READS = 12
_READ_BY_STRINGS = [0]  # ids derived by the string readings in this process


def _by_patterns() -> bool:
    """Whether derived_id reads by the compiled patterns now (see _STRING_READS); else it counts one string read."""
    if getattr(_WHEEL, "_compiled", True) is not None or _READ_BY_STRINGS[0] >= _STRING_READS:
        return True
    _READ_BY_STRINGS[0] += 1
    return False


_ASCII_LETTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_SLUG_KEPT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.")
_HEX = frozenset("0123456789abcdef")


def _word(c: str) -> bool:
    """`\\w` of a str pattern: a Unicode letter, digit or number, or the underscore."""
    return c.isalnum() or c == "_"


def _in_class(text: str, extra: str) -> bool:
    """Every character of a non-empty text is one of `[\\w<extra>]` (the underscore and extra read as letters, so
    that str.isalnum, one C call, answers)."""
    text = text.replace("_", "a")
    for c in extra:
        text = text.replace(c, "a")
    return text.isalnum()


def _run(text: str, i: int, extra: str) -> int:
    """The end of the run of `[\\w<extra>]` characters from i."""
    end = len(text)
    for stop in (" ", ",", ":"):  # (the usual ends of a run, none of them in a class: checked in one C call)
        at = text.find(stop, i)
        if i <= at < end:
            end = at
    if i >= end or _in_class(text[i:end], extra):
        return end
    j = i
    while j < end and (_word(text[j]) or text[j] in extra):
        j += 1
    return j


def _path_at(text: str, i: int) -> str | None:
    """`[\\w./-]+\\.\\w+` matched at i (the longest head before a dot that a word follows, as the pattern's
    backtracking finds it), or None."""
    end = _run(text, i, "./-")
    k = text.rfind(".", i + 1, end - 1)
    while k > i:
        if _word(text[k + 1]):
            return text[i : _run(text, k + 1, "")]
        k = text.rfind(".", i + 1, k)
    return None


def _package_at(title: str) -> int:
    """The end of `^[A-Za-z][\\w.-]*` followed by a space (the space's index), or -1."""
    if not title or title[0] not in _ASCII_LETTERS:
        return -1
    i = _run(title, 1, ".-")
    return i if title[i : i + 1] == " " else -1


def _version_at(title: str, i: int, extra: str, joins: tuple[str, ...], joined: bool) -> list[int]:
    """Where `\\d[\\w<extra>]*` then a join (one of joins) and another such run may end from i, in the order the
    pattern tries them (joined: the second run is required, else optional and tried first)."""
    if not title[i : i + 1].isdecimal():
        return []
    first = _run(title, i + 1, extra)
    ends = []
    for join in joins:
        j = first + len(join)
        if title.startswith(join, first) and title[j : j + 1].isdecimal():
            ends.append(_run(title, j + 1, extra))
            break
    return ends if joined else [*ends, first]


def _wheels_range(title: str) -> tuple[str, str, str] | None:
    """`WHEELS_RANGE`'s match of title: (pkg, ver, path), or None."""
    p = _package_at(title)
    if p < 0 or not title.startswith(" wheels ", p):
        return None
    v = p + len(" wheels ")
    for end in _version_at(title, v, ".", ("-",), True):
        for tail in (" from PyPI, ", ", "):
            if title.startswith(tail, end):
                path = _path_at(title, end + len(tail))
                if path is not None:
                    return title[:p], title[v:end], path
    return None


def _wheel(title: str) -> tuple[str, str, str] | None:
    """`WHEEL`'s match of title: (pkg, ver, path), or None."""
    p = _package_at(title)
    if p < 0:
        return None
    for head in ("wheels ", "wheel ", ""):
        if not title.startswith(head, p + 1):
            continue
        v = p + 1 + len(head)
        for end in _version_at(title, v, ".+", (" ... ", "-"), False):
            for word in (" wheels", " wheel", ""):
                if not title.startswith(word, end):
                    continue
                for pypi in (" from PyPI", ""):
                    at = end + len(word)
                    if not title.startswith(pypi, at):
                        continue
                    at += len(pypi)
                    for sep in ((title[at],) if title[at : at + 1] in (",", ":") else ()) + ("",):
                        if title.startswith(sep + " ", at):
                            path = _path_at(title, at + len(sep) + 1)
                            if path is not None:
                                return title[:p], title[v:end], path
    return None


def _github_rest(url: str) -> str | None:
    """What follows `^https?://github\\.com/[^/]+/`, or None."""
    for scheme in ("https://github.com/", "http://github.com/"):
        if url.startswith(scheme):
            owner_end = url.find("/", len(scheme))
            return url[owner_end + 1 :] if owner_end > len(scheme) else None
    return None


def _github_thread(url: str) -> tuple[str, str] | None:
    """`GITHUB_THREAD`'s match of url: (repo, n), or None."""
    rest = _github_rest(url)
    if rest is None:
        return None
    repo, _, tail = rest.partition("/")
    if not repo or not _:
        return None
    for kind in ("issues/", "pull/"):
        if tail.startswith(kind):
            i = j = len(kind)
            while j < len(tail) and tail[j].isdecimal():
                j += 1
            return (repo, tail[i:j]) if j > i else None
    return None


def _github_file(url: str) -> tuple[str, str, str] | None:
    """`GITHUB_FILE`'s match of url: (repo, ref, path), or None (`.+$`: no line break but one at the very end)."""
    rest = _github_rest(url)
    if rest is None:
        return None
    repo, _, tail = rest.partition("/")
    if not repo or not tail.startswith("blob/"):
        return None
    ref, _, path = tail[len("blob/") :].partition("/")
    if not ref or not _:
        return None
    if path.endswith("\n"):
        path = path[:-1]
    return (repo, ref, path) if path and "\n" not in path else None


class _SlugTable(dict[int, str]):
    """str.translate's table for `_slug`: a kept character stands for itself, any other for a dash (learned on
    its first lookup)."""

    def __missing__(self, key: int) -> str:
        got = self[key] = chr(key) if chr(key) in _SLUG_KEPT else "-"
        return got


_SLUG_TABLE = _SlugTable()


def _slug(text: str) -> str:
    """`SLUG`'s substitution by a dash: each run of characters outside [a-z0-9.] becomes one dash."""
    dashed = text.translate(_SLUG_TABLE)
    core = "-".join(p for p in dashed.split("-") if p)
    if not core:
        return "-" if dashed else ""
    return ("-" if dashed[0] == "-" else "") + core + ("-" if dashed[-1] == "-" else "")


def _is_commit(ref: str) -> bool:
    """`COMMIT`'s fullmatch: 12 to 40 lowercase hexadecimal digits."""
    return 12 <= len(ref) <= 40 and all(c in _HEX for c in ref)


def _short_ref(ref: str) -> str:
    return ref[:10] if _is_commit(ref) else ref


def derived_id(src: Mapping[str, Any]) -> str:
    """The id of an inline source (see the module docstring)."""
    title = str(src.get("title") or "")
    url = str(src.get("url") or "")
    if src.get("repo"):
        repo = str(src["repo"]).rsplit("/", 1)[-1]
        base = str(src.get("path") or "").rsplit("/", 1)[-1]
        ref = _short_ref(str(src.get("ref") or ""))
        return f"{repo}:{base}" + (f"@{ref}" if ref else "") if base else f"{repo}@{ref}"
    if _by_patterns():
        for pattern in (_WHEELS_RANGE, _WHEEL):
            m = pattern.match(title)
            if m:
                ver = m.group("ver").replace(" ... ", "..")
                return f"{m.group('pkg').lower()}-{ver}:{m.group('path').rsplit('/', 1)[-1]}"
        m = _GITHUB_THREAD.match(url)
        if m:
            return f"{m.group('repo')}#{m.group('n')}"
        m = _GITHUB_FILE.match(url)
        if m:
            return f"{m.group('repo')}:{m.group('path').rsplit('/', 1)[-1]}@{_short_ref(m.group('ref'))}"
        return _slug_id(_SLUG.sub("-", title.lower()), url)
    for reading in (_wheels_range, _wheel):
        got = reading(title)
        if got:
            pkg, ver, path = got
            return f"{pkg.lower()}-{ver.replace(' ... ', '..')}:{path.rsplit('/', 1)[-1]}"
    thread = _github_thread(url)
    if thread:
        return f"{thread[0]}#{thread[1]}"
    file = _github_file(url)
    if file:
        return f"{file[0]}:{file[2].rsplit('/', 1)[-1]}@{_short_ref(file[1])}"
    return _slug_id(_slug(title.lower()), url)


def _slug_id(slugged: str, url: str) -> str:
    """The id of a source no other shape matched: the first words of its title (SLUG's dashes), else its address."""
    words = slugged.strip("-.").split("-")
    slug = ""
    for w in words:
        if slug and len(slug) + len(w) + 1 > 40:
            break
        slug = f"{slug}-{w}" if slug else w
    if slug:
        return slug
    return url.split("://", 1)[-1].strip("/") or "unnamed-source"


def _url_of(entry: Mapping[str, Any]) -> str | None:
    if entry.get("url"):
        return str(entry["url"])
    repo, path, ref = entry.get("repo"), entry.get("path"), entry.get("ref")
    if repo and path:
        return f"https://github.com/{repo}/blob/{ref or 'HEAD'}/{path}"
    if repo:
        return f"https://github.com/{repo}"
    return None


def _title_of(entry: Mapping[str, Any]) -> str:
    if entry.get("title"):
        title = str(entry["title"])
        if entry.get("repo") and entry.get("path"):
            title += f" ({entry['repo']}/{entry['path']}@{entry.get('ref') or 'HEAD'})"
        return title
    if entry.get("repo"):
        return f"{entry['repo']}/{entry.get('path', '')}@{entry.get('ref') or 'HEAD'}".replace("/@", "@")
    return str(entry.get("url") or "untitled")


def refs(source: Any, catalogue: Mapping[str, Any] | None = None) -> list[SourceRef]:
    """Any source value as a list of refs (an already normalised list passes through unchanged)."""
    if source is None:
        return []
    items: Iterable[Any] = source if isinstance(source, list | tuple) else [source]
    out: list[SourceRef] = []
    for item in items:
        if isinstance(item, str):
            entry = (catalogue or {}).get(item)
            if isinstance(entry, Mapping):
                out.append({"id": item, "title": _title_of(entry), "url": _url_of(entry)})
            else:
                out.append({"id": item, "title": item, "url": None})
        elif isinstance(item, Mapping):
            if isinstance(item.get("id"), str) and "title" in item and "url" in item and len(item) == 3:
                out.append({"id": str(item["id"]), "title": str(item["title"]), "url": item["url"]})
            else:
                out.append(_inline_ref(item))
        elif isinstance(item, list | tuple):
            out.extend(refs(list(item), catalogue))
    return out


#: inline source -> its ref, by the only keys derived_id, _title_of and _url_of read: a report repeats the same
#: sources over many verdicts, and deriving an id runs up to four regular expressions
_INLINE_KEYS = ("title", "url", "repo", "path", "ref")
_INLINE: dict[tuple[Any, ...], SourceRef] = {}


def _inline_ref(item: Mapping[str, Any]) -> SourceRef:
    key = tuple(item.get(k) for k in _INLINE_KEYS)
    try:
        ref = _INLINE.get(key)
    except TypeError:  # a value that cannot be a key (a list where a string belongs): derived each time
        return {"id": derived_id(item), "title": _title_of(item), "url": _url_of(item)}
    if ref is None:
        if len(_INLINE) >= 4096:
            _INLINE.clear()
        ref = _INLINE[key] = {"id": derived_id(item), "title": _title_of(item), "url": _url_of(item)}
    return {"id": ref["id"], "title": ref["title"], "url": ref["url"]}  # a new dict: callers may change theirs


def ids(source: Any) -> list[str]:
    """The ids of a source value, in order, without repeats (no catalogue needed)."""
    seen: list[str] = []
    for r in refs(source):
        if r["id"] not in seen:
            seen.append(r["id"])
    return seen


def source_tag(source: Any) -> str:
    """`(id)` or `(id +2)`: the first source's id and how many more (`--sources` lists them all). Here, not in
    render.text, so that the gate's text does not import the report's renderer for it."""
    found = ids(source)
    if not found:
        return ""
    return f"({found[0]}" + (f" +{len(found) - 1}" if len(found) > 1 else "") + ")"


def normalize(doc: Any, catalogue: Mapping[str, Any] | None = None) -> Any:
    """A copy of `doc` in which every `source` / `evidence` value (outside `facts` and `probes`) is a list
    of refs; everything else is shared, not copied."""
    if isinstance(doc, dict):
        out: dict[str, Any] = {}
        for k, v in doc.items():
            if k in SKIP_KEYS:
                out[k] = v
            elif k in SOURCE_KEYS and (v is None or isinstance(v, str | dict | list)):
                out[k] = refs(v, catalogue)  # none at all is an empty list, never null
            else:
                out[k] = normalize(v, catalogue)
        return out
    if isinstance(doc, list):
        return [normalize(v, catalogue) for v in doc]
    return doc


def collect(doc: Any, found: dict[str, SourceRef] | None = None) -> dict[str, SourceRef]:
    """Every ref in a normalised document, by id, in the order first met (for `--sources`)."""
    found = {} if found is None else found
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k in SKIP_KEYS:
                continue
            if k in SOURCE_KEYS and isinstance(v, list):
                for r in refs(v):
                    found.setdefault(r["id"], r)
            else:
                collect(v, found)
    elif isinstance(doc, list):
        for v in doc:
            collect(v, found)
    return found
