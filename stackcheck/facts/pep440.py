"""PEP 440 versions, read and ordered as `packaging.version.Version` reads and orders them, without importing
packaging: its version module pulls in `typing` and costs ~4-5 ms CPU of every command on the 2-core box (medians
of 31 runs of `import re, json` with and without it), and every verdict compares versions.

The reading follows PEP 440's normal form and the spellings it accepts (an optional `v`, an epoch `N!`, the
release `N(.N)*`, a pre-release `a`/`b`/`rc` also spelt `alpha`, `beta`, `c`, `pre`, `preview`, a post-release
`.postN` also spelt `rev`, `r` or `-N`, a development release `.devN`, separators `.`, `-` or `_` or none
between them, a missing number read as 0, a local label `+a.b` whose `-` and `_` become `.`), case-insensitive,
in ASCII letters and digits, with surrounding whitespace ignored (packaging 26's reading; older packaging
also took some non-ASCII letters that fold to ASCII ones). The order is PEP 440's: epoch, release (trailing
zeros ignored), then dev < pre < final < post, a development release of a pre- or post-release before it, and a
local label after the public version it labels (its numeric parts as numbers above any alphabetic part).
tests/facts/test_pep440.py compares every reading, attribute, string and comparison with packaging's on
generated versions.

`versions.parse_version` is the entry point; this module only defines the type."""

from __future__ import annotations

import re

from stackcheck.lazy_re import lazy
from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_SEP = r"[-_.]?"
_FORM = lazy(
    r"\s*v?"
    r"(?a:"  # the version itself in ASCII only (as packaging 26 reads it), the space around it any
    r"(?:(?P<epoch>[0-9]+)!)?"
    r"(?P<release>[0-9]+(?:\.[0-9]+)*)"
    rf"(?:{_SEP}(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc){_SEP}(?P<pre_n>[0-9]+)?)?"
    rf"(?:-(?P<post_implicit>[0-9]+)|{_SEP}(?P<post_l>post|rev|r){_SEP}(?P<post_n>[0-9]+)?)?"
    rf"(?:{_SEP}(?P<dev_l>dev){_SEP}(?P<dev_n>[0-9]+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?"
    r")\s*",
    re.IGNORECASE,
)
_PRE = {"a": "a", "alpha": "a", "b": "b", "beta": "b", "c": "rc", "rc": "rc", "pre": "rc", "preview": "rc"}
_LOCAL_SEP = lazy(r"[-_.]")
_DIGITS_AND_DOTS = frozenset(".0123456789")
_NONE = (None, None, None, None)

# the order's stand-ins for an absent part: below and above every value of the part they stand in for
_LOW = (-1,)
_HIGH = (1,)


class InvalidVersion(ValueError):
    """Not a PEP 440 version."""


class Version:
    """A PEP 440 version: `Version("2.9.1+cu130")`; InvalidVersion for any other text. Immutable, hashable and
    ordered like packaging's Version; equal Versions hash alike."""

    __slots__ = ("_key", "_local", "_str", "dev", "epoch", "post", "pre", "release")

    epoch: int
    release: tuple[int, ...]
    pre: tuple[str, int] | None
    post: int | None
    dev: int | None
    _local: tuple[int | str, ...] | None

    def __init__(self, text: str) -> None:
        self._key: tuple[Any, ...] | None = None
        self._str: str | None = None
        if _DIGITS_AND_DOTS.issuperset(text):  # "2.9.1": a release alone (a tenth of the full reading's time)
            parts = text.split(".")
            if "" not in parts:  # ("1..2", ".1", "": not a version, which the full reading says)
                self.epoch, self.release, self.pre, self.post, self.dev, self._local = 0, tuple(map(int, parts)), *_NONE
                return
        m = _FORM.fullmatch(text)
        if m is None:
            raise InvalidVersion(f"Invalid version: {text!r}")
        g = m.group
        self.epoch = int(g("epoch")) if g("epoch") else 0
        self.release = tuple(int(p) for p in g("release").split("."))
        self.pre = (_PRE[g("pre_l").lower()], int(g("pre_n") or 0)) if g("pre_l") else None
        if g("post_implicit") is not None:
            self.post = int(g("post_implicit"))
        else:
            self.post = int(g("post_n") or 0) if g("post_l") else None
        self.dev = int(g("dev_n") or 0) if g("dev_l") else None
        local = g("local")
        self._local = tuple(int(p) if p.isdigit() else p.lower() for p in _LOCAL_SEP.split(local)) if local else None

    @classmethod
    def normal(
        cls, release: str, pre: str | None, pre_n: str | None, post: str | None, dev: str | None, local: str | None
    ) -> Version:
        """The Version of a text already in normal form, from its parts as written (`versions._PLAIN`'s groups:
        release digits and dots, a|b|rc and its number, the .post and .dev numbers, a local label of lowercase
        letters and digits joined by dots): what `Version(text)` gives, without the full pattern."""
        v = cls.__new__(cls)
        v._key = v._str = None
        v.epoch, v.release = 0, tuple(map(int, release.split(".")))
        v.pre = (pre, int(pre_n)) if pre is not None and pre_n is not None else None
        v.post = int(post) if post is not None else None
        v.dev = int(dev) if dev is not None else None
        v._local = tuple(int(p) if p.isdigit() else p for p in local.split(".")) if local else None
        return v

    # ---- what packaging's Version offers, as it gives it ----

    @property
    def local(self) -> str | None:
        return ".".join(str(p) for p in self._local) if self._local is not None else None

    @property
    def public(self) -> str:
        return str(self).split("+", 1)[0]

    @property
    def base_version(self) -> str:
        return (f"{self.epoch}!" if self.epoch else "") + ".".join(str(x) for x in self.release)

    @property
    def is_prerelease(self) -> bool:
        return self.dev is not None or self.pre is not None

    @property
    def is_postrelease(self) -> bool:
        return self.post is not None

    @property
    def is_devrelease(self) -> bool:
        return self.dev is not None

    @property
    def major(self) -> int:
        return self.release[0] if len(self.release) >= 1 else 0

    @property
    def minor(self) -> int:
        return self.release[1] if len(self.release) >= 2 else 0

    @property
    def micro(self) -> int:
        return self.release[2] if len(self.release) >= 3 else 0

    def __str__(self) -> str:
        if self._str is None:
            text = self.base_version
            if self.pre is not None:
                text += f"{self.pre[0]}{self.pre[1]}"
            if self.post is not None:
                text += f".post{self.post}"
            if self.dev is not None:
                text += f".dev{self.dev}"
            if self._local is not None:
                text += f"+{self.local}"
            self._str = text
        return self._str

    def __repr__(self) -> str:
        return f"<Version('{self}')>"

    # ---- the order ----

    def key(self) -> tuple[Any, ...]:
        """The sort key: equal exactly when the versions are, ordered as they are."""
        if self._key is None:
            release = list(self.release)
            while release and release[-1] == 0:
                release.pop()
            if self.pre is not None:
                pre: tuple[Any, ...] = (0, self.pre)
            elif self.post is None and self.dev is not None:
                pre = _LOW  # 1.0.dev0 before 1.0a0
            else:
                pre = _HIGH  # a final (or post) release after its pre-releases
            post: tuple[Any, ...] = _LOW if self.post is None else (0, self.post)
            dev: tuple[Any, ...] = _HIGH if self.dev is None else (0, self.dev)
            # a local label after none; its numeric parts above its alphabetic ones, numbers by value
            local: tuple[Any, ...] = (
                _LOW
                if self._local is None
                else (0, tuple((1, p, "") if isinstance(p, int) else (0, 0, p) for p in self._local))
            )
            self._key = (self.epoch, tuple(release), pre, post, dev, local)
        return self._key

    def __hash__(self) -> int:
        return hash(self.key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.key() == other.key()

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.key() != other.key()

    def __lt__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.key() < other.key()

    def __le__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.key() <= other.key()

    def __gt__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.key() > other.key()

    def __ge__(self, other: Version) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.key() >= other.key()
