"""facts.versions.newer_than_all (derive's "is the installed release newer than every one the data knows"),
read without packaging for plain versions, against the straightforward reading with packaging.version on
generated versions: the same answer for every one."""

from __future__ import annotations

import random
import subprocess
import sys

from packaging.version import InvalidVersion, Version

from stackcheck.facts.versions import newer_than_all


def reference(version: str, known: list[str]) -> bool:
    """The reading before the fast path (derive.installed.newer_than_data), spelt out with packaging."""

    def parse(text: str) -> Version | None:
        try:
            return Version(text)
        except InvalidVersion:
            return None

    versions = [v for v in (parse(t) for t in known) if v is not None]
    mine = parse(version)
    installed = Version(mine.public) if mine is not None else None
    return bool(versions) and installed is not None and installed > max(versions)


def generated(rng: random.Random) -> str:
    release = ".".join(str(rng.choice([0, 0, 1, 2, 9, 10, 11])) for _ in range(rng.randint(1, 4)))
    text = release
    if rng.random() < 0.3:
        text += f"{rng.choice(['a', 'b', 'rc'])}{rng.randint(0, 3)}"
    if rng.random() < 0.25:
        text += f".post{rng.randint(0, 2)}"
    if rng.random() < 0.25:
        text += f".dev{rng.randint(0, 2)}"
    if rng.random() < 0.2:
        text += "+" + rng.choice(["cu130", "cu128", "0", "7", "abc.1", "rocm6.4"])
    if rng.random() < 0.05:  # not in the plain form: packaging decides (or says it is no version)
        text = rng.choice(["v" + text, text.upper(), "1!" + text, text + "-1", "", "nope", text + "alpha"])
    return text


def test_newer_than_all_agrees_with_packaging_on_generated_versions() -> None:
    rng = random.Random(21)
    for _ in range(4000):
        known = [generated(rng) for _ in range(rng.randint(0, 6))]
        version = generated(rng) if rng.random() < 0.7 else rng.choice(known or ["2.11.0"])
        assert newer_than_all(version, known) == reference(version, known), (version, known)


def test_edge_cases_of_the_order() -> None:
    cases = [
        ("2.11.0", ["2.11"], False),  # trailing zeros
        ("2.11.0.post1", ["2.11.0"], True),
        ("2.11.0", ["2.11.0rc1"], True),
        ("2.11.0.dev1", ["2.11.0a1"], False),  # a dev release of no pre-release comes before every pre-release
        ("2.11.0rc1", ["2.11.0b9"], True),
        ("2.11.0rc1.dev0", ["2.11.0rc1"], False),
        ("2.11.0+cu130", ["2.11.0"], False),  # the installed version's local tag is dropped
        ("2.11.1+cu130", ["2.11.0"], True),
        ("2.12.0", ["2.11.0+cu130"], True),  # a known local tag: packaging decides
        ("2.11.0", ["2.11.0+cu130"], False),
        ("2.11.0", [], False),
        ("nope", ["1.0"], False),
    ]
    for version, known, expected in cases:
        assert newer_than_all(version, known) is expected, (version, known)
        assert reference(version, known) is expected, (version, known)


def test_plain_versions_do_not_import_packaging() -> None:
    code = (
        "import sys; from stackcheck.facts.versions import newer_than_all; "
        "assert newer_than_all('2.11.1+cu130', ['2.10.0', '2.11.0']); "
        "assert not newer_than_all('2.11.0', ['2.11.0', '2.12.0rc1']); "
        "print('packaging.version' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_quick_reading_is_the_patterns_reading() -> None:
    from stackcheck.facts.versions import _plain, _quick_plain

    rng = random.Random(9)
    texts = [generated(rng) for _ in range(4000)]
    texts += ["2.11.0", "2.11.0+cu130", "01.2", "1..2", "1.", ".1", "1+", "1+a..b", "1+00", "1+0", "1+0a", "1+A",
              "1+a_b", "1²", "١.٢", "1+é", "2" * 201, "1.2.3+ubuntu22.04"]  # fmt: skip
    quick = 0
    for text in texts:
        got = _quick_plain(text)
        if got is not None:
            quick += 1
            assert got == _plain(text), text
    assert quick > 1000  # the quick reading answers most of them
