"""Versions as they appear on a GPU box: PEP 440 package versions with local tags (2.9.1+cu130),
driver versions (580.159.04), CUDA versions (13.0, 13.0.88) and CUDA wheel tags (cu130).

Everything here is total: a string that cannot be read gives None, never an exception.
"""

from __future__ import annotations

import re
from functools import lru_cache

from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from stackcheck.facts.pep440 import Version

    #: _plain's reading: (release without trailing zeros, pre, post, dev, local tag)
    _Plain = tuple[tuple[int, ...], tuple[str, int] | None, int | None, int | None, str | None]

# Specifier sets are matched here rather than with packaging.specifiers: importing that module pulls in
# packaging.tags and sysconfig, which costs tens of milliseconds at start-up (measured: 47 ms on the H200
# machine), and the audit runs before every server launch. tests/facts/test_versions.py checks this against
# packaging.specifiers.SpecifierSet.contains(..., prereleases=True) on generated versions and specifiers.
_CLAUSE = lazy(r"^\s*(~=|===|==|!=|<=|>=|<|>)\s*([^\s,;]+)\s*$")

_CUDA_TAG = lazy(r"^cu(\d{2,3})$")
_TORCH_BUILD_TAG = lazy(r"^cu\d{2,3}torch(\d+\.\d+)$")
_PYTORCH_BUILD_TAG = lazy(r"^(?:cu\d{2,3}|cpu|rocm\d+(?:\.\d+)*|xpu)$")
_NUMERIC = lazy(r"^\d+(\.\d+)*$")
#: a version's first two numbers (minor_of)
_LEADING_MINOR = lazy(r"(\d{1,9})\.(\d{1,9})")
#: a version already written as packaging writes it, each part read as packaging reads it: release, an
#: optional aN/bN/rcN, .postN and .devN, then a local tag of lowercase letters and digits joined by dots whose
#: all-digit parts have no leading zero (so the tag is packaging's normalised one). `_plain` reads these
#: without building a Version; anything else goes to pep440.Version (packaging's reading, without its import).
_PLAIN = lazy(
    r"([0-9]+(?:\.[0-9]+)*)(?:(a|b|rc)([0-9]+))?(?:\.post([0-9]+))?(?:\.dev([0-9]+))?"
    r"(?:\+((?:[0-9]*[a-z][a-z0-9]*|0|[1-9][0-9]*)(?:\.(?:[0-9]*[a-z][a-z0-9]*|0|[1-9][0-9]*))*))?",
    re.ASCII,
)


@lru_cache(maxsize=4096)
def parse_version(text: str) -> Version | None:
    """A PEP 440 version, or None. '2.9.1+cu130' keeps its local tag; use `public()` to drop it."""
    if not isinstance(text, str) or len(text) > 200:
        return None
    from stackcheck.facts.pep440 import InvalidVersion, Version  # (packaging's reading, without its import)

    groups = _plain_groups(text)
    if groups is not None:  # written in normal form (most versions are): built from its parts, the full pattern unused
        return Version.normal(*groups)
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _ascii_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _plain_groups(text: str) -> tuple[str, str | None, str | None, str | None, str | None, str | None] | None:
    """`_PLAIN.fullmatch(text).groups()` (release, a|b|rc, its number, post, dev, local tag), None where it does not
    match, read by string methods from the right (each part starts with a mark no part before it can hold: `+`,
    `.dev`, `.post`, a pre-release's letters), so that neither the pattern (~0.25 ms to compile on the 2-core box: the
    manifests' `4.0.0b10` and `0.6.4.post1` on a plan's first run) nor a Version's full pattern is compiled
    (tests/facts/test_string_readings.py holds the two equal on generated texts)."""
    head, plus, local = text.partition("+")
    if plus:
        for seg in local.split("."):  # lowercase letters and digits: one with a letter, or digits without a leading 0
            if not (seg.isascii() and seg.isalnum() and seg == seg.lower()):
                return None
            if seg.isdigit() and len(seg) > 1 and seg[0] == "0":
                return None
    parts: list[str | None] = []
    for mark in (".dev", ".post"):
        at = head.rfind(mark)
        number = head[at + len(mark) :] if at >= 0 else None
        if number is not None and not _ascii_digits(number):
            return None
        parts.append(number)
        if at >= 0:
            head = head[:at]
    dev, post = parts
    end = len(head)
    while end and head[end - 1].isascii() and head[end - 1].isdigit():
        end -= 1
    pre = pre_n = None
    if end < len(head):  # digits at the end: a pre-release's number where its letters come before them
        for letters in ("rc", "a", "b"):
            if head.endswith(letters, 0, end):
                pre, pre_n, head = letters, head[end:], head[: end - len(letters)]
                break
    if not all(_ascii_digits(n) for n in head.split(".")):
        return None
    return head, pre, pre_n, post, dev, local if plus else None


@lru_cache(maxsize=4096)
def _plain(text: str) -> _Plain | None:
    """(release without trailing zeros, pre, post, dev, local tag) of a version in _PLAIN's form, read as
    packaging reads it (two of these are equal exactly when packaging's Versions are); None for any other text,
    which the caller then gives to pep440.Version."""
    groups = _plain_groups(text) if len(text) <= 200 else None
    if groups is None:
        return None
    release, pre, pre_n, post, dev, local = groups
    parts = [int(p) for p in release.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return (
        tuple(parts),
        (pre, int(pre_n)) if pre and pre_n is not None else None,
        int(post) if post is not None else None,
        int(dev) if dev is not None else None,
        local,
    )


def readable(text: str) -> bool:
    """`parse_version(text) is not None`, without building a Version for a version in _PLAIN's form."""
    return isinstance(text, str) and (_plain(text) is not None or parse_version(text) is not None)


def same_public(a: str, b: str) -> bool:
    """`public(a) == public(b)` (so also True when neither is a version), without building Versions when
    both are written in _PLAIN's form."""
    pa = _plain(a) if isinstance(a, str) else None
    pb = _plain(b) if isinstance(b, str) and pa is not None else None
    if pa is not None and pb is not None:
        return pa[:4] == pb[:4]
    return public(a) == public(b)


@lru_cache(maxsize=4096)
def public(text: str) -> Version | None:
    """The version without its local tag: '2.9.1+cu130' -> 2.9.1."""
    v = parse_version(text)
    if v is None:
        return None
    return parse_version(v.public)  # (Version(v.public), built from its normal form's parts)


def _quick_plain(text: str) -> _Plain | None:
    """_plain's reading of its commonest texts (N(.N)* with an optional local tag: 2.11.0, 2.9.1+cu130) by
    string methods, compiling no pattern (_PLAIN's compile costs ~3 ms of CPU on the 2-core box, in a probe's
    thread); None for any other text, which _plain reads."""
    if len(text) > 200:
        return None
    release, plus, local = text.partition("+")
    parts = release.split(".")
    if not all(p.isascii() and p.isdigit() for p in parts):
        return None
    if plus:
        for seg in local.split("."):  # lowercase letters and digits, with a letter or without a leading zero
            if not (seg.isascii() and seg.isalnum() and seg == seg.lower()):
                return None
            if seg.isdigit() and len(seg) > 1 and seg[0] == "0":
                return None
    numbers = [int(p) for p in parts]
    while numbers and numbers[-1] == 0:
        numbers.pop()
    return (tuple(numbers), None, None, None, local if plus else None)


def _public_order(plain: _Plain) -> tuple[Any, ...]:
    """A key that orders the public versions of `_plain` results as packaging.version.Version orders them
    (its _cmpkey: a dev release of no pre- or post-release before any pre-release, no pre-release after every
    one, no post-release before any, no dev release after every one)."""
    release, pre, post, dev, _local = plain
    if pre is None and post is None and dev is not None:
        pre_key: tuple[Any, ...] = (0,)
    elif pre is None:
        pre_key = (2,)
    else:
        pre_key = (1, *pre)  # "a" < "b" < "rc", as packaging compares the normalised letters
    return (release, pre_key, -1 if post is None else post, (1,) if dev is None else (0, dev))


def _either_plain(text: object) -> _Plain | None:
    if not isinstance(text, str):
        return None
    quick = _quick_plain(text)
    return quick if quick is not None else _plain(text)


def newer_than_all(version: str, known: Iterable[str]) -> bool:
    """`public(version) > max(parse_version(k) for each readable k)`, False when none is readable or `version`
    is not. Read without a Version (packaging's import, its version pattern compiled, cost ~10 ms of CPU in the
    thread of the probe that asks: measured on the 2-core box) when every text is in _PLAIN's form and no known
    one has a local tag; otherwise parse_version's Versions (pep440.Version, packaging's reading) decide.
    tests/facts/test_versions_newer.py compares the two with packaging on generated versions."""
    texts = list(known)
    mine = _either_plain(version)
    plains = [_either_plain(t) for t in texts]
    if mine is not None and all(p is not None and p[4] is None for p in plains):
        return bool(plains) and _public_order(mine) > max(_public_order(p) for p in plains if p is not None)
    parsed = [parse_version(t) for t in texts]
    versions = [v for v in parsed if v is not None]
    installed = public(version)
    return bool(versions) and installed is not None and installed > max(versions)


def candidates_of(entry: object) -> list[str] | None:
    """The releases a package entry of the facts (`packages.NAME`) narrows an unknown version to: its `candidates`,
    in their order with repeats dropped, where that is a non-empty list whose every entry is a readable version;
    None otherwise (not a mapping, no list, an empty one, or one entry that is not a version: the whole list is then
    not used, fail safe). Read so by the engine's sweep (package_candidates) and the package checks alike."""
    values = entry.get("candidates") if isinstance(entry, dict) else None
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(v, str) and parse_version(v) is not None for v in values):
        return None
    return list(dict.fromkeys(values))


def local_tag(text: str) -> str | None:
    plain = _plain(text) if isinstance(text, str) else None
    if plain is not None:
        return plain[4]
    v = parse_version(text)
    return v.local if v is not None else None


#: _CLAUSE's operators, in its alternation's order
_OPERATORS = ("~=", "===", "==", "!=", "<=", ">=", "<", ">")


def _clause_groups(part: str) -> tuple[str, str] | None:
    """`_CLAUSE.match(part).groups()` (operator, version), None where it does not match, by string methods: the
    operators tried in the pattern's order, the first whose rest is one word of no whitespace, `,` or `;` (the
    pattern's backtracking: `<= ` with nothing after it is `<` and `=`). No pattern compiled on a plan's first run
    (tests/facts/test_string_readings.py holds the two equal on generated texts)."""
    t = part.strip()
    for op in _OPERATORS:
        if t.startswith(op):
            rest = t[len(op) :].lstrip()
            if rest and not any(c.isspace() or c in ",;" for c in rest):
                return op, rest
    return None


@lru_cache(maxsize=1024)
def parse_specifier(text: str) -> tuple[tuple[str, str], ...] | None:
    """A PEP 440 specifier set as (operator, version) clauses; None if it is not valid. '' admits anything."""
    if not isinstance(text, str) or len(text) > 500:
        return None
    if not text.strip():
        return ()
    clauses = []
    for part in text.split(","):
        m = _clause_groups(part)
        if not m:
            return None
        op, target = m
        if op == "===":
            clauses.append((op, target))
            continue
        if target.endswith(".*"):
            if op not in ("==", "!=") or parse_version(target[:-2]) is None or "+" in target:
                return None
        else:
            v = parse_version(target)
            if v is None:
                return None
            if v.local is not None and op not in ("==", "!="):
                return None
            if op == "~=" and len(v.release) < 2:
                return None
        clauses.append((op, target))
    return tuple(clauses)


def _prefix_match(v: Version, target: str) -> bool:
    from stackcheck.facts.pep440 import Version

    t = Version(target[:-2])
    if v.epoch != t.epoch:
        return False
    n = len(t.release)
    release = v.release + (0,) * max(0, n - len(v.release))
    if release[:n] != t.release:
        return False
    # a prefix written with a pre/post/dev part must match those too
    if t.pre is not None or t.post is not None or t.dev is not None:
        return (v.pre, v.post, v.dev)[:3] == (t.pre, t.post, t.dev) or str(v).startswith(str(t))
    return True


def _with(v: Version, **parts: int | None) -> Version:
    """A copy of a public version with some of its pre/post/dev parts replaced (None removes one)."""
    fields: dict[str, object] = {"pre": v.pre, "post": v.post, "dev": v.dev, **parts}
    text = (f"{v.epoch}!" if v.epoch else "") + ".".join(map(str, v.release))
    pre = fields["pre"]
    if isinstance(pre, tuple):
        text += f"{pre[0]}{pre[1]}"
    if fields["post"] is not None:
        text += f".post{fields['post']}"
    if fields["dev"] is not None:
        text += f".dev{fields['dev']}"
    parsed = parse_version(text)  # (Version(text); without an epoch, built from its parts)
    assert parsed is not None
    return parsed


def _parsed(target: str) -> Version:
    parsed = parse_version(target)
    assert parsed is not None  # parse_specifier accepted it
    return parsed


def _clause_holds(op: str, target: str, v: Version) -> bool:
    """One clause against a public version (no local tag: version_in strips it)."""
    if op == "===":
        return str(v) == target
    if op == "==":
        if target.endswith(".*"):
            return _prefix_match(v, target)
        t = _parsed(target)
        return v == t
    if op == "!=":
        return not _clause_holds("==", target, v)
    t = _parsed(target)
    if op == "~=":
        prefix = ".".join(str(x) for x in t.release[:-1]) + ".*"
        if t.epoch:
            prefix = f"{t.epoch}!{prefix}"
        return v >= t and _prefix_match(v, prefix)
    if op == "<=":
        return v <= t
    if op == ">=":
        return v >= t
    if op == "<":
        if not v < t:
            return False
        # PEP 440: <V does not admit pre-releases of V itself unless V is a pre-release
        return t.is_prerelease or not v.is_prerelease or v < _with(t, dev=0)
    if op == ">":
        if not v > t:
            return False
        # >V does not admit post-releases of V unless V is a post-release
        return t.is_postrelease or not v.is_postrelease or _with(v, post=None, dev=None) != t
    return False


def version_in(version: str, spec: str) -> bool | None:
    """Does a version (pre-releases admitted) satisfy a specifier set? None if unreadable. Its local tag is ignored
    except by a clause that names one (`==2.9.1+cu128`) and by `===` (PEP 440)."""
    try:
        return _version_in_cached(version, spec)
    except TypeError:  # unhashable: not a string, which gives None
        return _version_in(version, spec)


@lru_cache(maxsize=8192)
def _version_in_cached(version: str, spec: str) -> bool | None:
    # memoised: the planner asks the same few (version, specifier) pairs for every candidate stack
    return _version_in(version, spec)


def _version_in(version: str, spec: str) -> bool | None:
    v = public(version)
    clauses = parse_specifier(spec)
    if v is None or clauses is None:
        return None
    return all(_local_clause_holds(op, target, version, v) for op, target in clauses)


def _local_clause_holds(op: str, target: str, version: str, v: Version) -> bool:
    """One clause as PEP 440 reads a candidate's local label (igap44): `===` compares the whole version as text
    (packaging: its normal form, case-insensitively); `==` / `!=` with a label compare the candidate's label too
    (strict equality of the normalised labels: 2.9.1+cu128 matches `==2.9.1+cu128`, not 2.9.1 or 2.9.1+cu130); every
    other clause ignores it (`_clause_holds` on the public version). The ordered clauses take no label
    (parse_specifier)."""
    if op == "===":
        full = parse_version(version)
        return full is not None and str(full).lower() == target.lower()
    if op in ("==", "!=") and "+" in target and not target.endswith(".*"):
        full, want = parse_version(version), _parsed(target)
        same = full is not None and v == public(target) and full.local == want.local
        return same if op == "==" else not same
    return _clause_holds(op, target, v)


def final_release(text: str) -> str | None:
    """The release a pre-release or dev release leads to ('0.5.9.dev0', '0.5.9rc1+g12ab' -> '0.5.9';
    '0.5.9.post1.dev2' -> '0.5.9.post1'; a post release of a pre-release, '0.7.1rc1.post1' -> '0.7.1': it lies below
    0.7.1 as its rc1 does), or None for a final or post release and an unreadable version."""
    v = public(text)
    if v is None or not v.is_prerelease:
        return None
    return str(_with(v, pre=None, dev=None, post=v.post if v.pre is None else None))


def _final_below(final: Version, clauses: tuple[tuple[str, str], ...]) -> Version | None:
    """The final release nearest below a final (or post) release F, for a specifier's clauses: for F = R.postN the
    post release before it (R.post(N-1), or R for N = 0); for F = R, R's release with its last non-zero part
    lowered and a part larger than every number the clauses' versions hold appended (5.13.0 -> 5.12.<big>, so it
    is above every clause version below F and no clause can tell it from the releases just below F). None where F
    has no release before it in its epoch (0, 0.0)."""
    if final.post is not None:
        return _with(final, post=final.post - 1 if final.post > 0 else None)
    release = list(final.release)
    while release and release[-1] == 0:
        release.pop()
    if not release:
        return None
    numbers = [0]
    for _op, target in clauses:
        t = parse_version(target[:-2] if target.endswith(".*") else target)
        numbers.extend(t.release if t is not None else ())
    release[-1] -= 1
    release.append(max(numbers) + 1)
    text = (f"{final.epoch}!" if final.epoch else "") + ".".join(map(str, release))
    return parse_version(text)


@lru_cache(maxsize=4096)
def straddled_final(version: str, spec: str) -> str | None:
    """The release V where `version` is a pre-release or dev build of V ('5.13.0rc1', '0.3.12.dev0',
    '0.5.9.post1.dev2' of 0.5.9.post1) and `spec` holds for one of V and the final release just below V but not the
    other (`<5.13.0`, `>=0.3.7`, `==5.12.*`, `!=5.13.0`): its code is V's or the release's before, and which is not
    known, so `spec`'s answer for it (PEP 440 puts it outside both `<V` and `>=V`) decides nothing. None otherwise:
    a final or post release, an unreadable version or specifier, a specifier that gives V and the release below V
    the same answer, and one that names a pre-release or dev build of V itself (`<0.4.0rc4`, `>=0.5.24.dev0`: written
    about V's pre-releases, which it then judges)."""
    final = final_release(version)
    clauses = parse_specifier(spec) if final is not None else None
    if final is None or clauses is None:
        return None
    fv = parse_version(final)
    for op, target in clauses:
        named = final_release(target[:-2] if target.endswith(".*") else target) if op != "===" else None
        if named is not None and parse_version(named) == fv:  # (as versions: 13.13.0.post1 is 13.13.post1)
            return None
    below = _final_below(fv, clauses) if fv is not None else None
    at = version_in(final, spec)
    if below is None:
        return None if at is version_in(version, spec) else final
    return None if at is version_in(str(below), spec) else final


def above_post_releases(version: str, specs: Iterable[str] = ()) -> tuple[str, str] | None:
    """(V, A) where `version` is a post release of the final release V or a dev build of one ('0.5.23.post1',
    '0.5.23.post1.dev0', '0.5.23.post1+local'): A is a release above V and every V.postN and below V's next release,
    written as V's release padded with zeros to the most release parts any clause of `specs` has (a wildcard's prefix
    counted; `===` and unreadable specifiers add none), then `.1` (0.5.23 -> 0.5.23.1; 0.5.23 where a clause reads
    0.5.23.0.2 -> 0.5.23.0.0.1). No clause of `specs` has its version between V's post releases and A, so each gives A
    the answer it gives every release just above V's post releases: the one width for every caller (the engine's
    version operator through post_between, the launch refusals' per-release entries). None: no post release, a post
    release of a pre-release (final_release and straddled_final read those), an unreadable version."""
    v = public(version)
    if v is None or v.post is None or v.pre is not None:
        return None
    base = _with(v, post=None, dev=None)
    widths = [len(base.release)]
    for spec in specs:
        for op, target in parse_specifier(spec) or ():
            if op != "===":
                widths.append(len(_parsed(target.removesuffix(".*")).release))
    parts = [*base.release, *[0] * (max(widths) - len(base.release)), 1]
    return str(base), (f"{base.epoch}!" if base.epoch else "") + ".".join(map(str, parts))


@lru_cache(maxsize=4096)
def post_between(version: str, spec: str) -> str | None:
    """The release V where `version` is a post release of V or a dev build of one ('0.5.23.post1',
    '0.5.23.post1.dev0', '0.5.23.post1+local') and `spec` has a `<=V` or `>V` clause and gives V and the releases just
    above V's post releases (above_post_releases) different answers: PEP 440 puts V.postN outside both `<=V` (it is
    above V) and `>V` (an exclusive ordered clause takes no post release of its own version), so a rule pair split
    there (`<=0.5.23` / `>0.5.23`) judges it by neither side, and whether its code is V's or a later release's is not
    known. `==V` and `!=V` likewise (irev69: V.postN is not V, so a rule written for one release, `==0.5.8`, said
    nothing for 0.5.8.post1; `===` and wildcard clauses are left as version_in reads them). None otherwise: no post
    release, a post release of a pre-release, an unreadable version or specifier, no such clause (`<V` / `>=V` put
    V.postN on V's side), and a specifier whose other clauses give V and the releases above the same answer
    (`<=0.5.23,>=0.6`)."""
    clauses = parse_specifier(spec)
    found = above_post_releases(version, [spec]) if clauses else None
    if found is None or clauses is None:
        return None
    base, above = found
    exact = [(op, t) for op, t in clauses if op != "===" and not t.endswith(".*")]  # (parse_version reads these)
    if not any(op in ("<=", ">", "==", "!=") and _parsed(target) == _parsed(base) for op, target in exact):
        return None
    return None if version_in(base, spec) is version_in(above, spec) else base


class Settled(NamedTuple):
    """settled's answer: `holds` is version_in_settled's (True, False, or None: not known), `straddled` the release V
    whose pre-release or dev build the version is where the range splits V from the releases just below it (then
    `holds` is None, and a message can name V), else None."""

    holds: bool | None
    straddled: str | None


def settled(version: str, spec: str) -> Settled:
    """version_in, but not known (holds None) where `version` is a pre-release or dev build of a release V that `spec`
    splits from the releases just below it (straddled_final, named in `straddled`): 5.13.0rc1 against `<5.13.0`,
    0.3.7rc1 against `>=0.3.7`. A pre-release of V whose V and the release below get the same answer is judged as
    version_in judges it (5.13.0rc1 against `>=4.56`, `==5.13.0rc1`)."""
    result = version_in(version, spec)
    if result is None or not isinstance(version, str) or not isinstance(spec, str):
        return Settled(result, None)
    final = straddled_final(version, spec)
    return Settled(None, final) if final is not None else Settled(result, None)


def version_in_settled(version: str, spec: str) -> bool | None:
    """settled's answer alone: version_in, but None where a pre-release or dev build straddles the range's edge."""
    return settled(version, spec).holds


def numeric_tuple(text: object) -> tuple[int, ...] | None:
    """'580.159.04' -> (580, 159, 4); '13.0' -> (13, 0). Driver and CUDA versions are not PEP 440."""
    if not isinstance(text, str):
        return None
    return _numeric_tuple(text)


@lru_cache(maxsize=4096)
def _numeric_tuple(text: str) -> tuple[int, ...] | None:
    # memoised: the planner compares the same driver and CUDA versions for every candidate stack
    t = text.strip()
    # _NUMERIC's reading by string methods (its `\d` is a character of Unicode's Nd, which str.isdecimal is; stripped,
    # the text has no newline for its `$` to stop before): no pattern compiled on a plan's first run
    parts = t.split(".")
    if len(t) > 50 or not all(p.isdecimal() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def minor_of(text: str) -> tuple[int, int] | None:
    """(major, minor) of a version's first two numbers ('2.10.0+cu128' -> (2, 10)), whatever follows them; None
    where it does not start with two; a number of more than 9 digits is not read (igap26: int() may refuse it)."""
    m = _LEADING_MINOR.match(text)
    return (int(m.group(1)), int(m.group(2))) if m else None


def compare_numeric(a: str, b: str) -> int | None:
    """-1, 0 or 1 comparing dotted numeric versions, padding the shorter with zeros; None if unreadable."""
    ta, tb = numeric_tuple(a), numeric_tuple(b)
    if ta is None or tb is None:
        return None
    n = max(len(ta), len(tb))
    pa, pb = ta + (0,) * (n - len(ta)), tb + (0,) * (n - len(tb))
    return (pa > pb) - (pa < pb)


def cuda_from_tag(tag: str | None) -> str | None:
    """'cu130' -> '13.0', 'cu128' -> '12.8', 'cu92' -> '9.2'; None for 'cpu', 'rocm6.2' or garbage."""
    if not tag:
        return None
    digits = _cuda_tag_digits(tag.strip().lower())
    if digits is None:
        return None
    return f"{int(digits[:-1])}.{digits[-1]}"


def _cuda_tag_digits(text: str) -> str | None:
    """`_CUDA_TAG.match(text).group(1)` (its `$` also before a last newline; its `\\d` Unicode's Nd, str.isdecimal's),
    None where it does not match, by string methods: no pattern compiled for a report (tests/facts/
    test_string_readings.py holds the two equal on generated texts)."""
    body = text[:-1] if text.endswith("\n") else text
    digits = body[2:]
    if not body.startswith("cu") or not 2 <= len(digits) <= 3 or not digits.isdecimal():
        return None
    return digits


def tag_from_cuda(cuda: str | None) -> str | None:
    """'13.0' -> 'cu130'; '12.8.1' -> 'cu128'."""
    t = numeric_tuple(cuda) if cuda else None
    if t is None or len(t) < 2:
        return None
    return f"cu{t[0]}{t[1]}"


def cuda_major_minor(text: str | None) -> str | None:
    """'13.0.88' -> '13.0'."""
    t = numeric_tuple(text) if text else None
    if t is None:
        return None
    return f"{t[0]}.{t[1] if len(t) > 1 else 0}"


def ngc_build(version: str | None) -> bool | None:
    """Whether a torch version is an NVIDIA container (NGC) build: its local tag carries the container's year
    and month ('2.7.0a0+ecf3bae40a.nv25.02' -> True, '2.9.1+cu128' -> False); None when the version is not
    readable."""
    if not version or parse_version(version) is None:
        return None
    parts = (local_tag(version) or "").split(".")
    return any(p.startswith("nv") and len(p) == 4 and p[2:].isdigit() for p in parts)


def pytorch_build_tag(version: str | None) -> str | None:
    """The build a torch version's local tag names the way PyTorch's own wheels write it in torch/version.py
    ('2.11.0+cu130' -> 'cu130', also for PyPI's default build; '2.9.1+cpu' -> 'cpu'); '' when the version carries
    no such tag (a conda or distribution build, an NVIDIA container's '2.7.0a0+ecf3bae40a.nv25.02', a version
    written without its tag); None when the version is not readable."""
    if not version or parse_version(version) is None:
        return None
    tag = (local_tag(version) or "").lower()
    return tag if _PYTORCH_BUILD_TAG.match(tag) else ""


def torch_build_of(tag: str | None) -> str | None:
    """The torch release a wheel's local tag says the wheel was compiled against: 'cu124torch2.5' -> '2.5'
    (FlashInfer's AOT wheels from its cuXXX/torchX.Y indexes carry such tags); None for any other tag."""
    if not tag or len(tag) > 40:
        return None
    m = _TORCH_BUILD_TAG.match(tag)
    return m.group(1) if m else None


def variant_of(version: str | None) -> str | None:
    """The CUDA variant named by a local tag: '0.3.21+cu130' -> 'cu130', '2.9.1+cpu' -> 'cpu'."""
    if not version:
        return None
    tag = local_tag(version)
    if not tag:
        return None
    first = tag.split(".")[0]
    if _cuda_tag_digits(first) is not None or first == "cpu" or first.startswith("rocm"):
        return first
    return None
