"""The readings that replaced a pattern by string methods (so that a plan's first run compiles none of them) answer
as the pattern did: archs._target_groups as _TARGET, versions._numeric_tuple as _NUMERIC, parse_version's quick path
(N(.N)* with a local tag) as _PLAIN and pep440.Version; over generated texts with Unicode digits, letters of both
cases, separators and whitespace."""

from __future__ import annotations

import random

from stackcheck.facts import archs, versions
from stackcheck.facts.pep440 import InvalidVersion, Version

_PIECES = ["sm", "compute", "_", "9", "0", "12", "1", "a", "f", "z", "A", "\u0669", "\u00b2", "\u0661\u0662", ".",
           "+", "cu130", "-", " ", "\n", "x", "00", "post", "rc", "dev", "local", "\t"]  # fmt: skip


def _texts(seed: int, n: int = 40000) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 6))) for _ in range(n)]


def _targets(seed: int, n: int = 40000) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        head = rng.choice(["sm", "compute", "SM", "Compute", "cm", "sm_sm", ""]) + rng.choice(["_", "_", "", "-", "__"])
        body = "".join(rng.choice(["9", "0", "1", "2", "\u0669", "\u00b2", "a", "x"]) for _ in range(rng.randint(0, 5)))
        out.append(head + body + rng.choice(["", "", "a", "f", "A", "\u00e9", "\n", " ", "_1"]))
    return out


def test_target_groups_are_the_patterns() -> None:
    matched = 0
    for text in _targets(1) + _texts(1):
        t = text.strip().lower()
        m = archs._TARGET.match(t)
        assert archs._target_groups(t) == (m.groups() if m else None), repr(t)
        matched += m is not None
    assert matched > 300
    for text in ("sm_90", "sm_90a", "compute_120f", "sm_1000", "sm_9", "sm_90A", "sm_\u0669\u0669", "sm90", "sm_9a0"):
        t = text.strip().lower()
        m = archs._TARGET.match(t)
        assert archs._target_groups(t) == (m.groups() if m else None), text


def _numeric_reference(text: str) -> tuple[int, ...] | None:
    t = text.strip()
    if not versions._NUMERIC.match(t) or len(t) > 50:
        return None
    return tuple(int(p) for p in t.split("."))


def test_numeric_tuple_is_the_pattern() -> None:
    read = 0
    extra = ["580.95.05", "13.0", " 13.0\n", "1." * 30 + "1", "\u0661\u0662.3", "1\u00b2", "1..2"]
    for text in [*_texts(2), *extra]:
        expected = _numeric_reference(text)
        assert versions._numeric_tuple.__wrapped__(text) == expected, repr(text)
        read += expected is not None
    assert read > 1000


def _version_reference(text: str) -> Version | None:
    m = versions._PLAIN.fullmatch(text)
    if m is not None:
        return Version.normal(*m.groups())
    try:
        return Version(text)
    except InvalidVersion:
        return None


def _versions(seed: int, n: int = 40000) -> list[str]:
    rng = random.Random(seed)
    pieces = ["1", "0", "12", ".", "a", "b", "rc", "c", "alpha", ".post", "post", ".dev", "dev", "+", "cu130", "x",
              "X", "-", "_", "00", "\u0669", "!", " "]  # fmt: skip
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 8))) for _ in range(n)]


def test_plain_groups_are_the_patterns() -> None:
    matched = 0
    for text in _versions(4) + _texts(4) + ["4.0.0b10", "0.6.4.post1", "0.3.0rc1", "1.0.dev2", "1.0a1.post2.dev3+x.1"]:
        m = versions._PLAIN.fullmatch(text)
        assert versions._plain_groups(text) == (m.groups() if m else None), repr(text)
        matched += m is not None
    assert matched > 2000


def test_parse_version_is_the_pattern() -> None:
    quick = 0
    extra = ["2.9.1+cu130", "0.5.9", "1.0+abc.0", "1.0+01", "1.0+", "1.0+ABC", "2.9.1+cu130.x9"]
    for text in [*_versions(3), *_texts(3), *extra]:
        expected = _version_reference(text)
        got = versions.parse_version.__wrapped__(text)
        assert (got is None) == (expected is None), repr(text)
        if got is not None and expected is not None:
            assert (str(got), got.release, got.pre, got.post, got.dev, got.local) == (
                str(expected), expected.release, expected.pre, expected.post, expected.dev, expected.local
            ), repr(text)  # fmt: skip
            assert got == expected and not (got < expected or got > expected)
        quick += versions._quick_plain(text) is not None
    assert quick > 1000


def _specifiers(seed: int, n: int = 40000) -> list[str]:
    rng = random.Random(seed)
    pieces = ["~=", "===", "==", "!=", "<=", ">=", "<", ">", "=", "!", "~", " ", "\t", "\n", "1.0", "2", ".*", "+cu1",
              ";", "a", "\u00a0", "\u2003", "x", "*"]  # fmt: skip
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 6))) for _ in range(n)]


def test_clause_groups_are_the_patterns() -> None:
    matched = 0
    for text in [*_specifiers(5), "<= ", "<=1.0", "== 1.0 ", "===x", "~=2.9", ">=1,<2", " >= 1 ; x"]:
        m = versions._CLAUSE.match(text)
        assert versions._clause_groups(text) == (m.groups() if m else None), repr(text)
        matched += m is not None
    assert matched > 2000


def test_exact_group_is_the_pattern() -> None:
    from stackcheck.facts import implied

    matched = 0
    pinned = [random.Random(7).choice(["==", "===", " == ", "=="]) + v for v in _versions(7, 5000)]
    for text in pinned + _specifiers(6) + ["==2.9.1+cu130", "=== 0.5.9", "==== 1", "== =1", "==1 x", "==\u0669"]:
        m = implied._EXACT.match(text)
        assert implied._exact_group(text) == (m.group(1) if m else None), repr(text)
        matched += m is not None
    assert matched > 1000


def test_cuda_tag_digits_are_the_patterns() -> None:
    rng = random.Random(8)
    pieces = ["cu", "c", "u", "CU", "1", "3", "0", "12", "\u0669", "\u00b2", "\n", " ", "x", "cpu", "torch2.9"]
    matched = 0
    texts = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 5))) for _ in range(40000)]
    texts += ["cu" + "".join(rng.choice(["1", "3", "0", "\u0669", "\u00b2"]) for _ in range(rng.randint(1, 4)))
              + rng.choice(["", "", "\n", "\n\n", " "]) for _ in range(5000)]  # fmt: skip
    for text in texts:
        m = versions._CUDA_TAG.match(text)
        assert versions._cuda_tag_digits(text) == (m.group(1) if m else None), repr(text)
        matched += m is not None
    assert matched > 500
