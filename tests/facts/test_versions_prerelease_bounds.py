"""ipre: a pre-release or dev build of a release V is judged by a version range only where the range gives V and the
final releases just below V the same answer (issue 16: 5.13.0rc1 against `<5.13.0`, 0.3.7rc1 against `>=0.3.7`,
0.3.12.dev0 were false passes: PEP 440 puts them outside both `<V` and `>=V`, so a rule split at V judged them by
neither side, and their code is V's or the release's before V).

The generated cases compare stackcheck.facts.versions.version_in_settled with a reference written here on
packaging's Version and SpecifierSet: the final release below V is R.post(N-1) (R for N = 0) for V = R.postN, and
for V = R the release with its last non-zero part lowered and 10**6 appended (every number generated is below 40)."""

from __future__ import annotations

import itertools
import random

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import straddled_final, version_in, version_in_settled
from stackcheck.verdicts.context import Context, Missing
from stackcheck.verdicts.engine import _compare, predicate_holds

MANIFESTS = load_manifests([])


def _final(v: Version) -> Version | None:
    if not (v.pre is not None or v.dev is not None):
        return None
    # (a post release of a pre-release, 1.0rc1.post1, lies below 1.0 as its rc1 does: its final is 1.0)
    text = ".".join(map(str, v.release)) + (f".post{v.post}" if v.post is not None and v.pre is None else "")
    return Version((f"{v.epoch}!" if v.epoch else "") + text)


def _below(f: Version) -> Version | None:
    base = ".".join(map(str, f.release))
    if f.post is not None:
        return Version(base if f.post == 0 else f"{base}.post{f.post - 1}")
    release = list(f.release)
    while release and release[-1] == 0:
        release.pop()
    if not release:
        return None
    release[-1] -= 1
    return Version(".".join(map(str, [*release, 10**6])))


def _reference(version: str, spec: str) -> bool | None:
    v, s = Version(version), SpecifierSet(spec)
    answer = s.contains(v, prereleases=True)
    f = _final(v)
    if f is None:
        return answer
    for clause in s:
        target = clause.version[:-2] if clause.version.endswith(".*") else clause.version
        if clause.operator != "===" and _final(Version(target)) == f:
            return answer  # the range names a pre-release of V itself: written about them
    b = _below(f)
    other = answer if b is None else s.contains(b, prereleases=True)
    return answer if s.contains(f, prereleases=True) == other else None


def _versions(rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        release = ".".join(str(rng.choice([0, 0, 1, 2, 3, 9, 12, 13])) for _ in range(rng.randint(1, 3)))
        pre = rng.choice(["", "", "a1", "b2", "rc0", "rc1"])
        post = rng.choice(["", "", ".post0", ".post1", ".post2"])
        dev = rng.choice(["", "", ".dev0", ".dev2"])
        out.append(release + pre + post + dev)
    return out


def _specs(rng: random.Random, n: int) -> list[str]:
    ops = ["<", "<=", ">", ">=", "==", "!=", "~="]
    out = []
    for target in _versions(rng, n):
        op = rng.choice(ops)
        if op == "~=" and "." not in target.split("a")[0].split("b")[0].split("rc")[0].split(".post")[0]:
            target = "1." + target
        if op in ("==", "!=") and rng.random() < 0.2:
            target = ".".join(target.split(".")[:2]).split("a")[0].split("b")[0].split("rc")[0] + ".*"
        out.append(f"{op}{target}")
    return out + [f"{a},{b}" for a, b in zip(out[::2], out[1::2], strict=False)]


def test_generated_versions_and_ranges_agree_with_the_reference() -> None:
    rng = random.Random(16)
    versions = [*_versions(rng, 160), "5.13.0rc1", "0.3.7rc1", "0.3.12.dev0", "0.5.9.post1.dev2", "0.dev0"]
    specs = [*_specs(rng, 120), "<5.13.0", ">=0.3.7", "<0.5.24", "<0.5.9.post1", "==5.12.*", "!=5.13.0"]
    finals = sorted({str(f) for v in versions if (f := _final(Version(v))) is not None})[:25]
    specs += [f"{op}{f}" for f in finals for op in ("<", "<=", ">", ">=", "==", "!=")]  # bounds at a generated V
    straddled = 0
    for version, spec in itertools.product(versions, specs):
        expected = _reference(version, spec)
        assert version_in_settled(version, spec) is expected, (version, spec)
        straddled += expected is None
    assert straddled > 300  # the generated pairs reach the unknown answer often, not once


@pytest.mark.parametrize(
    ("version", "spec", "final"),
    [
        ("5.13.0rc1", "<5.13.0", "5.13.0"),  # transformers: 5.12.1's code or 5.13.0's
        ("5.13.0.dev0", "<5.13.0", "5.13.0"),
        ("0.3.7rc1", ">=0.3.7", "0.3.7"),  # Mooncake
        ("0.3.12.dev0", ">=0.3.12", "0.3.12"),
        ("0.5.24rc0", "<0.5.24", "0.5.24"),  # SGLang
        ("0.5.9.post1.dev2", "<0.5.9.post1", "0.5.9.post1"),  # its final is 0.5.9.post1, the one below 0.5.9.post0
        ("0.5.9.post1.dev2", ">=0.5.9.post1", "0.5.9.post1"),
        ("5.13.0rc1", "==5.12.*", "5.13.0"),
        ("5.13.0rc1", "!=5.13.0", "5.13.0"),
        ("0.7.1rc1", ">=0.7.1", "0.7.1"),  # nixl's forwarding release
        ("0.7.1rc1.post1", ">=0.7.1", "0.7.1"),  # irev66: a post release of rc1 is below 0.7.1 too (was 0.7.1.post1)
        ("0.7.1rc1.post1", "<0.7.1", "0.7.1"),
        ("5.13.0rc1.post1.dev0", "<5.13.0", "5.13.0"),
    ],
)
def test_a_pre_release_at_a_bound_is_not_known(version: str, spec: str, final: str) -> None:
    assert version_in(version, spec) is not None
    assert straddled_final(version, spec) == final
    assert version_in_settled(version, spec) is None


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("5.13.0rc1", ">=4.56.0", True),  # 5.12.x and 5.13.0 both hold
        ("5.13.0rc1", "<5.14", True),
        ("5.13.0rc1", ">=5.14", False),
        ("0.5.9.post1.dev2", ">=0.5.9", True),  # 0.5.9.post0 and 0.5.9.post1 both hold
        ("0.5.9.post1.dev2", "<0.5.9", False),
        ("0.4.0rc3", "<0.4.0rc4", True),  # checks.json's flashinfer edge names 0.4.0's pre-releases itself
        ("0.4.0rc4", "<0.4.0rc4", False),
        ("0.5.24rc0", ">=0.5.24.dev0", True),  # and SGLang's 0.5.24.dev0
        ("5.13.0rc1", "==5.13.0rc1", True),
        ("5.13.0", "<5.13.0", False),  # finals and post releases as version_in judges them
        ("5.12.1.post1", "<5.13.0", True),
        ("5.13.0rc1+g12ab", "<5.14", True),
    ],
)
def test_a_pre_release_the_bound_does_not_split_is_judged(version: str, spec: str, expected: bool) -> None:
    assert straddled_final(version, spec) is None
    assert version_in_settled(version, spec) is expected


def test_unreadable_input_stays_none() -> None:
    assert version_in_settled("not a version", "<1") is None
    assert version_in_settled("1.0rc1", "<<1") is None
    assert straddled_final("1.0rc1", "<<1") is None


def test_the_engine_version_operator_and_its_lean_path_say_unknown() -> None:
    with pytest.raises(Missing) as err:
        _compare("version", "5.13.0rc1", "<5.13.0")
    assert "5.13.0" in err.value.reason and "pre-release" in err.value.reason
    assert _compare("version", "5.13.0rc1", ">=4.56.0") is True
    facts = {"packages": {"transformers": {"installed": True, "version": "5.13.0rc1"}}}
    ctx = Context(facts=facts, manifests=MANIFESTS)  # type: ignore[arg-type]
    pred = {"fact": "pkg.transformers.version", "op": "version", "value": "<5.13.0"}
    assert predicate_holds(pred, ctx, None) is None
    assert predicate_holds({**pred, "value": "<5.14"}, ctx, None) is True
