"""sources.derived_id reads an inline source's title and address by string methods (a plan's first run compiles
none of its patterns): each reading answers as its pattern did (WHEELS_RANGE, WHEEL, GITHUB_THREAD, GITHUB_FILE,
SLUG, COMMIT) over generated titles and addresses with Unicode digits and letters, separators, line breaks and
near-misses of every literal; derived_id gives every inline source of the manifests the id the patterns gave, read by
strings (its first _STRING_READS ids in a process) or by the compiled patterns (after them, or once a probed audit
compiled them), and changes from the one to the other where it says."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.knowledge import sources

_TITLE_PIECES = ["sglang", "SGLang", "flash_attn", "sgl-kernel", "x", " ", " ", "wheel", "wheels", " wheels ",
                 " wheel ", "0", "5", "0.5.9", "\u0661", "\u00b2", "\u00e9", ".", "..", " ... ", "-", "+", "cu130",
                 "from", " from PyPI", ",", ":", "/", "srt/layers/x.py", "a.py", ".py", "_", "\n", "\t"]  # fmt: skip
_URL_PIECES = ["https://", "http://", "ftp://", "github.com/", "github.com", "gitlab.com/", "sgl-project", "/", "/",
               "sglang", "issues/", "issues", "pull/", "blob/", "main", "v0.5.9", "0123456789abcdef0123", "24548",
               "\u0661\u0662", "\u00b2", "x", "a.py", "\n", "?q=1", "#L10", ""]  # fmt: skip


def _draw(rng: random.Random, pieces: list[str], most: int) -> str:
    return "".join(rng.choice(pieces) for _ in range(rng.randint(0, most)))


def _titles(seed: int, n: int = 40000) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(n):
        draw = rng.random()
        if draw < 0.2:  # near the range's shape
            yield (
                rng.choice(["sglang", "Sgl-kernel", "flash_attn.x", "9x", ""])
                + rng.choice([" wheels ", " wheels ", " wheel ", "  wheels "])
                + rng.choice(["0.5.9-0.5.12", "0.5.9-0.5.12", "0.5-\u0661", "0.5.9", "0.5.9+cu1-0.6", "0.5-x"])
                + rng.choice(["", "", " from PyPI", " from PyPI.x", " from"])
                + rng.choice([", ", ", ", ",", " ", ": "])
                + rng.choice(["sglang/srt/x.py", "a.py", "a.", "a.b/c", "x.\u00b2", "a.py\n", ""])
            )
        elif draw < 0.6:  # near the shape: package, version(s), words, separator, path
            yield (
                rng.choice(["sglang", "Flash_attn", "sgl-kernel", "1abc", "\u00e9x", "torch.x", ""])
                + rng.choice([" ", " ", "_", "  "])
                + rng.choice(["", "", "wheel ", "wheels ", "wheels", "wheel"])
                + rng.choice(["0.5.9", "0.5.9-0.5.12", "0.5.9 ... 0.5.12", "0.5.9 ... x", "0.5-", "\u0661.2", "v1"])
                + rng.choice(["", "", " wheel", " wheels", " wheels.py", " wheel.x"])
                + rng.choice(["", " from PyPI", " from PyPI.py", " from"])
                + rng.choice(["", ",", ":", ";", ", ", ",,"])
                + rng.choice([" ", " ", "", "\n"])
                + rng.choice(["sglang/srt/x.py", "a.py", "a.", ".py", "a.b.c", "a/b", "x.\u00b2", "..", "a.py\n", ""])
                + rng.choice(["", "", " tail", ".", "-"])
            )
        else:
            yield _draw(rng, _TITLE_PIECES, 10)


def _urls(seed: int, n: int = 40000) -> Iterator[str]:
    rng = random.Random(seed)
    for _ in range(n):
        if rng.random() < 0.5:
            yield (
                rng.choice(["https://github.com/", "http://github.com/", "https://github.com", "https://x.com/"])
                + rng.choice(["sgl-project/", "o/", "/", "o\n/", ""])
                + rng.choice(["sglang/", "flashinfer/", "/", "r", "r\n/"])
                + rng.choice(["issues/", "pull/", "blob/", "issues", "tree/", ""])
                + rng.choice(["24548", "\u0661\u0662", "\u00b2", "main/", "v0.6.1/", "/", "0123456789abcdef01/", ""])
                + rng.choice(["", "python/sglang/srt/x.py", "a.py\n", "a\nb", "\n", "x#L3", ""])
            )
        else:
            yield _draw(rng, _URL_PIECES, 8)


def _groups(pattern: str, text: str, names: tuple[str, ...]) -> tuple[str, ...] | None:
    m = re.match(pattern, text)
    return tuple(m.group(n) for n in names) if m else None


def test_wheel_readings_are_the_patterns() -> None:
    hits = {"range": 0, "wheel": 0}
    for title in _titles(21):
        expected = _groups(sources.WHEELS_RANGE, title, ("pkg", "ver", "path"))
        assert sources._wheels_range(title) == expected, repr(title)
        hits["range"] += expected is not None
        expected = _groups(sources.WHEEL, title, ("pkg", "ver", "path"))
        assert sources._wheel(title) == expected, repr(title)
        hits["wheel"] += expected is not None
    assert hits["range"] > 150 and hits["wheel"] > 1000, hits


def test_github_readings_are_the_patterns() -> None:
    hits = {"thread": 0, "file": 0}
    for url in _urls(22):
        expected = _groups(sources.GITHUB_THREAD, url, ("repo", "n"))
        assert sources._github_thread(url) == expected, repr(url)
        hits["thread"] += expected is not None
        expected = _groups(sources.GITHUB_FILE, url, ("repo", "ref", "path"))
        assert sources._github_file(url) == expected, repr(url)
        hits["file"] += expected is not None
    assert hits["thread"] > 300 and hits["file"] > 100, hits


def test_slug_and_commit_are_the_patterns() -> None:
    for text in [*_titles(23, 5000), *_urls(23, 5000)]:
        low = text.lower()
        assert sources._slug(low) == re.sub(sources.SLUG, "-", low), repr(low)
        for ref in (text, text[-14:], text.replace("/", "")):
            assert sources._is_commit(ref) == (re.fullmatch(sources.COMMIT, ref) is not None), repr(ref)
    assert sources._is_commit("0123456789ab") and not sources._is_commit("0123456789a")
    assert not sources._is_commit("0123456789AB") and not sources._is_commit("\u0661" * 12)


def _reference_id(src: Mapping[str, Any]) -> str:
    """derived_id as the patterns read it (the module's code before the string readings)."""
    title, url = str(src.get("title") or ""), str(src.get("url") or "")
    if src.get("repo"):
        return sources.derived_id(src)  # no pattern but the commit's, held equal above
    for pattern in (sources.WHEELS_RANGE, sources.WHEEL):
        m = re.match(pattern, title)
        if m:
            ver = m.group("ver").replace(" ... ", "..")
            return f"{m.group('pkg').lower()}-{ver}:{m.group('path').rsplit('/', 1)[-1]}"
    m = re.match(sources.GITHUB_THREAD, url)
    if m:
        return f"{m.group('repo')}#{m.group('n')}"
    m = re.match(sources.GITHUB_FILE, url)
    if m:
        ref = m.group("ref")
        ref = ref[:10] if re.fullmatch(sources.COMMIT, ref) else ref
        return f"{m.group('repo')}:{m.group('path').rsplit('/', 1)[-1]}@{ref}"
    words = re.sub(sources.SLUG, "-", title.lower()).strip("-.").split("-")
    slug = ""
    for w in words:
        if slug and len(slug) + len(w) + 1 > 40:
            break
        slug = f"{slug}-{w}" if slug else w
    return slug or url.split("://", 1)[-1].strip("/") or "unnamed-source"


def _inline_sources(node: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in sources.SOURCE_KEYS:
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, Mapping):
                        yield item
            yield from _inline_sources(value)
    elif isinstance(node, list):
        for item in node:
            yield from _inline_sources(item)


@pytest.mark.parametrize("mode", ["strings", "patterns"])
def test_every_manifest_source_keeps_its_id(monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    if mode == "strings":
        monkeypatch.setattr(sources, "_READ_BY_STRINGS", [-(10**9)])
        monkeypatch.setattr(sources._WHEEL, "_compiled", None)
    else:
        monkeypatch.setattr(sources, "_READ_BY_STRINGS", [sources._STRING_READS])
    manifests = load_manifests([])
    seen = 0
    for name in ("features", "checks", "sources"):
        for src in _inline_sources(getattr(manifests, name, {})):
            assert sources.derived_id(src) == _reference_id(src), src
            seen += 1
    rng = random.Random(24)
    for title, url in zip(_titles(25, 4000), _urls(25, 4000), strict=True):
        src = {"title": title, "url": url} if rng.random() < 0.7 else {"url": url}
        assert sources.derived_id(src) == _reference_id(src), src
    assert seen > 100, seen
    assert (sources._READ_BY_STRINGS[0] < 0) == (mode == "strings")


def test_the_patterns_take_over_after_the_string_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "_READ_BY_STRINGS", [0])
    monkeypatch.setattr(sources._WHEEL, "_compiled", None)
    reads: list[bool] = []
    real = sources._by_patterns

    def by_patterns() -> bool:
        reads.append(real())
        return reads[-1]

    monkeypatch.setattr(sources, "_by_patterns", by_patterns)
    src = {"title": "sglang 0.5.9 wheel, sglang/srt/x.py", "url": None}
    for _ in range(sources._STRING_READS + 3):
        assert sources.derived_id(src) == "sglang-0.5.9:x.py"
    assert reads == [False] * sources._STRING_READS + [True] * 3
    monkeypatch.setattr(sources, "_READ_BY_STRINGS", [0])
    sources._WHEEL.pattern  # noqa: B018 - compiled (as commands/audit.py's compile_all does)
    reads.clear()
    sources.derived_id(src)
    assert reads == [True]
