"""A lean reader of Requires-Dist lines for the dependency check, so that a healthy environment's check does not
import `packaging.requirements` (its markers, specifiers, tags, sysconfig, dataclasses, inspect, ast and
logging: 35-45 ms of CPU on a 2-core box, on the gate's main thread).

It answers only what it is sure of, and only the two answers that need no wording: "this line does not apply
here" (its marker is false) and "this line is met by the installed version". Anything else is None, and the
caller judges that line with `packaging` as before, so every refusal, warning and unknown keeps its text.

Understood, and nothing more:
- a line `NAME[EXTRAS] SPEC,SPEC ; MARKER` (no parentheses around the specifiers, no URL);
- a specifier `==V` with V a release with optional aN/bN/rcN, .postN, .devN (met when the installed version's
  public part is the same text), and `<`, `<=`, `>`, `>=`, `==`, `!=` with V a plain release N(.N)*, met by an
  installed plain release with an optional local label (compared on the release, as packaging does for these),
  or by an installed release with a pre/post/dev suffix whose release differs from V (then the release alone
  orders them; packaging's exclusions of pre-, post- and local releases apply only to V's own release);
- a marker of `and`, `or` and parentheses over `VAR == "v"` / `VAR != "v"` with VAR one of sys_platform,
  platform_machine, os_name, implementation_name, extra (v a word that is not a version), and python_version /
  python_full_version compared with a plain release by `<`, `<=`, `>`, `>=`, `==`, `!=`.
The marker values are those `deps.marker_environment` gives: this interpreter's sys_platform, os_name and
implementation_name, the target's Python version and machine (a name missing here: not understood), extra empty.
tests/launch/test_lean_requires.py compares every answer with packaging's on generated lines and on the
Requires-Dist lines of real SGLang, torch, FlashInfer and sgl-kernel wheels.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
# packaging's whitespace is space and tab only (Python's \s also takes no-break spaces, \x0b, \x1c-\x1f, ...: a
# line packaging rejects must not be read here); the specifiers are greedy up to the `;` (a lazy run before a
# blank run backtracked quadratically: 23 s for 32,000 blanks) and their trailing blanks are stripped after.
_LINE = re.compile(
    rf"[ \t]*(?P<name>{_NAME})[ \t]*(?:\[[ \t]*(?:{_NAME}[ \t]*(?:,[ \t]*{_NAME}[ \t]*)*)?\])?[ \t]*"
    r"(?P<specs>[<>=!][^;]*)?(?:;(?P<marker>.*))?"
)
_PLAIN = re.compile(r"[0-9]+(?:\.[0-9]+)*")
_PIN = re.compile(r"[0-9]+(?:\.[0-9]+)*(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?")
_PIN_PARTS = re.compile(r"([0-9]+(?:\.[0-9]+)*)((?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?)")
_SPEC = re.compile(r"[ \t]*(==|!=|<=|>=|<|>)[ \t]*([0-9][0-9A-Za-z.]*)[ \t]*")
_LOCAL = re.compile(r"[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)*")
_TOKEN = re.compile(
    r"[ \t]*(?:(\()|(\))|(and|or)(?![A-Za-z0-9_])"
    r"|([a-z_]+)[ \t]*(==|!=|<=|>=|<|>)[ \t]*(?:\"([^\"']*)\"|'([^\"']*)'))"
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9._-]*")
_STRING_VARS = frozenset({"sys_platform", "platform_machine", "os_name", "implementation_name", "extra"})
_VERSION_VARS = frozenset({"python_version", "python_full_version"})


_MAX_DIGITS = 30  # a longer number is not read here (int() refuses past 4,300 digits): packaging's, then
_MAX_DEPTH = 32  # parentheses deeper than this go to packaging (a RecursionError here otherwise)


def _release(text: str) -> tuple[int, ...]:
    if any(len(p) > _MAX_DIGITS for p in text.split(".")):
        raise ValueError(text)
    parts = [int(p) for p in text.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _compare(have: tuple[int, ...], op: str, want: tuple[int, ...]) -> bool:
    if op == "==":
        return have == want
    if op == "!=":
        return have != want
    if op == "<":
        return have < want
    if op == "<=":
        return have <= want
    if op == ">":
        return have > want
    return have >= want


def _not_a_version(word: str) -> bool:
    """A word that packaging's marker comparison takes as a string, not as a version. Read with
    stackcheck.facts.pep440 (packaging.version's reading without importing it: ~3 ms CPU of the live gate with
    typing on the 2-core box); a word starts with a letter, so only a `v` spelling can be a version."""
    if not _WORD.fullmatch(word):
        return False
    if word[0] not in "vV":
        return True
    from stackcheck.facts.pep440 import InvalidVersion, Version

    try:
        Version(word)
    except InvalidVersion:
        return True
    return False


class _Marker:
    """A recursive-descent reading of the understood marker subset; `value` None where it is not understood."""

    def __init__(self, text: str, env: Mapping[str, str]) -> None:
        self.tokens: list[tuple[str, ...]] = []
        self.env = env
        pos = 0
        text = text.rstrip(" \t")
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                raise ValueError(text[pos:])
            paren_open, paren_close, logic, var, op, dq, sq = m.groups()
            if paren_open:
                self.tokens.append(("(",))
            elif paren_close:
                self.tokens.append((")",))
            elif logic:
                self.tokens.append((logic,))
            else:
                self.tokens.append(("cmp", var, op, dq if dq is not None else sq))
            pos = m.end()
        self.i = 0
        self.depth = 0

    def read(self) -> bool:
        if not self.tokens:
            raise ValueError("empty")
        value = self._or()
        if self.i != len(self.tokens):
            raise ValueError("trailing")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def _or(self) -> bool:
        value = self._and()
        while self._peek() == "or":
            self.i += 1
            right = self._and()
            value = value or right
        return value

    def _and(self) -> bool:
        value = self._atom()
        while self._peek() == "and":
            self.i += 1
            right = self._atom()
            value = value and right
        return value

    def _atom(self) -> bool:
        kind = self._peek()
        if kind == "(":
            self.i += 1
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise ValueError("deep")
            value = self._or()
            self.depth -= 1
            if self._peek() != ")":
                raise ValueError("unclosed")
            self.i += 1
            return value
        if kind != "cmp":
            raise ValueError("expected a comparison")
        _, var, op, literal = self.tokens[self.i]
        self.i += 1
        have = self.env.get(var)
        if have is None:
            raise ValueError(var)
        if var in _STRING_VARS:
            if op not in ("==", "!=") or not _not_a_version(literal):
                raise ValueError(literal)
            if var == "extra":
                if have != "":
                    raise ValueError("extra")
                return op == "!="  # the check's extra is empty; a word literal never normalises to empty
            return (have == literal) == (op == "==")
        if var in _VERSION_VARS:
            if not _PLAIN.fullmatch(literal) or not _PLAIN.fullmatch(have):
                raise ValueError(literal)
            return _compare(_release(have), op, _release(literal))
        raise ValueError(var)


def marker_holds(marker: str, env: Mapping[str, str]) -> bool | None:
    """The marker's value in env, or None where the text is outside the understood subset."""
    try:
        return _Marker(marker, env).read()
    except (ValueError, IndexError):
        return None


def spec_met(specs: str, installed: str) -> bool | None:
    """True where the installed version is surely inside every specifier; None otherwise (including 'outside')."""
    if not specs:
        return True
    public, plus, local = installed.partition("+")
    if plus and not _LOCAL.fullmatch(local):
        return None
    try:
        return _spec_met(specs, public)
    except ValueError:  # a number too long to read here
        return None


def _spec_met(specs: str, public: str) -> bool | None:
    for part in specs.split(","):
        m = _SPEC.fullmatch(part)
        if m is None:
            return None
        op, want = m.groups()
        cand = _PIN_PARTS.fullmatch(public)
        if _PLAIN.fullmatch(want) and cand is not None:
            have, target = _release(cand.group(1)), _release(want)
            if not cand.group(2) or have != target:  # a pre/post/dev suffix orders nothing across releases
                if not _compare(have, op, target):
                    return None
                continue
        if not (op == "==" and _PIN.fullmatch(want) and public == want):
            return None
    return True


def environment(python: str | None, machine: str | None) -> dict[str, str]:
    """The marker values `deps.marker_environment` gives that need no `packaging` (and no `platform`): those it
    takes from sys and os, and the target's Python version and machine where the facts give them."""
    import os
    import sys

    env = {"sys_platform": sys.platform, "os_name": os.name, "implementation_name": sys.implementation.name}
    if python:
        env["python_full_version"] = python
        env["python_version"] = ".".join(python.split(".")[:2])
    if machine:
        env["platform_machine"] = machine
    env["extra"] = ""
    return env


def read_line(line: str, env: Mapping[str, str]) -> tuple[str, str, bool] | None:
    """(the requirement's name, its specifier text, whether its marker holds), or None where the line is
    outside the understood subset."""
    m = _LINE.fullmatch(line)
    if m is None:
        return None
    specs = (m.group("specs") or "").rstrip(" \t")
    if specs and not all((p := _SPEC.fullmatch(part)) and _PIN.fullmatch(p.group(2)) for part in specs.split(",")):
        return None
    marker = m.group("marker")
    holds = True
    if marker is not None:
        got = marker_holds(marker, env)
        if got is None:
            return None
        holds = got
    return m.group("name"), specs, holds
